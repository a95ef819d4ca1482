/**
 * At most one active `AgentRun` per session, plus the WebSocket clients watching each session.
 * A socket subscribes to its session, not to a run: it receives every run of the session that
 * is active while it is attached, whoever started it (WebSocket, REST or a recall).
 */
import type { Logger } from 'pino';
import type { AgentApi, RunInput } from '../agent/types.js';
import type { AgentEvent } from '../protocol/events.js';
import { AgentRun } from './agent-run.js';
import { FlushClock } from './delta-coalescer.js';
import { ApiError } from './errors.js';
import type { RunSubscriber } from './run-subscriber.js';

export interface RunRegistryOptions {
  agent: AgentApi;
  logger: Logger;
  confirmTimeoutMs: number;
  coalesceWindowMs?: number;
}

export class RunRegistry {
  private readonly runs = new Map<string, AgentRun>();
  private readonly watchers = new Map<string, Set<RunSubscriber>>();
  private closing = false;
  /** One timer closes the coalescing windows of every run, however many stream at once. */
  private readonly flushClock: FlushClock;

  constructor(private readonly options: RunRegistryOptions) {
    this.flushClock = new FlushClock(options.coalesceWindowMs);
  }

  /** Runs in progress, and sockets watching a session (`GET /internal/metrics`). */
  counts(): { runs: number; watchers: number } {
    let watchers = 0;
    for (const set of this.watchers.values()) watchers += set.size;
    return { runs: this.runs.size, watchers };
  }

  /** The active run of a session, if any. */
  get(sessionId: string): AgentRun | undefined {
    return this.runs.get(sessionId);
  }

  /**
   * Starts a run. Throws `ApiError('RUN_ACTIVE')` when the session already has one, and
   * `SHUTTING_DOWN` while the server closes. Every socket watching the session is subscribed
   * before the first event.
   */
  start(sessionId: string, input: RunInput): AgentRun {
    if (this.closing) throw new ApiError('SHUTTING_DOWN');
    if (this.runs.has(sessionId)) throw new ApiError('RUN_ACTIVE');
    const run = new AgentRun({
      sessionId,
      agent: this.options.agent,
      logger: this.options.logger,
      confirmTimeoutMs: this.options.confirmTimeoutMs,
      flushClock: this.flushClock,
      onEnd: (ended) => {
        if (this.runs.get(sessionId) === ended) this.runs.delete(sessionId);
      },
      onAfterEnd: (event, json) => {
        for (const watcher of [...(this.watchers.get(sessionId) ?? [])]) watcher.deliver(event, json);
      },
    });
    this.runs.set(sessionId, run);
    for (const watcher of this.watchers.get(sessionId) ?? []) run.subscribe(watcher);
    run.start(input);
    return run;
  }

  /**
   * Watches a session: the active run (replayed from its first event) and every later run.
   * Returns the function that stops watching.
   */
  watch(sessionId: string, subscriber: RunSubscriber): () => void {
    let set = this.watchers.get(sessionId);
    if (!set) {
      set = new Set();
      this.watchers.set(sessionId, set);
    }
    set.add(subscriber);
    this.runs.get(sessionId)?.subscribe(subscriber);
    return () => {
      // Whichever run is active now (maybe one started after we attached) forgets this socket.
      this.runs.get(sessionId)?.unsubscribe(subscriber);
      const current = this.watchers.get(sessionId);
      current?.delete(subscriber);
      if (current && current.size === 0) this.watchers.delete(sessionId);
    };
  }

  /**
   * Sends an event that belongs to no run (a profile changed between runs) to every socket
   * watching the session, as it is: without `run_id` and `seq`.
   */
  notify(sessionId: string, event: AgentEvent): void {
    const json = JSON.stringify(event);
    for (const watcher of [...(this.watchers.get(sessionId) ?? [])]) watcher.deliver(event, json);
  }

  /** Stops the session's run. False when nothing was running. */
  stop(sessionId: string): boolean {
    return this.runs.get(sessionId)?.stop() ?? false;
  }

  /** Answers a pending confirmation of this session's run only. */
  answer(sessionId: string, callId: string, approved: boolean): boolean {
    return this.runs.get(sessionId)?.answer(callId, approved) ?? false;
  }

  /** Refuses new runs, stops the active ones and waits up to `graceMs` for them to end. */
  async close(graceMs = 3000): Promise<void> {
    this.closing = true;
    const active = [...this.runs.values()];
    for (const run of active) run.stop();
    if (active.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(active.map((run) => run.done)).then(() => undefined), timeout]);
    clearTimeout(timer);
    const stuck = active.filter((run) => !run.finished).length;
    if (stuck > 0) this.options.logger.warn({ stuck }, 'runs still active at shutdown');
  }
}
