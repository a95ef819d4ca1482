/** Issue 2: LLM failures and stops leave a healthy server and a consistent session. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([plainProfile]);

interface Detail {
  messages: { role: string; content: string | null; interrupted?: true; stopped?: true }[];
}

async function detail(navi: NaviHandle, id: string): Promise<Detail> {
  return (await (await fetch(`${navi.url}/sessions/${id}`)).json()) as Detail;
}

describe('when the LLM fails', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: { OLLAMA_HOST: fake.ollamaUrl, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it('answering HTTP 500 gives an error naming the backend, and the next message works', async () => {
    const id = await navi.createSession();
    fake.enqueue({ httpError: { status: 500, body: 'model crashed' } });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'first' });
    const events = await client.waitForRunEnd();
    const error = events.at(-1);
    expect(error).toMatchObject({ type: 'error', recoverable: false });
    expect(error && 'message' in error ? error.message : '').toMatch(/500/);
    expect(error && 'message' in error ? error.message : '').toContain(fake.ollamaUrl);

    fake.enqueue({ text: 'Recovered.' });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'second' });
    const next = await client.waitForRunEnd(mark);
    expect(next.at(-1)).toMatchObject({ type: 'stream_end', content: 'Recovered.' });
    // The failed turn stays in the history, as a display-only error record after its message.
    expect((await detail(navi, id)).messages.map((m) => m.content)).toEqual([
      'first',
      error && 'message' in error ? error.message : '',
      'second',
      'Recovered.',
    ]);
    await client.close();
  });

  it('cutting its stream half-way saves the partial answer marked interrupted', async () => {
    const id = await navi.createSession();
    fake.enqueue({
      text: 'This answer will be cut somewhere in the middle of it.',
      chunkSize: 5,
      cutAfterChunks: 3,
    });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'tell me' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'error', recoverable: false });
    expect((events.at(-1) as { message: string }).message).toMatch(/ended|cut|early/i);
    const streamed = events.flatMap((e) => (e.type === 'stream_delta' ? [e.delta] : [])).join('');
    expect(streamed.length).toBeGreaterThan(0);
    expect('This answer will be cut somewhere in the middle of it.'.startsWith(streamed)).toBe(true);
    expect(streamed.length).toBeLessThan(30);
    const [saved, failure] = (await detail(navi, id)).messages.slice(-2);
    expect(saved).toMatchObject({ role: 'assistant', content: streamed, interrupted: true });
    expect(failure).toMatchObject({ role: 'system', kind: 'error', error: { code: 'LLM_MALFORMED' } });
    await client.close();
  });

  it('stopping mid-stream aborts the LLM request and saves what was said', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'word '.repeat(400), chunkSize: 5, delayMs: 20 });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'talk a lot' });
    await client.waitFor((e) => e.type === 'stream_delta');
    const stop = (await (await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' })).json()) as {
      stopped: boolean;
    };
    expect(stop.stopped).toBe(true);
    const events = await client.waitForRunEnd();
    const end = events.at(-1) as { type: string; content: string };
    expect(end.type).toBe('stream_stopped');
    expect(end.content.length).toBeGreaterThan(0);
    expect(end.content.length).toBeLessThan('word '.repeat(400).length);
    await fake.waitForAborted(1);
    const saved = (await detail(navi, id)).messages.at(-1);
    expect(saved).toMatchObject({
      role: 'assistant',
      content: end.content,
      interrupted: true,
      stopped: true,
    });
    const again = (await (await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' })).json()) as {
      stopped: boolean;
    };
    expect(again.stopped).toBe(false);
    await client.close();
  });

  it('refuses a second message during a run with a recoverable error, and the run goes on', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'slow answer '.repeat(20), chunkSize: 4, delayMs: 15 });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'first' });
    await client.waitFor((e) => e.type === 'stream_delta');
    client.send({ type: 'message', content: 'second' });
    const refusal = await client.waitFor((e) => e.type === 'error');
    expect(refusal).toMatchObject({ recoverable: true });
    const rest = await fetch(`${navi.url}/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'third' }),
    });
    expect(rest.status).toBe(409);
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'slow answer '.repeat(20) });
    expect((await detail(navi, id)).messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'first',
    ]);
    await client.close();
  });

  it('a stream that goes silent ends with a timeout error', async () => {
    const quick = await startNavi({
      settings: {
        OLLAMA_HOST: fake.ollamaUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        LLM_IDLE_TIMEOUT_MS: '300',
      },
    });
    try {
      const id = await quick.createSession();
      fake.enqueue({ text: 'I will go quiet now', chunkSize: 4, stallAfterChunks: 2 });
      const client = await EventClient.connect(quick.wsUrl(id));
      client.send({ type: 'message', content: 'hello' });
      const events = await client.waitForRunEnd();
      expect(events.at(-1)).toMatchObject({ type: 'error', recoverable: false });
      expect((events.at(-1) as { message: string }).message).toMatch(
        /sent nothing more for 300 ms.*LLM_IDLE_TIMEOUT_MS/,
      );
      await client.close();
    } finally {
      await quick.close();
    }
  });
});

describe('when no LLM is reachable', () => {
  it('a message gets an error that says which backend and URL were tried and how to configure another', async () => {
    const url = await closedPortUrl();
    const navi = await startNavi({
      settings: { OLLAMA_HOST: url, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    });
    try {
      const health = await fetch(`${navi.url}/health`);
      expect(await health.json()).toEqual({ status: 'ok' });
      const id = await navi.createSession();
      const client = await EventClient.connect(navi.wsUrl(id));
      client.send({ type: 'message', content: 'anyone there?' });
      const events = await client.waitForRunEnd();
      const error = events.at(-1) as { type: string; message: string; recoverable: boolean };
      expect(error.type).toBe('error');
      expect(error.message).toContain(url);
      expect(error.message).toMatch(/ollama/i);
      expect(error.message).toMatch(/OLLAMA_HOST|DEFAULT_LLM_BACKEND/);
      expect(error.message).not.toMatch(/\n\s+at /); // no stack trace
      const rest = await fetch(`${navi.url}/sessions/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'again' }),
      });
      expect(rest.status).toBe(502);
      expect(((await rest.json()) as { error: string }).error).toContain(url);
      await client.close();
    } finally {
      await navi.close();
    }
  });
});
