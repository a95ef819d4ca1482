/**
 * The recall scheduler: keeps one timer for the soonest recall, fires recalls that are due by
 * asking the runner for a headless run in their session, and moves each recall on (to its next
 * occurrence, or to `done`). Also the service the tools and REST routes use to schedule, list,
 * cancel and skip recalls, so every change re-arms the timer at once.
 *
 * Rules (docs/recalls.md):
 * - A recall due while Navi was not running fires once when the scheduler starts, and its run
 *   is told how late it is; missed occurrences of a recurring recall are not made up.
 * - A recall due while its session is in a run waits for that run to end.
 * - A recall is moved on only once its run has started: if Navi stops first, it stays due and
 *   fires at the next start.
 * - A chain of recalls scheduled by recall runs is bounded (RECALL_MAX_CHAIN), and so is the
 *   number of active recalls per session (RECALL_MAX_PER_SESSION).
 * - With several processes on one database, each occurrence fires on one of them: the store's
 *   `claim` holds it while its run starts and moves it on in the same step. A process sees what
 *   another scheduled only by reading the store, so with `pollMs` it reads it at least that often.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RecallSummary } from '../protocol/rest.js';
import type { RecallClaim, RecallClaimStart, RecallRecord, RecallStore } from '../store/types.js';
import { type RecallClock, systemClock } from './clock.js';
import { describeSchedule, localTimeZone, nextAfter, parseWhen } from './schedule.js';
import type {
  RecallChange,
  RecallFire,
  RecallRunner,
  RecallService,
  RecallStart,
  ScheduleRequest,
} from './types.js';

export interface RecallSchedulerDeps {
  store: RecallStore;
  limits: { maxPerSession: number; maxChain: number };
  logger: Logger;
  clock?: RecallClock;
  /** Zone for times given without one; the machine's by default. */
  timeZone?: string;
  newId?: () => string;
  /** A run that starts later than this after its due time is told it is late. */
  lateAfterMs?: number;
  /**
   * Re-reads the store at least this often, for recalls other processes scheduled, cancelled or
   * hold. Unset: only this process changes recalls (SQLite), so its own changes re-arm the timer.
   */
  pollMs?: number;
}

/** How long an occurrence another process holds is left alone without `pollMs`. */
const HELD_RETRY_MS = 30_000;

const MAX_PROMPT_CHARS = 20_000;
const BATCH = 50;
/** How long a recall whose firing failed (the store or the runner threw) waits to be tried again. */
const RETRY_AFTER_FAILURE_MS = 60_000;

export class RecallScheduler implements RecallService {
  private readonly clock: RecallClock;
  readonly timeZone: string;
  private readonly newId: () => string;
  private runner: RecallRunner | undefined;
  private cancelTimer: (() => void) | undefined;
  /** Recalls between "due" and "their run started" (maybe waiting for a busy session). */
  private readonly inFlight = new Set<string>();
  /**
   * Occurrences left alone until a time: another process held them when this one tried (it moves
   * them on itself once their run starts; looking again covers a holder that died first), or
   * firing them failed here (the store or the runner threw).
   */
  private readonly waiting = new Map<string, { dueAt: string; until: number }>();
  private ticking = false;
  private tickAgain = false;
  /** Passes over the store and recalls being fired or followed, for `settled`. */
  private working = 0;
  private settledWaiters: Array<() => void> = [];

  constructor(private readonly deps: RecallSchedulerDeps) {
    this.clock = deps.clock ?? systemClock;
    this.timeZone = deps.timeZone ?? localTimeZone();
    this.newId = deps.newId ?? randomUUID;
  }

  now(): Date {
    return this.clock.now();
  }

  /** Starts firing: recalls missed while Navi was down fire now, once each. */
  async start(runner: RecallRunner): Promise<void> {
    this.runner = runner;
    await this.tick();
  }

  /**
   * Resolves once this scheduler has nothing in progress with the store: no pass over it, no
   * claim, no outcome being recorded. Waiting for a busy session or a run, and timers not yet
   * due, do not count. Tests wait on it where the store answers asynchronously.
   */
  async settled(): Promise<void> {
    for (;;) {
      while (this.working > 0) await new Promise<void>((resolve) => this.settledWaiters.push(resolve));
      // A run that ended at once resumes its recall in a microtask: let those run, then look again.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.working === 0) return;
    }
  }

  /** Waits for something outside the scheduler (a busy session, a run) without counting as work. */
  private async outside<T>(wait: Promise<T>): Promise<T> {
    this.finishWork();
    try {
      return await wait;
    } finally {
      this.working += 1;
    }
  }

  private finishWork(): void {
    this.working -= 1;
    if (this.working > 0) return;
    const waiters = this.settledWaiters;
    this.settledWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Stops firing; recalls still due fire at the next start. */
  stop(): void {
    this.runner = undefined;
    this.waiting.clear();
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  async schedule(
    request: ScheduleRequest,
  ): Promise<{ ok: true; recall: RecallSummary } | { ok: false; error: string }> {
    const { maxChain, maxPerSession } = this.deps.limits;
    const chain = (request.origin?.chain ?? 0) + 1;
    if (chain > maxChain) {
      return {
        ok: false,
        error:
          `Not scheduled: this run was started by a chain of ${chain - 1} recalls, each scheduled by the one before, ` +
          `and RECALL_MAX_CHAIN (${maxChain}) stops the chain here so that a loop cannot run away. ` +
          'Finish the work in this run, or leave a note for the user.',
      };
    }
    const prompt = request.prompt.trim();
    if (prompt === '')
      return { ok: false, error: 'The prompt is empty; say what the recall should do when it runs.' };
    if (prompt.length > MAX_PROMPT_CHARS) {
      return {
        ok: false,
        error: `The prompt has ${prompt.length} characters; keep it under ${MAX_PROMPT_CHARS} (put long material in the scratchpad or a file and refer to it).`,
      };
    }
    const active = await this.deps.store.countActive(request.sessionId);
    if (active >= maxPerSession) {
      return {
        ok: false,
        error: `Not scheduled: this session already has ${active} active recalls, the most RECALL_MAX_PER_SESSION allows. Cancel one with manage_recall first.`,
      };
    }
    const now = this.clock.now();
    const parsed = parseWhen(request.when, now, this.timeZone);
    if ('error' in parsed) return { ok: false, error: parsed.error };
    const record: RecallRecord = {
      id: this.newId(),
      session_id: request.sessionId,
      prompt,
      schedule: parsed.schedule,
      status: 'active',
      next_run_at: parsed.next.toISOString(),
      last_run_at: null,
      last_outcome: null,
      run_count: 0,
      chain,
      created_at: now.toISOString(),
    };
    try {
      await this.deps.store.add(record);
    } catch (err) {
      this.deps.logger.warn({ err, session_id: request.sessionId }, 'recall not stored');
      return { ok: false, error: 'The recall could not be stored: the session no longer exists.' };
    }
    this.kick();
    return { ok: true, recall: this.summary(record) };
  }

  async list(sessionId: string): Promise<RecallSummary[]> {
    return (await this.deps.store.listForSession(sessionId)).map((r) => this.summary(r));
  }

  async cancel(sessionId: string, id: string): Promise<RecallChange> {
    const found = await this.activeRecall(sessionId, id);
    if (!found.ok) return found;
    const updated = await this.deps.store.update(found.record.id, { status: 'cancelled', next_run_at: null });
    this.kick();
    return { ok: true, recall: this.summary(updated ?? found.record) };
  }

  async skip(sessionId: string, id: string): Promise<RecallChange> {
    const found = await this.activeRecall(sessionId, id);
    if (!found.ok) return found;
    const { record } = found;
    const due = new Date(record.next_run_at ?? this.clock.now());
    const next = nextAfter(record.schedule, due, this.clock.now());
    const updated = await this.deps.store.update(
      record.id,
      next
        ? { next_run_at: next.toISOString() }
        : { status: 'done', next_run_at: null, last_outcome: { status: 'not_run', message: 'skipped' } },
    );
    this.kick();
    return { ok: true, recall: this.summary(updated ?? record) };
  }

  /** The stored recall with its schedule in words. */
  summary(record: RecallRecord): RecallSummary {
    return { ...record, description: describeSchedule(record.schedule, this.timeZone) };
  }

  private async activeRecall(
    sessionId: string,
    id: string,
  ): Promise<{ ok: true; record: RecallRecord } | Extract<RecallChange, { ok: false }>> {
    const record = await this.find(sessionId, id.trim());
    if (!record) {
      return {
        ok: false,
        code: 'RECALL_NOT_FOUND',
        message: `This session has no recall "${id}"; list them with manage_recall action "list".`,
      };
    }
    if (record.status !== 'active') {
      return {
        ok: false,
        code: 'RECALL_FINISHED',
        message: `Recall ${record.id} is ${record.status === 'done' ? 'already done' : 'already cancelled'}; there is nothing left to cancel or skip.`,
      };
    }
    return { ok: true, record };
  }

  private async find(sessionId: string, id: string): Promise<RecallRecord | undefined> {
    if (id === '') return undefined;
    const exact = await this.deps.store.get(id);
    if (exact) return exact.session_id === sessionId ? exact : undefined;
    if (id.length < 6) return undefined;
    const matches = (await this.deps.store.listForSession(sessionId, 1000)).filter((r) =>
      r.id.startsWith(id),
    );
    return matches.length === 1 ? matches[0] : undefined;
  }

  /** Re-arms soon, without waiting: called after every change. */
  private kick(): void {
    if (this.runner) void this.tick();
  }

  /** Fires what is due, then arms the timer for the soonest recall not yet in flight. */
  private async tick(): Promise<void> {
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    this.working += 1;
    try {
      // A change during either step (a run started, a recall scheduled) asks for another pass.
      do {
        this.tickAgain = false;
        await this.fireDue();
        await this.arm();
      } while (this.tickAgain && this.runner);
    } catch (err) {
      this.deps.logger.error({ err }, 'recall scheduler failed; retrying in a minute');
      this.setTimer(60_000);
    } finally {
      this.ticking = false;
      this.finishWork();
    }
  }

  /**
   * Fires each recall due now once; one that cannot start stays due for a later pass. Reads only
   * due recalls: a poll that finds none due reads no prompts.
   */
  private async fireDue(): Promise<void> {
    const now = this.clock.now();
    const nowMs = now.getTime();
    const fired = new Set<string>();
    for (;;) {
      if (!this.runner) return;
      const limit = this.inFlight.size + this.waiting.size + fired.size + BATCH;
      const page = await this.deps.store.due(now.toISOString(), limit);
      const due = page.filter(
        (r) => !this.inFlight.has(r.id) && !fired.has(r.id) && !this.isWaiting(r, nowMs),
      );
      for (const recall of due) {
        fired.add(recall.id);
        this.fire(recall);
      }
      // A short page means every due recall was seen.
      if (due.length === 0 || page.length < limit) return;
    }
  }

  private async arm(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (!this.runner) return;
    const now = this.clock.now().getTime();
    const candidates = await this.deps.store.soonest(this.inFlight.size + this.waiting.size + 1);
    // An occurrence left waiting is looked at again when its wait ends, not when it was due.
    let at = Number.POSITIVE_INFINITY;
    for (const [id, held] of this.waiting) if (held.until <= now) this.waiting.delete(id);
    for (const recall of candidates) {
      if (this.inFlight.has(recall.id) || !recall.next_run_at) continue;
      const held = this.waiting.get(recall.id);
      const wait = held?.dueAt === recall.next_run_at ? held.until : 0;
      at = Math.min(at, Math.max(Date.parse(recall.next_run_at), wait));
    }
    if (this.deps.pollMs !== undefined) at = Math.min(at, now + this.deps.pollMs);
    if (at === Number.POSITIVE_INFINITY) return;
    this.setTimer(at - now);
  }

  /** Whether this occurrence of `recall` is left alone (see `waiting`) until after `now`. */
  private isWaiting(recall: RecallRecord, now: number): boolean {
    const held = this.waiting.get(recall.id);
    return held !== undefined && held.dueAt === recall.next_run_at && held.until > now;
  }

  private setTimer(ms: number): void {
    this.cancelTimer?.();
    this.cancelTimer = this.clock.setTimer(() => void this.tick(), Math.max(0, ms));
  }

  private fire(recall: RecallRecord): void {
    this.inFlight.add(recall.id);
    this.working += 1;
    this.attempt(recall)
      .catch((err: unknown) => {
        this.inFlight.delete(recall.id);
        this.deps.logger.error(
          { err, recall_id: recall.id },
          'recall could not be fired; trying again in a minute',
        );
        // Not at once (the same failure would repeat in a loop), nor only at the next change.
        if (recall.next_run_at) {
          this.waiting.set(recall.id, {
            dueAt: recall.next_run_at,
            until: this.clock.now().getTime() + RETRY_AFTER_FAILURE_MS,
          });
        }
        this.kick();
      })
      .finally(() => this.finishWork());
  }

  private async attempt(seen: RecallRecord): Promise<void> {
    const runner = this.runner;
    let begun: RecallClaimStart<{ started: RecallStart; current: RecallRecord }> | undefined;
    let claim: RecallClaim<{ started: RecallStart; current: RecallRecord }>;
    try {
      // Cancelled, skipped, run elsewhere or deleted with its session while it waited: nothing to run.
      claim =
        runner && seen.next_run_at
          ? await this.deps.store.claim(seen.id, seen.next_run_at, async (current) => {
              const result = await this.startRun(runner, current);
              if (result.patch) begun = result;
              return result;
            })
          : { kind: 'gone' };
    } catch (err) {
      if (!begun?.patch) throw err;
      // The run started but storing the claim failed (a connection lost at its commit): the
      // recall is still due, and would run again once this run ends. Move it on now instead.
      this.deps.logger.warn({ err, recall_id: seen.id }, 'recall run started but its claim was not stored');
      await this.deps.store.update(seen.id, begun.patch);
      claim = { kind: 'claimed', value: begun.value };
    }
    if (claim.kind !== 'claimed') {
      this.inFlight.delete(seen.id);
      if (claim.kind === 'taken' && seen.next_run_at) {
        const until = this.clock.now().getTime() + (this.deps.pollMs ?? HELD_RETRY_MS);
        this.waiting.set(seen.id, { dueAt: seen.next_run_at, until });
      }
      this.deps.logger.debug({ recall_id: seen.id, claim: claim.kind }, 'recall not fired here');
      this.kick();
      return;
    }
    const { started, current } = claim.value;
    if (started.kind === 'closed') {
      // The server is closing: nothing more can run, so firing stops until the next start.
      this.inFlight.delete(current.id);
      if (this.runner === runner) this.stop();
      return;
    }
    if (started.kind === 'busy') {
      this.deps.logger.info(
        { recall_id: current.id, session_id: current.session_id },
        'recall waits for the session',
      );
      await this.outside(started.idle.catch(() => undefined));
      return this.attempt(seen);
    }
    this.deps.logger.info(
      { recall_id: current.id, session_id: current.session_id, scheduled_for: seen.next_run_at },
      'recall fired',
    );
    this.inFlight.delete(current.id);
    this.kick();
    const outcome = await this.outside(started.done);
    await this.deps.store.update(current.id, { last_outcome: outcome });
  }

  /**
   * Asks the runner for the run while the store holds the occurrence; a run that started moves
   * the recall on (to its next occurrence, or to `done`) in the same step.
   */
  private async startRun(
    runner: RecallRunner,
    current: RecallRecord,
  ): Promise<RecallClaimStart<{ started: RecallStart; current: RecallRecord }>> {
    const due = new Date(current.next_run_at ?? 0);
    const startAt = this.clock.now();
    const late = startAt.getTime() - due.getTime();
    const fire: RecallFire = {
      recall_id: current.id,
      session_id: current.session_id,
      prompt: current.prompt,
      chain: current.chain,
      scheduled_for: due.toISOString(),
      ...(late > (this.deps.lateAfterMs ?? 5000) ? { late_ms: late } : {}),
    };
    const started = await runner.start(fire);
    if (started.kind !== 'started') return { value: { started, current } };
    const next = nextAfter(current.schedule, due, startAt);
    return {
      value: { started, current },
      patch: {
        status: next ? 'active' : 'done',
        next_run_at: next ? next.toISOString() : null,
        last_run_at: startAt.toISOString(),
        run_count: current.run_count + 1,
      },
    };
  }
}
