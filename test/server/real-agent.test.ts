/**
 * The server with the REAL agent, stores and Ollama backend against the scripted fake LLM
 * server: what a user sees over WebSocket and REST when a model streams, is stopped, or is
 * unreachable.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessionDetail } from '../../src/protocol/rest.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { EventClient } from '../support/ws-client.js';
import { startServer, type TestServer } from './harness.js';
import { realServices } from './real-services.js';

let fake: FakeLlm;
let server: TestServer;

beforeAll(async () => {
  fake = await startFakeLlm();
  const dir = mkdtempSync(join(tmpdir(), 'navi-real-'));
  server = await startServer(await realServices(dir, { OLLAMA_HOST: fake.ollamaUrl }), dir);
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

describe('real agent (createServices)', () => {
  it('streams an answer over the WebSocket, coalesced, and saves it', async () => {
    const text = 'Hello there, this is a streamed answer from the fake model. '.repeat(10);
    fake.enqueue({ text, chunkSize: 1 });
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'hi' });
    const events = await client.waitForRunEnd();
    expect(events[0]).toMatchObject({ type: 'stream_start', trigger: 'user', seq: 1 });
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: text });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const deltas = events.filter((e) => e.type === 'stream_delta');
    expect(deltas.map((e) => (e.type === 'stream_delta' ? e.delta : '')).join('')).toBe(text);
    expect(deltas.length).toBeLessThan(text.length);
    const detail = (await server.app.inject({ method: 'GET', url: `/sessions/${id}` })).json<SessionDetail>();
    expect(detail.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    await client.close();
  });

  it('a late joiner receives the run from seq 1 with no gap or duplicate', async () => {
    fake.enqueue({ text: 'abcdefghijklmnopqrstuvwxyz'.repeat(4), chunkSize: 2, delayMs: 5 });
    const id = await server.createSession();
    const first = await EventClient.connect(server.wsUrl(id));
    first.send({ type: 'message', content: 'alphabet please' });
    await first.waitFor((e) => e.type === 'stream_delta');
    const late = await EventClient.connect(server.wsUrl(id));
    const [a, b] = await Promise.all([first.waitForRunEnd(), late.waitForRunEnd()]);
    expect(b).toEqual(a);
    expect(b.map((e) => e.seq)).toEqual(b.map((_, i) => i + 1));
    await Promise.all([first.close(), late.close()]);
  });

  it('answers over REST and refuses a second message while the run is active', async () => {
    fake.enqueue({ text: 'slow answer', chunkSize: 1, delayMs: 20 });
    const id = await server.createSession();
    const pending = server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'one' },
    });
    await fake.waitForRequests(1);
    const busy = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'two' },
    });
    expect(busy.statusCode).toBe(409);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ content: 'slow answer', stopped: false, tool_calls: [] });
  });

  it('stop mid-stream ends with stream_stopped and keeps the partial answer', async () => {
    fake.enqueue({ text: 'partial ', stallAfterChunks: 1 });
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'go on forever' });
    await client.waitFor((e) => e.type === 'stream_delta');
    const stop = await server.app.inject({ method: 'POST', url: `/sessions/${id}/stop` });
    expect(stop.json()).toEqual({ stopped: true });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_stopped' });
    await fake.waitForAborted(1);
    await client.close();
  });
});

describe('real agent with no reachable LLM', () => {
  let offline: TestServer;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'navi-real-'));
    offline = await startServer(await realServices(dir, { OLLAMA_HOST: await closedPortUrl() }), dir);
  });
  afterAll(async () => offline?.close());

  it('ends the run with a clear non-recoverable error; REST answers 502, not 500', async () => {
    const id = await offline.createSession();
    const client = await EventClient.connect(offline.wsUrl(id));
    client.send({ type: 'message', content: 'anyone?' });
    const events = await client.waitForRunEnd();
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'error', recoverable: false });
    expect(last?.type === 'error' ? last.message : '').toMatch(/ollama/i);
    const res = await offline.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'x' },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'RUN_FAILED', error: expect.stringMatching(/ollama/i) });
    await client.close();
  });
});
