/**
 * Secrets in a real `navi serve` process:
 * - once settings are read they are gone from its environment, so a user tool that starts a
 *   program with the default environment (child_process, no `env` option) passes none on;
 * - a tool that prints a secret in plain, base64 (three alignments, base64url) and
 *   URL-encoded forms, and logs it, leaves no trace of it in the request to the LLM, the
 *   WebSocket events, the stored transcript (REST and the SQLite files) or the log.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { spawnNavi } from '../support/navi-process.js';
import { EventClient } from '../support/ws-client.js';

const KEY = 'sk-proj/Planted+Key 0123=zz';
const TOKEN = 'navi-serve-token-0123456';
const GITHUB = 'ghp_planted_for_children_0001';
const HIDDEN = '[secret hidden: OPENAI_API_KEY]';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** What the echo tool prints: the key itself and five encodings of it. */
const FORMS = [
  KEY,
  b64(KEY),
  b64(`x${KEY}tail`),
  b64url(`xy${KEY}tail`),
  encodeURIComponent(KEY),
  new URLSearchParams({ key: KEY }).toString(),
];

/**
 * Pieces that exist only where the key was printed: the key, its percent-encoded forms, and
 * twelve characters from inside each base64 form (past the bytes before the key).
 */
const TRACES = [
  KEY,
  'Planted+Key',
  encodeURIComponent(KEY),
  new URLSearchParams({ key: KEY }).toString().slice(4),
  b64(KEY).slice(0, 12),
  b64(`x${KEY}tail`).slice(4, 16),
  b64url(`xy${KEY}tail`).slice(4, 16),
];

const SPAWN_ENV_TOOL = `
import { execFileSync } from 'node:child_process';
export const name = 'spawn_env';
export const description = 'Runs env with the environment Navi would give any program.';
export const parameters = { type: 'object', properties: {} };
export async function execute() {
  const out = execFileSync('env', { encoding: 'utf8' });
  const names = out.split('\\n').filter((l) => l.includes('=')).map((l) => l.slice(0, l.indexOf('=')));
  return 'names: ' + names.sort().join(',');
}
`;

const ECHO_TOOL = `
const KEY = ${JSON.stringify(KEY)};
export const name = 'echo_secret';
export const description = 'Prints a secret in several encodings.';
export const parameters = { type: 'object', properties: {} };
export async function execute(params, ctx) {
  ctx.log.warn({ leaked: KEY, encoded: ${JSON.stringify(FORMS[2])} }, 'user tool logs ' + KEY);
  return {
    success: true,
    output: ${JSON.stringify(FORMS.join('\n'))},
    metadata: { structured_content: { token: KEY, url: 'https://x.test/?k=' + encodeURIComponent(KEY) } },
  };
}
`;

function tracesIn(text: string): string[] {
  return TRACES.filter((t) => text.includes(t));
}

describe('secrets in a navi serve process', () => {
  let fake: FakeLlm;
  let child: ChildProcess;
  let log = '';
  let url = '';
  const dir = tempDir('navi-secrets-');
  const authorization = `Bearer ${TOKEN}`;

  beforeAll(async () => {
    fake = await startFakeLlm();
    const port = Number(new URL(await closedPortUrl()).port);
    url = `http://127.0.0.1:${port}`;
    mkdirSync(join(dir, 'tools'));
    writeFileSync(join(dir, 'tools', 'spawn_env.js'), SPAWN_ENV_TOOL);
    writeFileSync(join(dir, 'tools', 'echo_secret.js'), ECHO_TOOL);
    writeFileSync(join(dir, 'tools', 'enabled.json'), '["spawn_env", "echo_secret"]');
    child = await spawnNavi({
      dir,
      port,
      ollamaUrl: fake.ollamaUrl,
      stdio: ['ignore', 'pipe', 'pipe'],
      extra: {
        OPENAI_API_KEY: KEY,
        NAVI_API_TOKEN: TOKEN,
        GITHUB_TOKEN: GITHUB,
        NAVI_TEST_VISIBLE: 'yes',
        LOG_LEVEL: 'INFO',
      },
    });
    const collect = (d: Buffer) => {
      log += d.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await fake?.close();
  });

  async function newSession(): Promise<string> {
    const res = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: '{}',
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { session_id: string }).session_id;
  }

  async function runTool(id: string, tool: string): Promise<{ client: EventClient; events: ServerEvent[] }> {
    fake.enqueue({ toolCalls: [{ name: tool, arguments: {} }] }, { text: 'Done.' });
    const ws = `ws://127.0.0.1:${new URL(url).port}/ws/sessions/${id}`;
    const client = await EventClient.connect(ws, { headers: { authorization } });
    client.send({ type: 'message', content: `Run ${tool}.` });
    const events = await client.waitForRunEnd();
    await client.close();
    return { client, events };
  }

  it('gives programs a user tool starts no secret variable', async () => {
    const { events } = await runTool(await newSession(), 'spawn_env');
    const call = events.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({ tool: 'spawn_env', success: true });
    const names = (call as Extract<ServerEvent, { type: 'tool_call' }>).result
      .replace('names: ', '')
      .split(',');
    expect(names).toContain('NAVI_TEST_VISIBLE');
    expect(names).toContain('PATH');
    expect(names).not.toContain('OPENAI_API_KEY');
    expect(names).not.toContain('NAVI_API_TOKEN');
    expect(names).not.toContain('GITHUB_TOKEN');
  });

  it('masks every form of a printed secret in the LLM request, events, transcript and log', async () => {
    const id = await newSession();
    fake.requests.length = 0;
    const { client, events } = await runTool(id, 'echo_secret');
    const call = events.find((e) => e.type === 'tool_call') as Extract<ServerEvent, { type: 'tool_call' }>;
    expect(call).toMatchObject({ tool: 'echo_secret', success: true });
    // Six printed forms and two in the metadata (a module tool's object result becomes its JSON).
    expect(call.result.split(HIDDEN).length - 1).toBe(FORMS.length + 2);
    expect(tracesIn(call.result)).toEqual([]);

    // What the LLM received with the tool result.
    const sent = JSON.stringify(fake.requests.map((r) => r.body));
    expect(sent).toContain(HIDDEN);
    expect(tracesIn(sent)).toEqual([]);

    // What the client received.
    const frames = client.frames.join('\n');
    expect(frames).toContain(HIDDEN);
    expect(tracesIn(frames)).toEqual([]);

    // What was stored.
    const transcript = await (await fetch(`${url}/sessions/${id}`, { headers: { authorization } })).text();
    expect(transcript).toContain(HIDDEN);
    expect(tracesIn(transcript)).toEqual([]);
    for (const file of ['navi.db', 'navi.db-wal']) {
      const path = join(dir, file);
      if (existsSync(path)) expect(tracesIn(readFileSync(path).toString('latin1')), file).toEqual([]);
    }

    // What was logged: the tool's own ctx.log line arrives masked.
    await waitUntil(() => log.includes('user tool logs'));
    expect(log).toContain(`user tool logs ${HIDDEN}`);
    expect(tracesIn(log)).toEqual([]);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(GITHUB);
  });
});

/** Polls `test` every 50 ms for up to 10 s; throws when it never holds. */
async function waitUntil(test: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
