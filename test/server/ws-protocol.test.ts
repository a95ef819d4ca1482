/**
 * WebSocket access checks and client-frame handling. The agent here is scripted (see
 * scripted-agent.ts): these cases are about the socket, not the agent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientOptions } from 'ws';
import { EventClient } from '../support/ws-client.js';
import { startScripted, type TestServer } from './harness.js';
import { multipartBody } from './multipart.js';
import { gate, type ScriptedAgent, scriptedAgent, simpleReply } from './scripted-agent.js';

const TOKEN = 'ws-token';
const MAX_FRAME = 64 * 1024;

async function closedWith(url: string, options: ClientOptions = {}) {
  const client = await EventClient.connect(url, options);
  await new Promise<void>((resolve) => {
    if (client.closeCode !== undefined) return resolve();
    client.socket.once('close', () => resolve());
  });
  return client;
}

describe('access checks close the socket before anything happens', () => {
  let server: TestServer;
  let agent: ScriptedAgent;
  let id: string;
  beforeAll(async () => {
    agent = scriptedAgent();
    server = await startScripted({
      agent,
      settings: { NAVI_API_TOKEN: TOKEN, NAVI_ALLOWED_ORIGINS: 'https://friend.example' },
    });
    id = await server.createSession();
  });
  afterAll(async () => server.close());

  const auth = { headers: { authorization: `Bearer ${TOKEN}` } };

  it('4401 without a token, with a wrong one, or with the token in the URL', async () => {
    for (const [url, options] of [
      [server.wsUrl(id), {}],
      [server.wsUrl(id), { headers: { authorization: 'Bearer nope' } }],
      [`${server.wsUrl(id)}?token=${TOKEN}`, {}],
    ] as const) {
      const client = await closedWith(url, options);
      expect(client.closeCode).toBe(4401);
      expect(client.events).toEqual([]);
    }
  });

  it('4004 for an unknown or malformed session id (after the token check)', async () => {
    for (const sid of [randomUUID(), 'not-a-uuid']) {
      const client = await closedWith(server.wsUrl(sid), auth);
      expect(client.closeCode).toBe(4004);
      expect(client.events).toEqual([]);
    }
  });

  it('4403 for a foreign browser origin; same origin, allowed origins and no origin pass', async () => {
    const foreign = await closedWith(server.wsUrl(id), { ...auth, origin: 'https://evil.example' });
    expect(foreign.closeCode).toBe(4403);
    const host = new URL(server.url).host;
    for (const origin of [`http://${host}`, 'https://friend.example', undefined]) {
      const client = await EventClient.connect(server.wsUrl(id), origin ? { ...auth, origin } : auth);
      expect(client.closeCode, origin).toBeUndefined();
      await client.close();
    }
  });

  it('accepts the login cookie', async () => {
    const login = await server.app.inject({ method: 'POST', url: '/auth/login', payload: { token: TOKEN } });
    const cookie = String(login.headers['set-cookie']).split(';')[0] ?? '';
    const client = await EventClient.connect(server.wsUrl(id), { headers: { cookie } });
    client.send({ type: 'message', content: 'hi' });
    await client.waitForRunEnd();
    expect(client.ofType('stream_end')).toHaveLength(1);
    await client.close();
  });

  it('refused sockets never start a run', () => {
    expect(agent.calls.every((c) => c.sessionId === id)).toBe(true);
    expect(agent.calls).toHaveLength(1);
  });
});

describe('client frames', () => {
  let server: TestServer;
  let agent: ScriptedAgent;
  beforeAll(async () => {
    agent = scriptedAgent();
    server = await startScripted({ agent, app: { maxClientFrameBytes: MAX_FRAME } });
  });
  afterAll(async () => server.close());

  it('answers each bad frame with a recoverable error and stays usable', async () => {
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    const bad: unknown[] = [
      'not json {',
      '[1,2]',
      { type: 'dance' },
      { content: 'no type' },
      { type: 'message', content: '' },
      { type: 'message', content: '   \n ' },
      { type: 'message', content: 5 },
      { type: 'tool_confirm', call_id: 'nothing-pending', approved: true },
      { type: 'message', content: 'x'.repeat(MAX_FRAME + 1000) },
      { type: 'message', content: 'hi', images: ['***not base64***'] },
      { type: 'message', content: 'hi', files: [{ name: 'x.txt', path: '/etc/passwd' }] },
    ];
    for (const [index, frame] of bad.entries()) {
      client.send(frame);
      const error = await client.waitFor((e) => e.type === 'error', 5000, index);
      expect(error).toMatchObject({ type: 'error', recoverable: true, message: expect.any(String) });
      expect(error.run_id).toBeUndefined();
    }
    expect(client.events).toHaveLength(bad.length);
    expect(agent.calls).toHaveLength(0);
    client.send({ type: 'message', content: 'still there?' });
    const run = await client.waitForRunEnd();
    expect(run.map((e) => e.type)).toEqual(['stream_start', 'stream_delta', 'stream_end']);
    await client.close();
  });

  it('strips a data: prefix from images and accepts files uploaded to this session only', async () => {
    const id = await server.createSession();
    const other = await server.createSession();
    const uploadTo = async (sid: string) => {
      const body = multipartBody([{ field: 'file', filename: 'doc.txt', content: 'doc' }]);
      const res = await server.app.inject({ method: 'POST', url: `/sessions/${sid}/files`, ...body });
      return res.json<{ name: string; path: string }>();
    };
    const mine = await uploadTo(id);
    const theirs = await uploadTo(other);
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({
      type: 'message',
      content: 'look',
      images: ['data:image/png;base64,iVBORw0KGgo='],
      files: [mine],
    });
    await client.waitForRunEnd();
    expect(agent.calls.at(-1)?.input).toMatchObject({
      content: 'look',
      images: ['iVBORw0KGgo='],
      files: [{ name: 'doc.txt', path: mine.path }],
      trigger: 'user',
    });
    const before = client.events.length;
    client.send({ type: 'message', content: 'steal', files: [{ name: 'doc.txt', path: theirs.path }] });
    const refused = await client.waitFor((e) => e.type === 'error', 5000, before);
    expect(refused).toMatchObject({ recoverable: true });
    await client.close();
  });

  it('a form submission starts a context-only run with trigger form', async () => {
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'form_submit', form_id: 'trip', values: { city: 'Oslo', nights: 2 } });
    await client.waitForRunEnd();
    const input = agent.calls.at(-1)?.input;
    expect(input).toMatchObject({
      trigger: 'form',
      contextOnly: true,
      formSubmit: { form_id: 'trip', values: { city: 'Oslo', nights: 2 } },
    });
    expect(JSON.parse(input?.content ?? '')).toEqual({
      form_id: 'trip',
      values: { city: 'Oslo', nights: 2 },
    });
    await client.close();
  });

  it('a form is submitted once: the second submission is refused, another form is not', async () => {
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'form_submit', form_id: 'once', values: { city: 'Oslo' } });
    await client.waitForRunEnd();
    const runs = agent.calls.length;
    const before = client.events.length;
    client.send({ type: 'form_submit', form_id: 'once', values: { city: 'Bergen' } });
    const refused = await client.waitFor((e) => e.type === 'error', 5000, before);
    expect(refused).toMatchObject({ code: 'FORM_ALREADY_SUBMITTED', recoverable: true });
    expect(refused.type === 'error' && refused.message).toContain('"once" was already submitted');
    expect(agent.calls.length).toBe(runs);
    client.send({ type: 'form_submit', form_id: 'other', values: {} });
    await client.waitForRunEnd(client.events.length);
    expect(agent.calls.at(-1)?.input.formSubmit).toEqual({ form_id: 'other', values: {} });
    await client.close();
  });

  it('a second message during a run gets a recoverable error; REST gets 409', async () => {
    const id = await server.createSession();
    const release = gate();
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      await release.wait;
      yield { type: 'stream_end', content: 'done', context_tokens: 1, max_context_tokens: 10 };
    });
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'first' });
    await client.waitFor((e) => e.type === 'stream_start');
    client.send({ type: 'message', content: 'second' });
    const busy = await client.waitFor((e) => e.type === 'error');
    expect(busy).toMatchObject({ recoverable: true });
    const rest = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'third' },
    });
    expect(rest.statusCode).toBe(409);
    expect(rest.json()).toMatchObject({ code: 'RUN_ACTIVE' });
    release.open();
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'done' });
    // The run is gone from the registry once it ended: a new message starts.
    client.send({ type: 'message', content: 'again' });
    await client.waitFor((e) => e.type === 'stream_end' && e.run_id !== events[0]?.run_id);
    await client.close();
  });

  it('keeps serving after a huge frame closes nothing but that frame', async () => {
    agent.enqueue(simpleReply('fine'));
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send(
      Buffer.alloc(MAX_FRAME + 1)
        .fill(0x20)
        .toString(),
    );
    await client.waitFor((e) => e.type === 'error');
    client.send({ type: 'message', content: 'ok?' });
    const run = await client.waitForRunEnd();
    expect(run.at(-1)).toMatchObject({ type: 'stream_end', content: 'fine' });
    await client.close();
  });
});
