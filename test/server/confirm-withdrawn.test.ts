/**
 * A confirmation whose asker stops waiting (an MCP server's sampling request whose call ended or
 * which the server withdrew) is withdrawn from the run at once: refused with the signal's reason,
 * gone from the pending ones (a late answer finds nothing), its abort listener removed once
 * settled. A scripted agent gives exact control over when the request is withdrawn.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MCP_SAMPLING_TOOL } from '../../src/protocol/events.js';
import type { ConfirmAnswer } from '../../src/tools/types.js';
import { EventClient } from '../support/ws-client.js';
import { startScripted, type TestServer } from './harness.js';
import { gate, type Script, type ScriptedAgent, scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let agent: ScriptedAgent;

beforeAll(async () => {
  agent = scriptedAgent();
  server = await startScripted({ agent });
});
afterAll(async () => server.close());

const CALL = 'c1/sampling/1';

/** Asks as a server's sampling request does, then reports the answer and waits for `done`. */
function samplingScript(signal: AbortSignal, done: Promise<void>, answers: ConfirmAnswer[]): Script {
  return async function* (input, options) {
    yield { type: 'stream_start', trigger: input.trigger };
    const request = { callId: CALL, tool: MCP_SAMPLING_TOOL, args: { server: 'asking' }, signal };
    const ticket = options.confirm(request);
    if (ticket.asked)
      yield { type: 'tool_confirm_request', call_id: CALL, tool: request.tool, args: request.args };
    const answer = await ticket.answer;
    answers.push(answer);
    yield { type: 'stream_delta', delta: answer.approved ? 'approved' : `refused: ${answer.reason}` };
    await done;
    yield { type: 'stream_end', content: 'end', context_tokens: 5, max_context_tokens: 100 };
  };
}

async function confirm(id: string, cookie: string): Promise<number> {
  const res = await server.app.inject({
    method: 'POST',
    url: `/sessions/${id}/confirm`,
    headers: { cookie },
    payload: { call_id: CALL, approved: true },
  });
  return res.statusCode;
}

describe('a withdrawn confirmation', () => {
  it('is refused with the reason and no longer pending as soon as its signal aborts', async () => {
    const id = await server.createSession();
    const cookie = await server.pair();
    const withdraw = new AbortController();
    const finish = gate();
    const answers: ConfirmAnswer[] = [];
    agent.enqueue(samplingScript(withdraw.signal, finish.wait, answers));
    const client = await EventClient.connect(server.wsUrl(id), { headers: { cookie } });
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    withdraw.abort(new Error('the call to sample ended'));
    await client.waitFor((e) => e.type === 'stream_delta');
    expect(answers).toEqual([{ approved: false, reason: 'the call to sample ended' }]);
    // The run is still going, and the confirmation is gone from it.
    expect(await confirm(id, cookie)).toBe(404);
    finish.open();
    await client.waitForRunEnd();
    await client.close();
  });

  it('answered, stops listening to its signal; withdrawn before it is asked, it is refused at once', async () => {
    const id = await server.createSession();
    const cookie = await server.pair();
    const signal = new AbortController().signal;
    const removed = vi.spyOn(signal, 'removeEventListener');
    const finish = gate();
    const answers: ConfirmAnswer[] = [];
    agent.enqueue(samplingScript(signal, finish.wait, answers));
    const client = await EventClient.connect(server.wsUrl(id), { headers: { cookie } });
    client.send({ type: 'message', content: 'go' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    expect(await confirm(id, cookie)).toBe(200);
    await client.waitFor((e) => e.type === 'stream_delta');
    expect(answers).toEqual([{ approved: true }]);
    expect(removed).toHaveBeenCalledWith('abort', expect.any(Function));
    finish.open();
    await client.waitForRunEnd();

    const gone = AbortSignal.abort(new Error('the server withdrew the request'));
    const early: ConfirmAnswer[] = [];
    agent.enqueue(samplingScript(gone, Promise.resolve(), early));
    const mark = client.events.length;
    client.send({ type: 'message', content: 'again' });
    const events = await client.waitForRunEnd(mark);
    expect(events.some((e) => e.type === 'tool_confirm_request')).toBe(false);
    expect(early).toEqual([{ approved: false, reason: 'the server withdrew the request' }]);
    await client.close();
  });
});
