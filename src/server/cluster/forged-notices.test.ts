/**
 * The cluster's channel is open to any role that may connect to the database: it may LISTEN and
 * NOTIFY there. Here an intruder (a plain connection of its own) overhears the notices of two
 * members and sends its own: unsealed, sealed with the wrong key, tampered with and replayed.
 * Nothing it sends is approved, stopped, delivered or counted, and nothing it hears holds the
 * text of a run.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clusterMembers,
  end,
  input,
  type Member,
  newSession,
  Sink,
  waitUntil,
} from '../../../test/server/cluster-members.js';
import { isTerminalEvent } from '../../protocol/events.js';
import { clusterChannel, clusterSecret } from '../../store/postgres/run-tables.js';
import { createTestSchema, needsPostgres } from '../../store/test-engines.js';
import { NoticeSeal } from './notice-seal.js';

let url = '';
let drop: () => Promise<void> = async () => {};
const { member, leaveAll } = clusterMembers(() => url);

describe.runIf(needsPostgres('forged cluster notices'))('notices from outside the cluster', () => {
  let a: Member;
  let b: Member;
  let intruder: pg.Client;
  let channel = '';
  /** Every payload the intruder overheard. */
  let heard: string[] = [];

  const send = (payload: string) => intruder.query('SELECT pg_notify($1, $2)', [channel, payload]);
  /** Resolves once each of `members` has dropped `count` more notices than before `act`. */
  const dropped = async (count: number, act: () => Promise<unknown>, members = [a, b]) => {
    const before = members.map((m) => m.cluster.rejectedNotices);
    await act();
    await waitUntil(() => members.every((m, i) => m.cluster.rejectedNotices >= (before[i] ?? 0) + count));
  };
  const overheard = (test: (payload: string) => boolean) => waitUntil(() => heard.some(test));

  beforeAll(async () => {
    ({ url, drop } = await createTestSchema());
    a = await member();
    b = await member();
    intruder = new pg.Client({ connectionString: url });
    await intruder.connect();
    channel = await clusterChannel({ rows: async (sql) => (await intruder.query(sql)).rows as never });
    intruder.on('notification', (message) => heard.push(message.payload ?? ''));
    await intruder.query(`LISTEN ${intruder.escapeIdentifier(channel)}`);
  });
  beforeEach(() => {
    heard = [];
  });
  afterAll(async () => {
    await intruder?.end();
    await leaveAll();
    await drop();
  });

  it('an answer, a stop, run events and a goodbye sent unsealed, wrongly sealed or replayed change nothing', async () => {
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    await b.runs.announced();
    await waitUntil(() => a.cluster.watchedElsewhere(s));
    let answer: unknown;
    a.agent.enqueue(async function* (_input, options) {
      yield { type: 'stream_start', trigger: 'user' };
      const ticket = options.confirm({ callId: 'call-1', tool: 'echo', args: {} });
      if (ticket.asked) yield { type: 'tool_confirm_request', call_id: 'call-1', tool: 'echo', args: {} };
      answer = await ticket.answer;
      yield end('answered');
    });
    const run = await a.runs.start(s, input);
    await there.waitFor((e) => e.type === 'tool_confirm_request');
    const [A, B, r] = [a.cluster.memberId, b.cluster.memberId, run.runId];
    const approve = JSON.stringify({
      k: 'ctl',
      p: B,
      to: A,
      id: 'x1',
      s,
      r,
      op: 'answer',
      c: 'call-1',
      a: true,
    });
    const stop = JSON.stringify({ k: 'ctl', p: B, to: A, id: 'x2', s, r, op: 'stop' });
    const fakeEnd = JSON.stringify({
      k: 'ev',
      p: A,
      s,
      r,
      f: 3,
      l: 3,
      end: 1,
      e: [
        {
          type: 'stream_end',
          content: 'forged',
          context_tokens: 1,
          max_context_tokens: 1,
          run_id: r,
          seq: 3,
        },
      ],
    });
    const wrongKey = new NoticeSeal(randomBytes(32));
    const forged = [approve, stop, fakeEnd, JSON.stringify({ k: 'bye', p: B })];
    await dropped(2 * forged.length, async () => {
      for (const body of forged) {
        await send(body);
        await send(wrongKey.seal(body));
      }
    });

    // A real request overheard, then sent again as it was, and for the confirmation it was not for.
    expect(await b.runs.answer(s, 'no-such-call', true)).toBe(false);
    await overheard((p) => p.includes('"no-such-call"'));
    const captured = heard.find((p) => p.includes('"no-such-call"')) ?? '';
    // b takes a notice of its own for its own and ignores it.
    await dropped(2, async () => {
      await send(captured);
      await send(captured.replace('"no-such-call"', '"call-1"'));
    }, [a]);

    expect(answer).toBeUndefined();
    expect(there.events.filter(isTerminalEvent)).toEqual([]);
    expect(a.cluster.watchedElsewhere(s)).toBe(true);
    expect(await b.runs.answer(s, 'call-1', false)).toBe(true);
    expect(answer).toMatchObject({ approved: false });
    expect((await run.done).type).toBe('stream_end');
    await there.waitFor(isTerminalEvent);
    expect(there.events.filter(isTerminalEvent)).toMatchObject([{ type: 'stream_end', content: 'answered' }]);
  });

  it('a watcher count overheard and sent again after it changed is not believed', async () => {
    const s = newSession();
    const unwatch = b.runs.watch(s, new Sink());
    await b.runs.announced();
    await waitUntil(() => a.cluster.watchedElsewhere(s));
    await overheard((p) => p.includes(`[["${s}",1]]`));
    const watching = heard.find((p) => p.includes(`[["${s}",1]]`)) ?? '';
    unwatch();
    await b.runs.announced();
    await waitUntil(() => !a.cluster.watchedElsewhere(s));
    await dropped(1, () => send(watching), [a]);
    expect(a.cluster.watchedElsewhere(s)).toBe(false);
  });

  it('a listener on the channel hears no text of runs or of events outside them', async () => {
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    const words = 'the plan is under the old oak';
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      yield { type: 'stream_delta', delta: words };
      yield { type: 'tool_started', call_id: 'c1', tool: 'echo', args: { text: words }, is_subagent: false };
      yield end(words);
    });
    const run = await a.runs.start(s, input);
    await run.done;
    await there.waitFor(isTerminalEvent);
    a.runs.notify(s, { type: 'profile_switched', profile_id: 'p2', profile_name: 'Oak planners' });
    await there.waitFor((e) => e.type === 'profile_switched');
    expect(there.events.at(-1)).toMatchObject({ profile_name: 'Oak planners' });
    expect(there.ofRun(run.runId).at(-1)).toMatchObject({ type: 'stream_end', content: words });
    // The intruder heard every notice: the run's last batch and the note.
    await overheard((p) => p.includes('"end":1') && p.includes(run.runId));
    await overheard((p) => p.includes('"k":"note"'));
    for (const payload of heard) {
      expect(payload).not.toMatch(/oak/i);
      expect(payload.length).toBeLessThan(1000);
    }
  });

  it('a sealed notice of a run that Navi`s tables do not name makes no view of it', async () => {
    // Even a notice that verifies (a member with a bug, a key that leaked) reaches a watcher
    // only through rows that Navi wrote.
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    const seal = new NoticeSeal(await clusterSecret(a.db));
    const phantom = JSON.stringify({ k: 'ev', p: a.cluster.memberId, s, r: 'phantom-run', f: 1, l: 1 });
    // Only a member where the session is watched looks the run up.
    await dropped(1, () => send(seal.seal(phantom)), [b]);
    const run = await a.runs.start(s, input);
    await run.done;
    await there.waitFor(isTerminalEvent);
    await b.cluster.sweep();
    expect(there.events.every((e) => e.run_id === run.runId)).toBe(true);
    expect(there.events.map((e) => e.seq)).toEqual(there.events.map((_, i) => i + 1));
    expect(there.events.filter((e) => e.type === 'error')).toEqual([]);
  });
});
