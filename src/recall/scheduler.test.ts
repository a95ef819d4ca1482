import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, settle } from '../../test/support/manual-clock.js';
import { silentLogger } from '../config/logger.js';
import type { RecallOutcome } from '../protocol/rest.js';
import { PgDatabase } from '../store/postgres/database.js';
import { PgRecallStore } from '../store/postgres/recall-store.js';
import { storeEngines, type TestStores } from '../store/test-engines.js';
import type { RecallRecord, RecallStore } from '../store/types.js';
import { RecallScheduler, type RecallSchedulerDeps } from './scheduler.js';
import type { RecallFire, RecallRunner, RecallStart } from './types.js';

/** A runner the test steers: it records what fired and answers with what the test chose. */
class StubRunner implements RecallRunner {
  readonly fired: RecallFire[] = [];
  answer: () => RecallStart = () => ({ kind: 'started', done: Promise.resolve({ status: 'completed' }) });
  async start(fire: RecallFire): Promise<RecallStart> {
    this.fired.push(fire);
    return this.answer();
  }
}

describe.each(storeEngines('recall scheduler'))('RecallScheduler on $name', ({ name, open }) => {
  let t: TestStores;
  let clock: ManualClock;
  let schedulers: RecallScheduler[];
  let pools: PgDatabase[];

  beforeEach(async () => {
    t = await open();
    clock = new ManualClock('2026-11-25T12:00:00Z');
    schedulers = [];
    pools = [];
    await t.stores.sessions.create({ id: 's1', profile_id: 'plain' });
  });
  afterEach(async () => {
    for (const s of schedulers) s.stop();
    await Promise.all(schedulers.map((s) => s.settled()));
    for (const pool of pools) await pool.close();
    await t.dispose();
  });

  function scheduler(deps: Partial<RecallSchedulerDeps> = {}): RecallScheduler {
    const created = new RecallScheduler({
      store: t.stores.recalls,
      limits: { maxPerSession: 10, maxChain: 3 },
      logger: silentLogger(),
      clock,
      timeZone: 'UTC',
      ...deps,
    });
    schedulers.push(created);
    return created;
  }

  /**
   * The recall store as a second Navi process sees it: its own pool on PostgreSQL. SQLite has
   * one process, so its second scheduler shares the store.
   */
  async function secondProcessStore(): Promise<RecallStore> {
    if (name === 'sqlite') return t.stores.recalls;
    const pool = await PgDatabase.open(t.settings.DATABASE_URL, { max: 4 });
    pools.push(pool);
    return new PgRecallStore(pool);
  }

  /** Lets every scheduler finish what the last timers started (the store may answer later). */
  async function quiet(): Promise<void> {
    await settle();
    await Promise.all(schedulers.map((s) => s.settled()));
  }

  /**
   * Moves the clock to `target` one timer at a time, letting the schedulers settle after each,
   * so that every pass sees the time its timer was set for.
   */
  async function advance(ms: number): Promise<void> {
    const target = clock.now().getTime() + ms;
    for (;;) {
      await quiet();
      const next = clock.nextTimerAt();
      if (!next || next.getTime() > target) break;
      await clock.advanceTo(next);
    }
    await clock.advanceTo(new Date(target));
    await quiet();
  }

  async function only(recalls: RecallScheduler): Promise<RecallRecord> {
    const [first] = await recalls.list('s1');
    if (!first) throw new Error('no recall');
    return first;
  }

  it('leaves a recall due when no run can start, and fires it at the next start', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    runner.answer = () => ({ kind: 'closed' });
    await recalls.start(runner);
    const scheduled = await recalls.schedule({
      sessionId: 's1',
      prompt: 'p',
      when: { type: 'once', delay: '1m' },
    });
    expect(scheduled.ok).toBe(true);
    await advance(60_000);
    expect(runner.fired).toHaveLength(1);
    expect(await only(recalls)).toMatchObject({ status: 'active', run_count: 0 });
    recalls.stop();

    const next = scheduler();
    const working = new StubRunner();
    await advance(10 * 60_000);
    await next.start(working);
    await quiet();
    expect(working.fired).toEqual([expect.objectContaining({ prompt: 'p', late_ms: 10 * 60_000, chain: 1 })]);
    expect(await only(next)).toMatchObject({
      status: 'done',
      run_count: 1,
      last_outcome: { status: 'completed' },
    });
  });

  it('polls without reading a prompt until a recall is due', async () => {
    const real = t.stores.recalls;
    // Ids of the recalls whose whole rows (prompts up to 20 000 characters) a pass read.
    const wholeRowsRead: string[] = [];
    const store: RecallStore = {
      add: (r) => real.add(r),
      get: (id) => real.get(id),
      listForSession: (id, limit) => real.listForSession(id, limit),
      countActive: (id) => real.countActive(id),
      soonest: async (limit) => {
        const times = await real.soonest(limit);
        for (const r of times) if ('prompt' in r) wholeRowsRead.push(r.id);
        return times;
      },
      due: async (nowIso, limit) => {
        const due = await real.due(nowIso, limit);
        wholeRowsRead.push(...due.map((r) => r.id));
        return due;
      },
      update: (id, patch) => real.update(id, patch),
      claim: (id, dueAt, start) => real.claim(id, dueAt, start),
    };
    const recalls = scheduler({ store, pollMs: 15_000 });
    const runner = new StubRunner();
    await recalls.start(runner);
    const scheduled = await recalls.schedule({
      sessionId: 's1',
      prompt: 'x'.repeat(20_000),
      when: { type: 'once', delay: '1h' },
    });
    if (!scheduled.ok) throw new Error(scheduled.error);
    await advance(30 * 60_000);
    expect(runner.fired).toEqual([]);
    expect(wholeRowsRead).toEqual([]);
    await advance(30 * 60_000);
    expect(runner.fired).toHaveLength(1);
    expect(wholeRowsRead).toEqual([scheduled.recall.id]);
  });

  it('moves a recall on whose run started although storing its claim failed, so it runs once', async () => {
    const real = t.stores.recalls;
    let failures = 1;
    // The claim's start runs, but its commit is lost (the connection broke): nothing is stored.
    const store: RecallStore = {
      add: (r) => real.add(r),
      get: (id) => real.get(id),
      listForSession: (id, limit) => real.listForSession(id, limit),
      countActive: (id) => real.countActive(id),
      soonest: (limit) => real.soonest(limit),
      due: (nowIso, limit) => real.due(nowIso, limit),
      update: (id, patch) => real.update(id, patch),
      claim: async (id, dueAt, start) => {
        if (failures === 0) return real.claim(id, dueAt, start);
        failures -= 1;
        await real.claim(id, dueAt, async (current) => ({ value: (await start(current)).value }));
        throw new Error('Connection terminated unexpectedly');
      },
    };
    const recalls = scheduler({ store, pollMs: 30_000 });
    const runner = new StubRunner();
    await recalls.start(runner);
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'once', delay: '1m' } });
    await advance(5 * 60_000);
    expect(runner.fired).toHaveLength(1);
    expect(await only(recalls)).toMatchObject({
      status: 'done',
      run_count: 1,
      last_run_at: '2026-11-25T12:01:00.000Z',
      last_outcome: { status: 'completed' },
    });
  });

  it('tries a recall whose firing failed again a minute later, without polling', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    let failures = 1;
    const works = runner.answer;
    runner.answer = () => {
      if (failures-- > 0) throw new Error('the run registry failed');
      return works();
    };
    await recalls.start(runner);
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'once', delay: '1m' } });
    await advance(60_000);
    expect(runner.fired).toHaveLength(1);
    expect(await only(recalls)).toMatchObject({ status: 'active', run_count: 0 });
    await advance(60_000);
    expect(runner.fired).toHaveLength(2);
    expect(await only(recalls)).toMatchObject({ status: 'done', run_count: 1 });
  });

  it('records a failed run and keeps a recurring recall going', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    const outcome: RecallOutcome = { status: 'failed', message: 'The LLM server cannot be reached' };
    runner.answer = () => ({ kind: 'started', done: Promise.resolve(outcome) });
    await recalls.start(runner);
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'recurring', every: '5m' } });
    await advance(5 * 60_000);
    expect(await only(recalls)).toMatchObject({
      status: 'active',
      last_outcome: outcome,
      next_run_at: '2026-11-25T12:10:00.000Z',
    });
  });

  it('does not fire a recall cancelled while it waited for its busy session', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    let idle!: () => void;
    runner.answer = () => ({
      kind: 'busy',
      idle: new Promise<void>((resolve) => {
        idle = resolve;
      }),
    });
    await recalls.start(runner);
    const scheduled = await recalls.schedule({
      sessionId: 's1',
      prompt: 'p',
      when: { type: 'once', delay: '1m' },
    });
    await advance(60_000);
    expect(runner.fired).toHaveLength(1);
    if (!scheduled.ok) throw new Error(scheduled.error);
    await recalls.cancel('s1', scheduled.recall.id);
    idle();
    await quiet();
    expect(runner.fired).toHaveLength(1);
  });

  it('fires a recall that waited for its busy session once the session is free, and moves it on then', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    let idle!: () => void;
    runner.answer = () => ({
      kind: 'busy',
      idle: new Promise<void>((resolve) => {
        idle = resolve;
      }),
    });
    await recalls.start(runner);
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'once', delay: '1m' } });
    await advance(60_000);
    expect(await only(recalls)).toMatchObject({ status: 'active', run_count: 0 });
    runner.answer = () => ({ kind: 'started', done: Promise.resolve({ status: 'completed' }) });
    idle();
    await quiet();
    expect(runner.fired).toHaveLength(2);
    expect(await only(recalls)).toMatchObject({ status: 'done', run_count: 1 });
  });

  it('arms nothing when nothing is active, and one timer for the soonest recall', async () => {
    const recalls = scheduler();
    await recalls.start(new StubRunner());
    expect(clock.pending).toBe(0);
    await recalls.schedule({ sessionId: 's1', prompt: 'later', when: { type: 'once', delay: '2h' } });
    await recalls.schedule({ sessionId: 's1', prompt: 'sooner', when: { type: 'once', delay: '1h' } });
    await quiet();
    expect(clock.pending).toBe(1);
    expect(clock.nextTimerAt()?.toISOString()).toBe('2026-11-25T13:00:00.000Z');
  });

  it('with pollMs, looks at the store at least that often, even with nothing active', async () => {
    const recalls = scheduler({ pollMs: 15_000 });
    await recalls.start(new StubRunner());
    expect(clock.nextTimerAt()?.toISOString()).toBe('2026-11-25T12:00:15.000Z');
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'once', delay: '5s' } });
    await quiet();
    expect(clock.nextTimerAt()?.toISOString()).toBe('2026-11-25T12:00:05.000Z');
  });

  it('refuses recalls for a session that does not exist', async () => {
    const recalls = scheduler();
    const result = await recalls.schedule({ sessionId: 'gone', prompt: 'p', when: { type: 'immediate' } });
    expect(result).toEqual({ ok: false, error: expect.stringContaining('no longer exists') });
  });

  it('resolves short ids only when they are unique and long enough', async () => {
    const ids = ['aaaaaaaa-1111', 'aaaaaaaa-2222', 'bbbbbbbb-3333'];
    const recalls = scheduler({ newId: () => ids.shift() ?? 'x' });
    for (let i = 0; i < 3; i++)
      await recalls.schedule({ sessionId: 's1', prompt: `p${i}`, when: { type: 'once', delay: '1h' } });
    expect(await recalls.cancel('s1', 'aaaaaaaa')).toMatchObject({ ok: false, code: 'RECALL_NOT_FOUND' });
    expect(await recalls.cancel('s1', 'bbb')).toMatchObject({ ok: false, code: 'RECALL_NOT_FOUND' });
    expect(await recalls.cancel('s1', 'bbbbbbbb')).toMatchObject({
      ok: true,
      recall: { id: 'bbbbbbbb-3333' },
    });
  });

  describe('two processes on one database', () => {
    it('fires every due recall exactly once, and a recurring one once per occurrence', async () => {
      await t.stores.sessions.create({ id: 's2', profile_id: 'plain' });
      const a = scheduler({ pollMs: 30_000 });
      const b = scheduler({ pollMs: 30_000, store: await secondProcessStore() });
      const runners = [new StubRunner(), new StubRunner()];
      // Starting a run takes a moment, so the two meet over the same occurrence.
      for (const runner of runners) {
        runner.answer = () => ({
          kind: 'started',
          done: new Promise<RecallOutcome>((resolve) => setImmediate(() => resolve({ status: 'completed' }))),
        });
      }
      await a.start(runners[0] as StubRunner);
      await b.start(runners[1] as StubRunner);
      for (const [i, sessionId] of ['s1', 's1', 's1', 's2', 's2'].entries()) {
        await (i % 2 ? a : b).schedule({
          sessionId,
          prompt: `once ${i}`,
          when: { type: 'once', delay: '2m' },
        });
      }
      await a.schedule({ sessionId: 's2', prompt: 'every', when: { type: 'recurring', every: '5m' } });
      await advance(30 * 60_000);

      const fired = runners.flatMap((r) => r.fired);
      const onces = fired.filter((f) => f.prompt.startsWith('once')).map((f) => f.prompt);
      expect(onces.sort()).toEqual(['once 0', 'once 1', 'once 2', 'once 3', 'once 4']);
      const every = fired.filter((f) => f.prompt === 'every').map((f) => f.scheduled_for);
      expect(every.sort()).toEqual(
        ['05', '10', '15', '20', '25', '30'].map((m) => `2026-11-25T12:${m}:00.000Z`),
      );
      const stored = [...(await a.list('s1')), ...(await a.list('s2'))];
      for (const r of stored) expect(r.run_count).toBe(r.prompt === 'every' ? 6 : 1);
    });

    it('fires on time a recall scheduled through the other process, which then stopped', async () => {
      const a = scheduler();
      const b = scheduler({ pollMs: 30_000, store: await secondProcessStore() });
      const runner = new StubRunner();
      await b.start(runner);
      await a.start(new StubRunner());
      await a.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'once', delay: '2m' } });
      a.stop();
      await advance(2 * 60_000);
      expect(runner.fired).toEqual([
        expect.objectContaining({ prompt: 'p', scheduled_for: '2026-11-25T12:02:00.000Z' }),
      ]);
      expect(runner.fired[0]?.late_ms).toBeUndefined();
      expect(await only(b)).toMatchObject({ status: 'done', run_count: 1 });
    });

    it('leaves an occurrence another process holds, and fires it if that one let go without running it', async () => {
      const other = await secondProcessStore();
      const recalls = scheduler({ pollMs: 30_000 });
      const runner = new StubRunner();
      await recalls.start(runner);
      const scheduled = await recalls.schedule({
        sessionId: 's1',
        prompt: 'p',
        when: { type: 'once', delay: '1m' },
      });
      if (!scheduled.ok) throw new Error(scheduled.error);
      const due = scheduled.recall.next_run_at ?? '';
      // The other process holds the occurrence while its run starts, then fails (or dies).
      let letGo!: () => void;
      const holding = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const held = other.claim(scheduled.recall.id, due, async () => {
        entered();
        await holding;
        throw new Error('the other process fell over');
      });
      await inside;
      await advance(60_000);
      expect(runner.fired).toEqual([]);
      // It tries again after pollMs, not in a loop meanwhile.
      expect(clock.nextTimerAt()?.toISOString()).toBe('2026-11-25T12:01:30.000Z');
      letGo();
      await expect(held).rejects.toThrow('fell over');
      await advance(30_000);
      expect(runner.fired).toEqual([expect.objectContaining({ prompt: 'p', late_ms: 30_000 })]);
      expect(await only(recalls)).toMatchObject({ status: 'done', run_count: 1 });
    });
  });
});
