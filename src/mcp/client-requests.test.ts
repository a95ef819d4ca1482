import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfirmAnswer, ElicitAnswer } from '../tools/types.js';
import {
  CALLS_OF_SEVERAL_RUNS,
  declinedByNavi,
  handleClientRequests,
  type InFlightCall,
  MAX_OPEN_ASKS,
  TOO_MANY_OPEN,
} from './client-requests.js';

const never = <T>() => new Promise<T>(() => {});

async function pair(call: InFlightCall, others: InFlightCall[] = []) {
  const client = new Client(
    { name: 'navi', version: '0' },
    { capabilities: { elicitation: { form: {} }, sampling: {} } },
  );
  handleClientRequests(client, {
    server: 'asking',
    calls: () => [...others, call],
    log: pino({ level: 'silent' }),
    sampler: {
      choose: () => ({
        backend: { id: 'openai', description: 'openai at https://api.example.com/v1', location: 'remote' },
        model: 'm',
        answer: async () => ({ text: 'hi', model: 'm', stopReason: 'endTurn' }),
      }),
    },
  });
  const server = new Server({ name: 'asking', version: '0' }, { capabilities: {} });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(a), server.connect(b)]);
  closers.push(() => client.close());
  return server;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const form = { type: 'object' as const, properties: { name: { type: 'string' as const } } };
const sampling = {
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'hi' } }],
  maxTokens: 10,
};

describe('handleClientRequests', () => {
  it('declines forms and refuses sampling beyond the open questions one call may have', async () => {
    const asked: string[] = [];
    const declined: [string, string | undefined][] = [];
    const call: InFlightCall = {
      origin: {
        callId: 'c1',
        elicit: (request) => {
          // Declined before asking: the run only notes it for the call's result.
          const reason = declinedByNavi(request.signal);
          if (reason !== undefined) {
            declined.push([request.message, reason]);
            return Promise.resolve({ action: 'decline', reason });
          }
          asked.push(request.id);
          return never<ElicitAnswer>();
        },
        confirm: () => never<ConfirmAnswer>(),
      },
      signal: new AbortController().signal,
      samplings: 0,
    };
    const server = await pair(call);
    for (let i = 0; i < MAX_OPEN_ASKS; i++)
      server.elicitInput({ message: 'm', requestedSchema: form }).catch(() => {});
    await expect.poll(() => asked.length).toBe(MAX_OPEN_ASKS);
    expect(await server.elicitInput({ message: 'one more', requestedSchema: form })).toEqual({
      action: 'decline',
    });
    expect(declined).toEqual([['one more', TOO_MANY_OPEN]]);
    await expect(server.createMessage(sampling)).rejects.toThrow(TOO_MANY_OPEN);
    expect(asked).toHaveLength(MAX_OPEN_ASKS);
    expect(call.samplings).toBe(0);
  });

  it('asks nobody while calls of more than one run are in flight, and the newest call of one run', async () => {
    const asked: string[] = [];
    const callOf = (runId: string, callId: string): InFlightCall => ({
      origin: {
        runId,
        callId,
        elicit: async (request) => {
          const reason = declinedByNavi(request.signal);
          asked.push(reason === undefined ? callId : `${callId} noted "${request.message}": ${reason}`);
          return { action: 'accept', content: { name: callId } };
        },
        confirm: async () => {
          asked.push(`${callId}/sampling`);
          return { approved: false, reason: 'no' };
        },
      },
      signal: new AbortController().signal,
      samplings: 0,
    });
    const other = callOf('run-b', 'b1');
    const mixed = await pair(callOf('run-a', 'a1'), [other]);
    expect(await mixed.elicitInput({ message: 'm', requestedSchema: form })).toEqual({ action: 'decline' });
    await expect(mixed.createMessage(sampling)).rejects.toThrow(CALLS_OF_SEVERAL_RUNS);
    // Nobody is asked; each run's newest call notes the decline, without the question.
    expect(asked).toEqual([`b1 noted "": ${CALLS_OF_SEVERAL_RUNS}`, `a1 noted "": ${CALLS_OF_SEVERAL_RUNS}`]);
    asked.length = 0;

    // A subagent's calls are its parent run's: the newest is asked.
    const same = await pair(callOf('run-a', 'a2'), [callOf('run-a', 'a1')]);
    expect(await same.elicitInput({ message: 'm', requestedSchema: form })).toEqual({
      action: 'accept',
      content: { name: 'a2' },
    });
    expect(asked).toEqual(['a2']);
  });

  it('names the backend and model that would answer, and whether the prompt leaves the machine', async () => {
    const asked: Record<string, unknown>[] = [];
    const call: InFlightCall = {
      origin: {
        callId: 'c1',
        confirm: async (request) => {
          asked.push(request.args);
          return { approved: true };
        },
      },
      signal: new AbortController().signal,
      samplings: 0,
    };
    const server = await pair(call);
    expect(await server.createMessage(sampling)).toMatchObject({ model: 'm', content: { text: 'hi' } });
    expect(asked[0]).toMatchObject({
      server: 'asking',
      backend: { id: 'openai', description: 'openai at https://api.example.com/v1', location: 'remote' },
      model: 'm',
    });
  });

  it('stops waiting for a sampling confirmation when the call ends, and frees its place', async () => {
    const ended = new AbortController();
    let confirms = 0;
    let withdrawn: AbortSignal | undefined;
    const call: InFlightCall = {
      origin: {
        callId: 'c1',
        confirm: (request) => {
          confirms += 1;
          withdrawn = request.signal;
          return never<ConfirmAnswer>();
        },
      },
      signal: ended.signal,
      samplings: 0,
    };
    const server = await pair(call);
    const answer = server.createMessage(sampling);
    await expect.poll(() => confirms).toBe(1);
    expect(call.open).toBe(1);
    ended.abort(new Error('the call to sample ended'));
    await expect(answer).rejects.toThrow(/nobody waits for it any more \(the call to sample ended\)/);
    expect(call.open).toBe(0);
    // The run that shows the confirmation drops it too.
    expect(withdrawn?.aborted).toBe(true);
  });
});
