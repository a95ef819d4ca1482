/**
 * The run cluster on a real PostgreSQL: two members ("processes") on one schema, each with its
 * own pool, its own dedicated connections and its own run registry over a scripted agent. What
 * one runs, the other's watchers see; a session is claimed by one at a time; stop and answers
 * cross over; a member that vanishes frees its sessions.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterMembers,
  end,
  input,
  type Member,
  newSession,
  Sink,
  startWhenFree,
  waitUntil,
  waitUntilAsync,
} from '../../../test/server/cluster-members.js';
import { aborted, gate } from '../../../test/server/scripted-agent.js';
import { isTerminalEvent } from '../../protocol/events.js';
import { clusterSecret } from '../../store/postgres/run-tables.js';
import { createTestSchema, needsPostgres } from '../../store/test-engines.js';
import { ApiError } from '../errors.js';
import { recallRunner } from '../recall-runner.js';
import { NoticeSeal } from './notice-seal.js';
import { OWNER_GONE } from './remote-run.js';

const runPostgres = needsPostgres('run cluster tests');
let url = '';
let drop: () => Promise<void> = async () => {};
const { member, leaveAll } = clusterMembers(() => url);

describe.runIf(runPostgres)('run cluster on PostgreSQL', () => {
  let a: Member;
  let b: Member;

  beforeAll(async () => {
    ({ url, drop } = await createTestSchema());
    a = await member();
    b = await member();
  });
  afterAll(async () => {
    await leaveAll();
    await drop();
  });

  it('a second run of a session is refused on either member, and the session is free everywhere once its end is seen', async () => {
    const s = newSession();
    const release = gate();
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      await release.wait;
      yield end('done');
    });
    const run = await a.runs.start(s, input);
    await expect(b.runs.start(s, input)).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
    await expect(a.runs.start(s, input)).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
    expect(await b.runs.busy(s)).toBe(true);
    const idle = b.runs.idle(s);
    release.open();
    await run.done;
    // Whoever has seen the end finds the session free everywhere, at once.
    expect(await b.runs.busy(s)).toBe(false);
    await idle;
    const second = await b.runs.start(s, input);
    expect((await second.done).type).toBe('stream_end');
  });

  it('a watcher on the other member sees the run live, in order, as the owner`s watcher does — big events too', async () => {
    const s = newSession();
    const here = new Sink();
    const there = new Sink();
    const unwatchHere = a.runs.watch(s, here);
    const unwatchThere = b.runs.watch(s, there);
    await b.runs.announced();
    const big = 'x'.repeat(20_000);
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      for (let i = 0; i < 200; i++) {
        yield { type: 'stream_delta', delta: `${i} ` };
        if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      yield { type: 'tool_started', call_id: 'c1', tool: 'echo', args: { text: big }, is_subagent: false };
      yield end(big);
    });
    const run = await a.runs.start(s, input);
    await run.done;
    await there.waitFor(isTerminalEvent);
    expect(there.frames).toEqual(here.frames);
    expect(there.events.map((e) => e.seq)).toEqual(here.events.map((_, i) => i + 1));
    expect(there.events.at(-1)).toMatchObject({ type: 'stream_end', content: big });
    unwatchHere();
    unwatchThere();
  });

  it('a watcher joining the other member mid-run is replayed from seq 1, with no gap and no duplicate', async () => {
    const s = newSession();
    const half = gate();
    const here = new Sink();
    a.runs.watch(s, here);
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      for (let i = 0; i < 30; i++)
        yield { type: 'tool_started', call_id: `c${i}`, tool: 'echo', args: {}, is_subagent: false };
      await half.wait;
      for (let i = 0; i < 30; i++)
        yield { type: 'tool_started', call_id: `d${i}`, tool: 'echo', args: {}, is_subagent: false };
      yield end('done');
    });
    const run = await a.runs.start(s, input);
    await here.waitFor((e) => e.type === 'tool_started' && e.call_id === 'c29');
    const late = new Sink();
    b.runs.watch(s, late);
    await late.waitFor((e) => e.type === 'tool_started' && e.call_id === 'c29');
    half.open();
    await run.done;
    await late.waitFor(isTerminalEvent);
    expect(late.frames).toEqual(here.frames);
    expect(late.events.map((e) => e.seq)).toEqual(Array.from({ length: 62 }, (_, i) => i + 1));
  });

  it('stop sent to the other member stops the run; with nothing running anywhere it says false', async () => {
    const s = newSession();
    expect(await b.runs.stop(s)).toBe(false);
    a.agent.enqueue(async function* (_input, options) {
      yield { type: 'stream_start', trigger: 'user' };
      await aborted(options.signal);
      yield { type: 'stream_stopped', content: '' };
    });
    const run = await a.runs.start(s, input);
    expect(await b.runs.stop(s)).toBe(true);
    expect((await run.done).type).toBe('stream_stopped');
  });

  it('a stop or an answer that the live process running the run never replies to is refused with RUN_PROCESS_NO_REPLY (503)', async () => {
    const asker = await member(undefined, 200);
    const s = newSession();
    // A member that is alive (a connection carries its name) but hears nothing: it never replies.
    const owner = 'silent-member';
    const silent = new pg.Client({ connectionString: url, application_name: `navi-cluster:${owner}` });
    await silent.connect();
    try {
      // It holds the session, as a member running a run does.
      await silent.query(
        `SELECT pg_advisory_lock(hashtextextended(current_schema() || '/' || $1::text, 0))`,
        [s],
      );
      await a.db.query(
        'INSERT INTO active_runs (session_id, run_id, owner, started_at) VALUES ($1, $2, $3, $4)',
        [s, 'run-of-the-silent', owner, new Date().toISOString()],
      );
      for (const request of [() => asker.runs.stop(s), () => asker.runs.answer(s, 'call-1', true)]) {
        const refused = await request().catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(ApiError);
        expect(refused).toMatchObject({ code: 'RUN_PROCESS_NO_REPLY', status: 503 });
        expect((refused as ApiError).message).toMatch(/did not reply in time.*no reply within 0\.2 seconds/);
      }
    } finally {
      await silent.end();
      await a.db.query('DELETE FROM active_runs WHERE session_id = $1', [s]);
    }
  });

  it('a confirmation asked by a run with its only watcher on the other member is answered from there', async () => {
    const s = newSession();
    const there = new Sink();
    const unwatch = b.runs.watch(s, there);
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
    expect(await b.runs.answer(s, 'no-such-call', true)).toBe(false);
    expect(await b.runs.answer(s, 'call-1', true)).toBe(true);
    await run.done;
    expect(answer).toEqual({ approved: true });
    unwatch();
    await b.runs.announced();
    await waitUntil(() => !a.cluster.watchedElsewhere(s));
  });

  it('without a socket anywhere, a confirmation is refused at once (an internal watcher is nobody)', async () => {
    const s = newSession();
    b.runs.watch(s, new Sink('internal'));
    await b.runs.announced();
    let asked: boolean | undefined;
    a.agent.enqueue(async function* (_input, options) {
      yield { type: 'stream_start', trigger: 'user' };
      asked = options.confirm({ callId: 'c', tool: 'echo', args: {} }).asked;
      yield end('done');
    });
    await (await a.runs.start(s, input)).done;
    expect(asked).toBe(false);
  });

  it('events missed while the listening connection was cut are read back when it reconnects', async () => {
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    const step = gate();
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      await step.wait;
      for (let i = 0; i < 20; i++)
        yield { type: 'tool_started', call_id: `c${i}`, tool: 'echo', args: {}, is_subagent: false };
      yield end('done');
    });
    const run = await a.runs.start(s, input);
    await there.waitFor((e) => e.type === 'stream_start');
    const { listener } = b.cluster.connectionsForTest();
    const [pid] = await listener.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await a.db.query('SELECT pg_terminate_backend($1)', [pid?.pid]);
    step.open();
    await run.done;
    await there.waitFor(isTerminalEvent);
    expect(there.events.map((e) => e.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
  });

  it('runs that began while the listening connection was down, one already over and one waiting quietly, reach the watchers when it comes back', async () => {
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    await b.runs.announced();
    const { listener } = b.cluster.connectionsForTest();
    const resume = listener.holdReconnectingForTest();
    const [pid] = await listener.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await a.db.query('SELECT pg_terminate_backend($1)', [pid?.pid]);
    await waitUntil(() => !listener.connected);
    const over = await a.runs.start(s, input);
    await over.done;
    const step = gate();
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      await step.wait;
      yield end('later');
    });
    const quiet = await a.runs.start(s, input);
    await waitUntilAsync(
      async () => (await a.db.rows('SELECT 1 FROM run_events WHERE run_id = $1', [quiet.runId])).length > 0,
    );
    expect(there.events).toEqual([]);
    resume();
    await there.waitFor((e) => e.run_id === quiet.runId && e.type === 'stream_start');
    expect(there.ofRun(over.runId).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(there.ofRun(over.runId).at(-1)?.type).toBe('stream_end');
    step.open();
    await quiet.done;
    await there.waitFor((e) => e.run_id === quiet.runId && isTerminalEvent(e));
    expect(there.events.map((e) => [e.run_id, e.seq])).toEqual([
      ...[1, 2, 3].map((seq) => [over.runId, seq]),
      ...[1, 2].map((seq) => [quiet.runId, seq]),
    ]);
  });

  it('after its listening connection comes back, a member forgets the watchers it heard of before and keeps only those said again', async () => {
    const s = newSession();
    const [row] = await a.db.rows<{ channel: string }>(
      `SELECT 'navi_runs_' || substr(md5(current_schema()), 1, 16) AS channel`,
    );
    // A live member (a connection carries its name) that said a socket watches s, and whose
    // "no longer" the listener would miss; it answers no hello.
    const ghost = new pg.Client({ connectionString: url, application_name: 'navi-cluster:ghost' });
    await ghost.connect();
    try {
      const seal = new NoticeSeal(await clusterSecret(a.db));
      await ghost.query('SELECT pg_notify($1, $2)', [
        row?.channel,
        seal.seal(JSON.stringify({ k: 'presence', p: 'ghost', w: [[s, 1]] })),
      ]);
      await waitUntil(() => a.cluster.watchedElsewhere(s));
      const there = new Sink();
      const unwatch = b.runs.watch(s, there);
      await b.runs.announced();
      const { listener } = a.cluster.connectionsForTest();
      const [pid] = await listener.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await b.db.query('SELECT pg_terminate_backend($1)', [pid?.pid]);
      // Connected again: a query answers from another backend.
      await waitUntilAsync(async () => {
        const again = await listener.query<{ pid: number }>('SELECT pg_backend_pid() AS pid').catch(() => []);
        return again[0] !== undefined && again[0].pid !== pid?.pid;
      });
      // b answers the hello with its socket; the ghost's count is gone.
      await waitUntil(() => a.cluster.watchedElsewhere(s));
      unwatch();
      await b.runs.announced();
      await waitUntil(() => !a.cluster.watchedElsewhere(s));
    } finally {
      await ghost.end();
    }
  });

  it('after-run events and events outside any run reach the watchers on the other member', async () => {
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    const compressed = gate();
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      yield end('done');
      await compressed.wait;
      yield { type: 'context_compressed', messages_before: 10, messages_after: 2, context_tokens: 40 };
    });
    const run = await a.runs.start(s, input);
    await run.done;
    compressed.open();
    await there.waitFor((e) => e.type === 'context_compressed');
    expect(there.ofRun(run.runId).map((e) => [e.type, e.seq])).toEqual([
      ['stream_start', 1],
      ['stream_end', 2],
      ['context_compressed', 3],
    ]);
    a.runs.notify(s, { type: 'profile_switched', profile_id: 'p2', profile_name: 'Other' });
    await there.waitFor((e) => e.type === 'profile_switched');
    expect(there.events.at(-1)).toEqual({
      type: 'profile_switched',
      profile_id: 'p2',
      profile_name: 'Other',
    });
  });

  it('a recall due while the other member runs the session waits for that run, then starts', async () => {
    const s = newSession();
    const release = gate();
    a.agent.enqueue(async function* () {
      yield { type: 'stream_start', trigger: 'user' };
      await release.wait;
      yield end('done');
    });
    const run = await a.runs.start(s, input);
    const fire = {
      recall_id: 'r1',
      session_id: s,
      prompt: 'remind me',
      chain: 0,
      scheduled_for: new Date().toISOString(),
    };
    const first = await recallRunner(b.runs).start(fire);
    expect(first.kind).toBe('busy');
    let idle = false;
    const waited = first.kind === 'busy' ? first.idle.then(() => (idle = true)) : undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(idle).toBe(false);
    release.open();
    await run.done;
    await waited;
    const second = await recallRunner(b.runs).start(fire);
    expect(second.kind).toBe('started');
    if (second.kind === 'started') expect(await second.done).toEqual({ status: 'completed' });
  });

  it('the sweep ends the view of a run whose member vanished, removes its row, and the events of ended runs', async () => {
    const c = await member();
    const sweeper = await member(0);
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    c.agent.enqueue(async function* (_input, options) {
      yield { type: 'stream_start', trigger: 'user' };
      await aborted(options.signal);
      yield { type: 'stream_stopped', content: '' };
    });
    const run = await c.runs.start(s, input);
    await there.waitFor((e) => e.type === 'stream_start');
    const ended = await sweeper.runs.start(newSession(), input);
    await ended.done;
    await c.cluster.crashForTest();
    const count = async (sql: string, id: string) =>
      Number((await a.db.rows<{ n: number }>(sql, [id]))[0]?.n);
    // The server ends the vanished member's backends as it notices their sockets closed.
    await waitUntilAsync(async () => !(await a.cluster.activeElsewhere(s)));
    expect(await count('SELECT count(*) AS n FROM active_runs WHERE run_id = $1', run.runId)).toBe(1);
    await b.cluster.sweep();
    expect(there.ofRun(run.runId).at(-1)).toMatchObject({ type: 'error', message: OWNER_GONE, seq: 2 });
    await sweeper.cluster.sweep();
    expect(await count('SELECT count(*) AS n FROM active_runs WHERE run_id = $1', run.runId)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM run_events WHERE run_id = $1', ended.runId)).toBe(0);
    // The vanished run's events stay until they are as old as the sweeper keeps them: here, none.
    expect(await count('SELECT count(*) AS n FROM run_events WHERE run_id = $1', run.runId)).toBe(0);
  });

  it('a member that vanishes mid-run frees the session; the other member ends its watchers` view of that run', async () => {
    const c = await member();
    const s = newSession();
    const there = new Sink();
    b.runs.watch(s, there);
    c.agent.enqueue(async function* (_input, options) {
      yield { type: 'stream_start', trigger: 'user' };
      await aborted(options.signal);
      yield { type: 'stream_stopped', content: '' };
    });
    const run = await c.runs.start(s, input);
    await there.waitFor((e) => e.type === 'stream_start');
    await expect(b.runs.start(s, input)).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
    await c.cluster.crashForTest();
    const next = await startWhenFree(b, s);
    await there.waitFor((e) => e.run_id === next.runId && isTerminalEvent(e));
    const gone = there.ofRun(run.runId);
    expect(gone.at(-1)).toMatchObject({ type: 'error', message: OWNER_GONE, seq: 2 });
    expect(there.ofRun(next.runId).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});
