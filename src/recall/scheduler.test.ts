import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, settle } from '../../test/support/manual-clock.js';
import { silentLogger } from '../config/logger.js';
import type { RecallOutcome } from '../protocol/rest.js';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';
import { RecallScheduler } from './scheduler.js';
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

let dir: string;
let stores: SqliteStores;
let clock: ManualClock;

function scheduler(): RecallScheduler {
  return new RecallScheduler({
    store: stores.recalls,
    limits: { maxPerSession: 10, maxChain: 3 },
    logger: silentLogger(),
    clock,
    timeZone: 'UTC',
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'navi-recalls-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
  clock = new ManualClock('2026-11-25T12:00:00Z');
  await stores.sessions.create({ id: 's1', profile_id: 'plain' });
});
afterEach(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('RecallScheduler', () => {
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
    await clock.advance(60_000);
    expect(runner.fired).toHaveLength(1);
    expect((await recalls.list('s1'))[0]).toMatchObject({ status: 'active', run_count: 0 });
    recalls.stop();

    const next = scheduler();
    const working = new StubRunner();
    await clock.advance(10 * 60_000);
    await next.start(working);
    await settle();
    expect(working.fired).toEqual([expect.objectContaining({ prompt: 'p', late_ms: 10 * 60_000, chain: 1 })]);
    expect((await next.list('s1'))[0]).toMatchObject({
      status: 'done',
      run_count: 1,
      last_outcome: { status: 'completed' },
    });
  });

  it('records a failed run and keeps a recurring recall going', async () => {
    const recalls = scheduler();
    const runner = new StubRunner();
    const outcome: RecallOutcome = { status: 'failed', message: 'The LLM server cannot be reached' };
    runner.answer = () => ({ kind: 'started', done: Promise.resolve(outcome) });
    await recalls.start(runner);
    await recalls.schedule({ sessionId: 's1', prompt: 'p', when: { type: 'recurring', every: '5m' } });
    await clock.advance(5 * 60_000);
    await settle();
    expect((await recalls.list('s1'))[0]).toMatchObject({
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
    await clock.advance(60_000);
    expect(runner.fired).toHaveLength(1);
    if (!scheduled.ok) throw new Error(scheduled.error);
    await recalls.cancel('s1', scheduled.recall.id);
    idle();
    await settle();
    expect(runner.fired).toHaveLength(1);
  });

  it('arms nothing when nothing is active, and one timer for the soonest recall', async () => {
    const recalls = scheduler();
    await recalls.start(new StubRunner());
    expect(clock.pending).toBe(0);
    await recalls.schedule({ sessionId: 's1', prompt: 'later', when: { type: 'once', delay: '2h' } });
    await recalls.schedule({ sessionId: 's1', prompt: 'sooner', when: { type: 'once', delay: '1h' } });
    await settle();
    expect(clock.pending).toBe(1);
    expect(clock.nextTimerAt()?.toISOString()).toBe('2026-11-25T13:00:00.000Z');
  });

  it('refuses recalls for a session that does not exist', async () => {
    const recalls = scheduler();
    const result = await recalls.schedule({ sessionId: 'gone', prompt: 'p', when: { type: 'immediate' } });
    expect(result).toEqual({ ok: false, error: expect.stringContaining('no longer exists') });
  });

  it('resolves short ids only when they are unique and long enough', async () => {
    const ids = ['aaaaaaaa-1111', 'aaaaaaaa-2222', 'bbbbbbbb-3333'];
    const recalls = new RecallScheduler({
      store: stores.recalls,
      limits: { maxPerSession: 10, maxChain: 3 },
      logger: silentLogger(),
      clock,
      newId: () => ids.shift() ?? 'x',
    });
    for (let i = 0; i < 3; i++)
      await recalls.schedule({ sessionId: 's1', prompt: `p${i}`, when: { type: 'once', delay: '1h' } });
    expect(await recalls.cancel('s1', 'aaaaaaaa')).toMatchObject({ ok: false, code: 'RECALL_NOT_FOUND' });
    expect(await recalls.cancel('s1', 'bbb')).toMatchObject({ ok: false, code: 'RECALL_NOT_FOUND' });
    expect(await recalls.cancel('s1', 'bbbbbbbb')).toMatchObject({
      ok: true,
      recall: { id: 'bbbbbbbb-3333' },
    });
  });
});
