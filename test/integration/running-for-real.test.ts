/**
 * What docs/running.md tells people to set, tried against a real Navi. The llama-server and LM
 * Studio settings are read from the page itself and pointed at a fake OpenAI-compatible server
 * on a random port (the documented port swapped for it): a chat must reach /v1/chat/completions
 * with the documented model and no Authorization header. And the proxy section's claims about
 * what a proxy must pass on: the Host header, else NAVI_ALLOWED_ORIGINS, and the token.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi } from '../support/navi.js';
import { chatRequests, postMessage } from '../support/rest.js';

const page = readFileSync(join(repoRoot, 'docs', 'running.md'), 'utf8');

/** The KEY=value lines of the first code block under the heading `heading`. */
function documentedSettings(heading: string): Record<string, string> {
  const section = page.slice(page.indexOf(`### ${heading}`));
  const blocks = [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const block = blocks.find((b) => b.includes('DEFAULT_LLM_BACKEND=')) ?? '';
  return Object.fromEntries(
    block
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('local models without Ollama, with the settings docs/running.md gives', () => {
  let fake: FakeLlm;
  let navi: NaviHandle | undefined;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['qwen2.5-7b', 'qwen2.5-7b-instruct'] });
  });
  afterEach(async () => {
    await navi?.close();
    navi = undefined;
  });
  afterAll(async () => {
    await fake?.close();
  });

  for (const [heading, port] of [
    ['llama-server (llama.cpp)', 8080],
    ['LM Studio', 1234],
  ] as const) {
    it(`${heading}: the openai backend at 127.0.0.1:${port}/v1, no key`, async () => {
      const documented = documentedSettings(heading);
      expect(documented).toEqual({
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_MODEL: expect.any(String),
      });
      const fakePort = new URL(fake.url).port;
      navi = await startNavi({
        settings: {
          ...documented,
          OPENAI_BASE_URL: (documented.OPENAI_BASE_URL ?? '').replace(`:${port}/`, `:${fakePort}/`),
        },
      });
      const before = chatRequests(fake).length;
      const session = await navi.createSession();
      // Every chat call of the run (a profile may plan first) gets this answer.
      fake.setDefault({ text: `Hello from ${heading}.` });
      const res = await postMessage(navi, session, 'hello');
      expect(res.status, await res.clone().text()).toBe(200);
      expect(JSON.stringify(await res.json())).toContain(`Hello from ${heading}.`);
      const chats = chatRequests(fake).slice(before);
      expect(chats.length).toBeGreaterThan(0);
      for (const chat of chats) {
        expect(chat.path).toBe('/v1/chat/completions');
        expect(chat.body.model).toBe(documented.OPENAI_MODEL);
        expect(chat.headers.authorization).toBeUndefined();
      }
    }, 60_000);
  }
});

/** Opens a session socket with the headers a proxy would send; resolves how it ended or began. */
function openSocket(
  navi: NaviHandle,
  sessionId: string,
  headers: Record<string, string>,
): Promise<{ opened: WebSocket } | { closed: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(navi.wsUrl(sessionId), { headers });
    let settled = false;
    socket.once('close', (code, reason) => {
      if (!settled) resolve({ closed: code, reason: reason.toString() });
      settled = true;
    });
    socket.once('error', reject);
    // A refused socket is closed at once, before any event; an accepted one sends none until
    // asked, so a message decides: its events mean the socket was accepted.
    socket.once('open', () => {
      socket.send(JSON.stringify({ type: 'message', content: 'through the proxy' }));
    });
    socket.on('message', () => {
      if (settled) return;
      settled = true;
      resolve({ opened: socket });
    });
  });
}

describe('behind a reverse proxy, as docs/running.md describes it', () => {
  const token = 'a-long-random-token-for-the-proxy-test';
  let fake: FakeLlm;
  const started: NaviHandle[] = [];
  beforeAll(async () => {
    fake = await startFakeLlm({ defaultReply: { text: 'ok' } });
  });
  afterAll(async () => {
    for (const navi of started) await navi.close();
    await fake?.close();
  });
  const start = async (settings: Record<string, string>) => {
    const navi = await startNavi({
      settings: { OLLAMA_HOST: fake.ollamaUrl, OLLAMA_DEFAULT_MODEL: 'test-model', ...settings },
    });
    started.push(navi);
    const res = await fetch(`${navi.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{}',
    });
    const sessionId = ((await res.json()) as { session_id: string }).session_id;
    return { navi, sessionId };
  };
  const browser = { Origin: 'https://navi.example.com', Authorization: `Bearer ${token}` };

  it('with the token and the Host passed on, the WebSocket works', async () => {
    const { navi, sessionId } = await start({ NAVI_API_TOKEN: token });
    const result = await openSocket(navi, sessionId, { ...browser, Host: 'navi.example.com' });
    expect('opened' in result).toBe(true);
    if ('opened' in result) result.opened.close();
  }, 60_000);

  it('with Host rewritten to Navi’s own address, only NAVI_ALLOWED_ORIGINS lets the page in', async () => {
    const plain = await start({ NAVI_API_TOKEN: token });
    const host = `127.0.0.1:${plain.navi.port}`;
    expect(await openSocket(plain.navi, plain.sessionId, { ...browser, Host: host })).toEqual({
      closed: 4403,
      reason: 'origin not allowed',
    });
    const allowed = await start({ NAVI_API_TOKEN: token, NAVI_ALLOWED_ORIGINS: 'https://navi.example.com' });
    const result = await openSocket(allowed.navi, allowed.sessionId, {
      ...browser,
      Host: `127.0.0.1:${allowed.navi.port}`,
    });
    expect('opened' in result).toBe(true);
    if ('opened' in result) result.opened.close();
  }, 60_000);

  it('without a token, a proxied host name is refused rather than taken for this machine', async () => {
    const { navi, sessionId } = await start({});
    expect(
      await openSocket(navi, sessionId, { Origin: 'https://navi.example.com', Host: 'navi.example.com' }),
    ).toEqual({ closed: 4403, reason: 'host not allowed' });
  }, 60_000);
});
