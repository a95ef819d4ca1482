/**
 * Two real `navi serve` processes, A and B, on one PostgreSQL database serve the same sessions
 * (docs/postgres.md#several-navi-processes-on-one-database): a client watching a session on B
 * sees the run A executes, live and in the same order as A's own client, and a client joining B
 * mid-run is replayed it from the start; stop and confirmation answers sent to B reach the run on
 * A; a second run is refused whichever process is asked; a process killed with -9 frees its
 * session for the other.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isTerminalEvent, type ServerEvent } from '../../src/protocol/events.js';
import type { MessageReply } from '../../src/protocol/rest.js';
import { OWNER_GONE } from '../../src/server/cluster/remote-run.js';
import { needsPostgres } from '../../src/store/test-engines.js';
import { type NaviCluster, startNaviCluster } from '../support/navi-cluster.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import type { EventClient } from '../support/ws-client.js';

const STORY = 'Once upon a time two processes shared one database and never lost a word. '.repeat(12);

function runOf(client: EventClient, runId: string | undefined): ServerEvent[] {
  return client.events.filter((e) => e.run_id !== undefined && e.run_id === runId);
}

/** The seqs 1…n, for comparing with a run's events. */
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * Resolves once the process has told the others that `client` watches (every frame waits for
 * that): an invalid frame is answered only afterwards.
 */
async function announced(client: EventClient): Promise<void> {
  const mark = client.events.length;
  client.send('{}');
  await client.waitFor((e) => e.type === 'error' && e.run_id === undefined, 15_000, mark);
}

describe.skipIf(!needsPostgres('two navi serve processes sharing runs'))(
  'two navi serve processes serving the same sessions',
  () => {
    let cluster: NaviCluster;
    const clients: EventClient[] = [];
    const watch = async (index: 0 | 1, sessionId: string) => {
      const client = await cluster.nodes[index]!.watch(sessionId);
      clients.push(client);
      return client;
    };
    const A = () => cluster.nodes[0]!;
    const B = () => cluster.nodes[1]!;

    beforeAll(async () => {
      cluster = await startNaviCluster({
        count: 2,
        extra: { PROFILES_DIR: profilesDir([{ ...plainProfile, confirm_tools: ['system_info'] }]) },
      });
    }, 120_000);
    // A reply a stopped run never asked for must not be left for the next test's run.
    beforeEach(() => cluster.fake.reset());
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await cluster?.close();
    });

    it('a client on B sees the run A executes: the same events, the same seqs, as the client on A', async () => {
      const id = await A().createSession();
      const onA = await watch(0, id);
      const onB = await watch(1, id);
      cluster.fake.enqueue({ text: STORY, chunkSize: 3, delayMs: 2 });
      onA.send({ type: 'message', content: 'tell me a story' });
      const events = await onA.waitForRunEnd();
      const runId = events[0]?.run_id;
      await onB.waitFor((e) => e.run_id === runId && isTerminalEvent(e));
      expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: STORY });
      expect(events.map((e) => e.seq)).toEqual(upTo(events.length));
      expect(runOf(onB, runId)).toEqual(events);
    });

    it('a client joining B mid-run is replayed the run from seq 1, with no gap and no duplicate', async () => {
      const id = await A().createSession();
      const onA = await watch(0, id);
      cluster.fake.enqueue({ text: STORY, chunkSize: 6, delayMs: 15 });
      onA.send({ type: 'message', content: 'tell me a slow story' });
      await onA.waitFor((e) => e.type === 'stream_delta');
      await onA.waitFor((e) => e.type === 'stream_delta' && (e.seq ?? 0) >= 4);
      const late = await watch(1, id);
      const events = await onA.waitForRunEnd();
      const runId = events[0]?.run_id;
      await late.waitFor((e) => e.run_id === runId && isTerminalEvent(e));
      expect(runOf(late, runId)).toEqual(events);
      expect(runOf(late, runId).map((e) => e.seq)).toEqual(upTo(events.length));
    });

    it('stop sent to B stops the run on A; with nothing running anywhere it answers stopped: false', async () => {
      const id = await A().createSession();
      expect(await B().call('POST', `/sessions/${id}/stop`)).toEqual({
        status: 200,
        body: { stopped: false },
      });
      const onA = await watch(0, id);
      cluster.fake.enqueue({ hang: true });
      onA.send({ type: 'message', content: 'think forever' });
      await onA.waitFor((e) => e.type === 'stream_start');
      expect(await B().call('POST', `/sessions/${id}/stop`)).toEqual({
        status: 200,
        body: { stopped: true },
      });
      const events = await onA.waitForRunEnd();
      expect(events.at(-1)?.type).toBe('stream_stopped');
    });

    it('a confirmation asked by the run on A is answered from a client on B; an unknown call id is CONFIRMATION_NOT_FOUND', async () => {
      const id = await A().createSession();
      // The only socket watching the session is on B: A must know of it to ask at all.
      const onB = await watch(1, id);
      await announced(onB);
      cluster.fake.enqueue(
        { toolCalls: [{ id: 'info-1', name: 'system_info', arguments: {} }] },
        { text: 'Your machine is fine.' },
      );
      const reply = A().call<MessageReply>('POST', `/sessions/${id}/messages`, {
        content: 'how is my machine?',
      });
      const question = await onB.waitFor((e) => e.type === 'tool_confirm_request');
      if (question.type !== 'tool_confirm_request') throw new Error('not a question');
      const mark = onB.events.length;
      onB.send({ type: 'tool_confirm', call_id: 'no-such-call', approved: true });
      expect(
        await onB.waitFor((e) => e.type === 'error' && e.run_id === undefined, 15_000, mark),
      ).toMatchObject({
        code: 'CONFIRMATION_NOT_FOUND',
      });
      expect(
        await B().call('POST', `/sessions/${id}/confirm`, { call_id: 'no-such-call', approved: true }),
      ).toMatchObject({ status: 404, body: { code: 'CONFIRMATION_NOT_FOUND' } });
      onB.send({ type: 'tool_confirm', call_id: question.call_id, approved: true });
      const answered = await reply;
      expect(answered.status).toBe(200);
      expect(answered.body.content).toBe('Your machine is fine.');
      expect(answered.body.tool_calls).toMatchObject([{ tool: 'system_info', success: true }]);
      const call = await onB.waitFor((e) => e.type === 'tool_call' && e.call_id === question.call_id);
      expect(call).toMatchObject({ outcome: 'ok' });
    });

    it('a second message is RUN_ACTIVE on B while A runs, and on A while B runs', async () => {
      const id = await A().createSession();
      for (const [runner, other] of [
        [A(), B()],
        [B(), A()],
      ] as const) {
        const onRunner = await runner.watch(id);
        clients.push(onRunner);
        cluster.fake.enqueue({ hang: true });
        const mark = onRunner.events.length;
        onRunner.send({ type: 'message', content: 'wait for me' });
        await onRunner.waitFor((e) => e.type === 'stream_start', 15_000, mark);
        expect(await other.call('POST', `/sessions/${id}/messages`, { content: 'me too' })).toMatchObject({
          status: 409,
          body: { code: 'RUN_ACTIVE' },
        });
        const onOther = await other.watch(id);
        clients.push(onOther);
        const otherMark = onOther.events.length;
        onOther.send({ type: 'message', content: 'me too, by socket' });
        expect(
          await onOther.waitFor((e) => e.type === 'error' && e.run_id === undefined, 15_000, otherMark),
        ).toMatchObject({ code: 'RUN_ACTIVE' });
        expect(await other.call('PATCH', `/sessions/${id}`, { profile_id: 'plain' })).toMatchObject({
          status: 409,
          body: { code: 'RUN_ACTIVE' },
        });
        expect(await other.call('POST', `/sessions/${id}/stop`)).toMatchObject({ body: { stopped: true } });
        await onRunner.waitForRunEnd(mark);
      }
    });

    it('a process killed with -9 while running frees the session for the other, whose clients see that run end', async () => {
      const id = await A().createSession();
      const onB = await watch(1, id);
      cluster.fake.enqueue({ hang: true });
      const onA = await watch(0, id);
      onA.send({ type: 'message', content: 'this process is about to die' });
      const start = await onB.waitFor((e) => e.type === 'stream_start');
      // Killed while it waits for the model, not before it asked.
      while (!cluster.fake.requests.some((r) => r.kind === 'chat'))
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await B().call('POST', `/sessions/${id}/messages`, { content: 'not yet' })).toMatchObject({
        status: 409,
      });
      await A().kill();
      cluster.fake.enqueue({ text: 'I am still here.' });
      // The session is free once the server has seen the dead process's connections close.
      let reply: { status: number; body: MessageReply };
      for (;;) {
        reply = await B().call<MessageReply>('POST', `/sessions/${id}/messages`, {
          content: 'are you there?',
        });
        if (reply.status !== 409) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(reply).toMatchObject({ status: 200, body: { content: 'I am still here.' } });
      const dead = runOf(onB, start.run_id);
      expect(dead.at(-1)).toMatchObject({ type: 'error', code: 'INTERNAL', message: OWNER_GONE });
      expect(dead.map((e) => e.seq)).toEqual(upTo(dead.length));
      const next = onB.events.filter((e) => e.run_id !== undefined && e.run_id !== start.run_id);
      expect(next.at(-1)).toMatchObject({ type: 'stream_end', content: 'I am still here.' });
    });
  },
);
