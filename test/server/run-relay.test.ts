/**
 * The run relay: fan-out, replay for late joiners, coalescing, stop, confirmations. A scripted
 * agent gives these tests exact control over when each event is emitted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { NOBODY_TO_CONFIRM } from '../../src/server/agent-run.js';
import { EventClient } from '../support/ws-client.js';
import { startScripted, type TestServer } from './harness.js';
import { aborted, gate, type Script, type ScriptedAgent, scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let agent: ScriptedAgent;

beforeAll(async () => {
  agent = scriptedAgent();
  server = await startScripted({ agent });
});
afterAll(async () => server.close());

const end = (content: string) =>
  ({ type: 'stream_end', content, context_tokens: 5, max_context_tokens: 100 }) as const;

function seqs(events: ServerEvent[]): number[] {
  return events.map((e) => e.seq ?? -1);
}

describe('fan-out and replay', () => {
  it('two subscribers and a late joiner see the same events, seq 1.., no gap, no duplicate', async () => {
    const id = await server.createSession();
    const half = gate();
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      for (let i = 0; i < 5; i++)
        yield { type: 'tool_started', call_id: `c${i}`, tool: 'echo', args: {}, is_subagent: false };
      await half.wait;
      for (let i = 0; i < 5; i++) {
        yield {
          type: 'tool_call',
          call_id: `c${i}`,
          tool: 'echo',
          args: {},
          result: 'r',
          success: true,
          is_subagent: false,
        };
      }
      yield end('all done');
    });
    const a = await EventClient.connect(server.wsUrl(id));
    const b = await EventClient.connect(server.wsUrl(id));
    a.send({ type: 'message', content: 'go' });
    await b.waitFor((e) => e.type === 'tool_started' && e.call_id === 'c4');
    const late = await EventClient.connect(server.wsUrl(id));
    await late.waitFor((e) => e.type === 'tool_started' && e.call_id === 'c4');
    half.open();
    const runs = await Promise.all([a.waitForRunEnd(), b.waitForRunEnd(), late.waitForRunEnd()]);
    const expected = Array.from({ length: 12 }, (_, i) => i + 1);
    for (const events of runs) expect(seqs(events)).toEqual(expected);
    expect(late.events).toEqual(a.events);
    expect(b.events).toEqual(a.events);
    expect(new Set(a.events.map((e) => e.run_id)).size).toBe(1);
    await Promise.all([a.close(), b.close(), late.close()]);
  });

  it('a socket that closes mid-run does not disturb the others', async () => {
    const id = await server.createSession();
    const release = gate();
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      await release.wait;
      yield { type: 'stream_delta', delta: 'after' };
      yield end('after');
    });
    const a = await EventClient.connect(server.wsUrl(id));
    const b = await EventClient.connect(server.wsUrl(id));
    a.send({ type: 'message', content: 'go' });
    await b.waitFor((e) => e.type === 'stream_start');
    b.socket.terminate();
    release.open();
    const events = await a.waitForRunEnd();
    expect(events.map((e) => e.type)).toEqual(['stream_start', 'stream_delta', 'stream_end']);
    await a.close();
  });
});

describe('delta coalescing', () => {
  it('many one-character deltas become far fewer frames with the same text', async () => {
    const id = await server.createSession();
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      yield { type: 'thinking_delta', delta: 'hmm' };
      yield { type: 'thinking_end' };
      for (const [i, ch] of [...text].entries()) {
        yield { type: 'stream_delta', delta: ch };
        // Let timers run now and then, as a real network stream would.
        if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      yield end(text);
    });
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'go' });
    const events = await client.waitForRunEnd();
    const deltas = events.filter((e) => e.type === 'stream_delta');
    const joined = deltas.map((e) => (e.type === 'stream_delta' ? e.delta : '')).join('');
    expect(joined).toBe(text);
    expect(deltas.length).toBeLessThan(text.length / 10);
    expect(deltas[0]).toMatchObject({ delta: 'T' }); // the first delta of a burst goes out at once
    const deltaBytes = client.frames
      .filter((f) => f.includes('"stream_delta"'))
      .reduce((n, f) => n + f.length, 0);
    expect(deltaBytes).toBeLessThan(text.length * 2);
    // Order is kept around the other events, and seq has no gaps.
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(['stream_start', 'thinking_delta', 'thinking_end']);
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    await client.close();
  });
});

describe('many sessions streaming at once', () => {
  it('every client of every session gets every delta once and in order, late joiners too', async () => {
    const sessions = 20;
    const tokens = 120;
    const ids = await Promise.all(Array.from({ length: sessions }, () => server.createSession()));
    const answerOf = (id: string) =>
      Array.from({ length: tokens }, (_, i) => `${id.slice(0, 4)}.${i} `).join('');
    const half = gate();
    for (let s = 0; s < sessions; s++) {
      agent.enqueue(async function* (input, _options, sessionId) {
        yield { type: 'stream_start', trigger: input.trigger };
        const answer = answerOf(sessionId).split(/(?<= )/);
        for (const [i, token] of answer.entries()) {
          if (i === tokens / 2) await half.wait;
          yield { type: 'stream_delta', delta: token };
          // Timers run between tokens, so windows close while the runs interleave.
          if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        }
        yield end(answer.join(''));
      });
    }
    const pairs = await Promise.all(
      ids.map(async (id) => [
        await EventClient.connect(server.wsUrl(id)),
        await EventClient.connect(server.wsUrl(id)),
      ]),
    );
    for (const [a] of pairs) a!.send({ type: 'message', content: 'go' });
    // Half-way through every run, a third client joins each session and is replayed the run so far.
    await Promise.all(pairs.map(([a]) => a!.waitFor((e) => e.type === 'stream_delta')));
    const late = await Promise.all(ids.map((id) => EventClient.connect(server.wsUrl(id))));
    await Promise.all(late.map((c) => c.waitFor((e) => e.type === 'stream_delta')));
    half.open();
    for (const [s, id] of ids.entries()) {
      const clients = [...pairs[s]!, late[s]!];
      const runs = await Promise.all(clients.map((c) => c.waitForRunEnd()));
      for (const events of runs) {
        const deltas = events.map((e) => (e.type === 'stream_delta' ? e.delta : '')).join('');
        expect(deltas).toBe(answerOf(id));
        expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
        expect(events.at(-1)?.type).toBe('stream_end');
      }
      // One serialised frame per event, the same for the clients there from the start and the late one.
      expect(clients[1]!.frames).toEqual(clients[0]!.frames);
      expect(clients[2]!.frames).toEqual(clients[0]!.frames);
    }
    await Promise.all([...pairs.flat(), ...late].map((c) => c!.close()));
  });
});

describe('stop', () => {
  it('stop mid-stream ends the run with stream_stopped', async () => {
    const id = await server.createSession();
    agent.enqueue(async function* (input, options) {
      yield { type: 'stream_start', trigger: input.trigger };
      yield { type: 'stream_delta', delta: 'partial' };
      await aborted(options.signal);
      yield { type: 'stream_stopped', content: 'partial' };
    });
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'stream_delta');
    const res = await server.app.inject({ method: 'POST', url: `/sessions/${id}/stop` });
    expect(res.json()).toEqual({ stopped: true });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_stopped', content: 'partial' });
    const again = await server.app.inject({ method: 'POST', url: `/sessions/${id}/stop` });
    expect(again.json()).toEqual({ stopped: false });
    await client.close();
  });
});

describe('tool confirmations', () => {
  /** Asks as the real agent does: the question goes into the run's own stream when asked. */
  function askingScript(): Script {
    return async function* (input, options) {
      yield { type: 'stream_start', trigger: input.trigger };
      const request = { callId: 'call-1', tool: 'terminal', args: { command: 'ls' } };
      const ticket = options.confirm(request);
      if (ticket.asked)
        yield {
          type: 'tool_confirm_request',
          call_id: request.callId,
          tool: request.tool,
          args: request.args,
        };
      const answer = await ticket.answer;
      yield end(answer.approved ? 'approved' : `refused: ${answer.reason}`);
    };
  }

  it('is answered over the WebSocket', async () => {
    const id = await server.createSession();
    agent.enqueue(askingScript());
    const client = await EventClient.connect(server.wsUrl(id), { headers: { cookie: await server.pair() } });
    client.send({ type: 'message', content: 'go' });
    const request = await client.waitFor((e) => e.type === 'tool_confirm_request');
    expect(request).toMatchObject({ call_id: 'call-1', tool: 'terminal', args: { command: 'ls' }, seq: 2 });
    client.send({ type: 'tool_confirm', call_id: 'call-1', approved: true });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'approved' });
    await client.close();
  });

  it('is answered over REST; another session cannot answer it', async () => {
    const id = await server.createSession();
    const other = await server.createSession();
    agent.enqueue(askingScript());
    const cookie = await server.pair();
    const headers = { cookie };
    const client = await EventClient.connect(server.wsUrl(id));
    const stranger = await EventClient.connect(server.wsUrl(other), { headers });
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    const foreign = await server.app.inject({
      method: 'POST',
      url: `/sessions/${other}/confirm`,
      headers,
      payload: { call_id: 'call-1', approved: true },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'CONFIRMATION_NOT_FOUND' });
    stranger.send({ type: 'tool_confirm', call_id: 'call-1', approved: true });
    expect(await stranger.waitFor((e) => e.type === 'error')).toMatchObject({ recoverable: true });
    const bad = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/confirm`,
      headers,
      payload: { call_id: 'call-1' },
    });
    expect(bad.statusCode).toBe(400);
    const ok = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/confirm`,
      headers,
      payload: { call_id: 'call-1', approved: false },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ ok: true });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'refused: the user declined' });
    const late = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/confirm`,
      headers,
      payload: { call_id: 'call-1', approved: true },
    });
    expect(late.statusCode).toBe(404);
    await Promise.all([client.close(), stranger.close()]);
  });

  it('is not answered by a client without consent, over WS or REST; it stays pending', async () => {
    const id = await server.createSession();
    agent.enqueue(askingScript());
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    for (const approved of [true, false]) {
      const from = client.events.length;
      client.send({ type: 'tool_confirm', call_id: 'call-1', approved });
      const error = await client.waitFor((e) => e.type === 'error', 5000, from);
      expect(error).toMatchObject({ recoverable: true, code: 'CONSENT_REQUIRED' });
      expect(error.type === 'error' && error.message).toMatch(/navi pair/);
      const rest = await server.app.inject({
        method: 'POST',
        url: `/sessions/${id}/confirm`,
        headers: { cookie: 'navi_consent=forged' },
        payload: { call_id: 'call-1', approved },
      });
      expect(rest.statusCode).toBe(403);
      expect(rest.json()).toMatchObject({ code: 'CONSENT_REQUIRED' });
    }
    const paired = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/confirm`,
      headers: { cookie: await server.pair() },
      payload: { call_id: 'call-1', approved: true },
    });
    expect(paired.statusCode).toBe(200);
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'approved' });
    await client.close();
  });

  it('a REST-only run refuses at once: nobody is connected to approve it', async () => {
    const id = await server.createSession();
    agent.enqueue(askingScript());
    const res = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'go' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ content: `refused: ${NOBODY_TO_CONFIRM}`, stopped: false, tool_calls: [] });
  });

  it('stopping refuses a pending confirmation', async () => {
    const id = await server.createSession();
    agent.enqueue(askingScript());
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    await server.app.inject({ method: 'POST', url: `/sessions/${id}/stop` });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({
      type: 'stream_end',
      content: expect.stringContaining('refused: the run was stopped'),
    });
    await client.close();
  });
});

describe('REST messages', () => {
  it('waits for the run and answers content, stopped and tool calls; WS watchers see it live', async () => {
    const id = await server.createSession();
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      yield { type: 'tool_started', call_id: 't1', tool: 'echo', args: { text: 'a' }, is_subagent: false };
      yield {
        type: 'tool_call',
        call_id: 't1',
        tool: 'echo',
        args: { text: 'a' },
        result: 'a',
        success: true,
        is_subagent: false,
      };
      yield {
        type: 'tool_call',
        call_id: 's1',
        tool: 'echo',
        args: {},
        result: 'sub',
        success: true,
        is_subagent: true,
      };
      yield { type: 'stream_delta', delta: 'Done.' };
      yield end('Done.');
    });
    const watcher = await EventClient.connect(server.wsUrl(id));
    const res = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'hi' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      content: 'Done.',
      stopped: false,
      tool_calls: [{ call_id: 't1', tool: 'echo', args: { text: 'a' }, result: 'a', success: true }],
    });
    const events = await watcher.waitForRunEnd();
    expect(events).toHaveLength(6);
    await watcher.close();
  });

  it('refuses bad bodies and unknown sessions', async () => {
    const id = await server.createSession();
    for (const payload of [
      {},
      { content: 5 },
      { content: '  ' },
      { content: 'x', images: 'no' },
      { content: 'x', images: ['%%%'] },
    ]) {
      const res = await server.app.inject({ method: 'POST', url: `/sessions/${id}/messages`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const missing = await server.app.inject({
      method: 'POST',
      url: '/sessions/0b7e7a1e-0000-4000-8000-000000000000/messages',
      payload: { content: 'x' },
    });
    expect(missing.statusCode).toBe(404);
  });

  it('an agent that throws ends the run with a non-recoverable error, not a 500', async () => {
    const id = await server.createSession();
    agent.enqueue(async function* (input) {
      yield { type: 'stream_start', trigger: input.trigger };
      throw new Error('boom');
    });
    const watcher = await EventClient.connect(server.wsUrl(id));
    const res = await server.app.inject({
      method: 'POST',
      url: `/sessions/${id}/messages`,
      payload: { content: 'x' },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'RUN_FAILED' });
    const events = await watcher.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'error', recoverable: false });
    expect(JSON.stringify(events)).not.toContain('boom');
    await watcher.close();
  });
});
