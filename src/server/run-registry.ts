/**
 * At most one active `AgentRun` per session, plus the WebSocket clients watching each session.
 * A socket subscribes to its session, not to a run: it receives every run of the session that
 * is active while it is attached, whoever started it (WebSocket, REST or a recall).
 *
 * With a cluster (several processes on one PostgreSQL database), "at most one" holds across
 * processes: a run starts only once this process has claimed the session, its events are shared
 * with the others, and the runs the others execute reach the sockets watching here. Without one
 * (SQLite), nothing of that runs: not a line more per event.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AgentApi, RunInput } from '../agent/types.js';
import type { ErrorCode } from '../protocol/error-codes.js';
import type { AgentEvent, ElicitationAction } from '../protocol/events.js';
import { AgentRun } from './agent-run.js';
import type { ClusterClaim, RunCluster } from './cluster/types.js';
import { FlushClock } from './delta-coalescer.js';
import { ApiError } from './errors.js';
import type { RunSubscriber } from './run-subscriber.js';

/** The longest a run's end waits for its session to be freed on the database. */
const END_WAIT_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export interface RunRegistryOptions {
  agent: AgentApi;
  logger: Logger;
  confirmTimeoutMs: number;
  coalesceWindowMs?: number;
  /** The other processes on the same database, when there may be any. */
  cluster?: RunCluster;
}

export class RunRegistry {
  private readonly runs = new Map<string, AgentRun>();
  private readonly watchers = new Map<string, Set<RunSubscriber>>();
  /** Sessions whose claim is being asked of the cluster: taken here already. */
  private readonly starting = new Set<string>();
  /** Claims of ended runs still writing their last events before freeing their session. */
  private readonly releasing = new Set<Promise<void>>();
  private closing = false;
  /** One timer closes the coalescing windows of every run, however many stream at once. */
  private readonly flushClock: FlushClock;
  private readonly cluster: RunCluster | undefined;

  constructor(private readonly options: RunRegistryOptions) {
    this.flushClock = new FlushClock(options.coalesceWindowMs);
    this.cluster = options.cluster;
    this.cluster?.serve({
      stop: (sessionId, runId) => this.localRun(sessionId, runId)?.stop() ?? false,
      answer: (sessionId, runId, callId, approved) =>
        this.localRun(sessionId, runId)?.answer(callId, approved) ?? false,
      lost: (sessionId, runId) => void this.localRun(sessionId, runId)?.stop(),
    });
  }

  /** Runs in progress here, and sockets watching a session here (`GET /internal/metrics`). */
  counts(): { runs: number; watchers: number } {
    let watchers = 0;
    for (const set of this.watchers.values()) watchers += set.size;
    return { runs: this.runs.size, watchers };
  }

  /** The active run of a session on this process, if any. */
  get(sessionId: string): AgentRun | undefined {
    return this.runs.get(sessionId);
  }

  /** Whether the session is answering, here or on another process. */
  async busy(sessionId: string): Promise<boolean> {
    if (this.runs.has(sessionId) || this.starting.has(sessionId)) return true;
    return (await this.cluster?.activeElsewhere(sessionId)) ?? false;
  }

  /** Resolves once no process runs anything in the session. */
  async idle(sessionId: string): Promise<void> {
    for (;;) {
      const local = this.runs.get(sessionId);
      if (local) {
        await local.done;
        continue;
      }
      if (!this.cluster) return;
      // It looks at the database first, and returns at once when nothing runs elsewhere.
      await this.cluster.idleElsewhere(sessionId);
      if (!this.runs.has(sessionId)) return;
    }
  }

  /**
   * Starts a run. Throws `ApiError('RUN_ACTIVE')` when the session already has one (on any
   * process), and `SHUTTING_DOWN` while the server closes. Every socket watching the session is
   * subscribed before the first event. The session is claimed before anything else happens, so
   * a run that cannot start has changed nothing (a rewind cuts the history only once it runs).
   */
  async start(sessionId: string, input: RunInput): Promise<AgentRun> {
    if (this.closing) throw new ApiError('SHUTTING_DOWN');
    if (this.runs.has(sessionId) || this.starting.has(sessionId)) throw new ApiError('RUN_ACTIVE');
    if (!this.cluster) return this.launch(sessionId, input, undefined);
    this.starting.add(sessionId);
    let claim: ClusterClaim | undefined;
    const runId = randomUUID();
    try {
      claim = await this.cluster.claim(sessionId, runId);
    } finally {
      this.starting.delete(sessionId);
    }
    if (!claim) throw new ApiError('RUN_ACTIVE');
    if (this.closing) {
      this.trackRelease(claim);
      throw new ApiError('SHUTTING_DOWN');
    }
    return this.launch(sessionId, input, claim, runId);
  }

  private launch(
    sessionId: string,
    input: RunInput,
    claim: ClusterClaim | undefined,
    runId?: string,
  ): AgentRun {
    const cluster = this.cluster;
    const run = new AgentRun({
      sessionId,
      agent: this.options.agent,
      logger: this.options.logger,
      confirmTimeoutMs: this.options.confirmTimeoutMs,
      flushClock: this.flushClock,
      ...(runId ? { runId } : {}),
      ...(cluster ? { watchedElsewhere: () => cluster.watchedElsewhere(sessionId) } : {}),
      // Whoever sees the end finds the session free on every process. A database that does not
      // answer holds the end back a moment only; the session is freed when it answers.
      ...(claim
        ? { beforeEnd: (terminal, json) => Promise.race([claim.end(terminal, json), sleep(END_WAIT_MS)]) }
        : {}),
      onEnd: (ended) => {
        if (this.runs.get(sessionId) === ended) this.runs.delete(sessionId);
        if (claim) this.trackRelease(claim);
      },
      onAfterEnd: (event, json) => {
        for (const watcher of [...(this.watchers.get(sessionId) ?? [])]) watcher.deliver(event, json);
        claim?.after(event, json);
      },
    });
    this.runs.set(sessionId, run);
    if (claim) run.subscribe(claim.subscriber);
    for (const watcher of this.watchers.get(sessionId) ?? []) run.subscribe(watcher);
    run.start(input);
    return run;
  }

  private trackRelease(claim: ClusterClaim): void {
    const released = claim.release().finally(() => this.releasing.delete(released));
    this.releasing.add(released);
  }

  /** The run `runId` of the session, if this process runs it. */
  private localRun(sessionId: string, runId: string): AgentRun | undefined {
    const run = this.runs.get(sessionId);
    return run?.runId === runId ? run : undefined;
  }

  /**
   * Watches a session: the active run (replayed from its first event) and every later run,
   * whichever process executes it. Returns the function that stops watching.
   */
  watch(sessionId: string, subscriber: RunSubscriber): () => void {
    let set = this.watchers.get(sessionId);
    if (!set) {
      set = new Set();
      this.watchers.set(sessionId, set);
    }
    set.add(subscriber);
    this.runs.get(sessionId)?.subscribe(subscriber);
    const unwatchElsewhere = this.cluster?.watch(sessionId, subscriber);
    return () => {
      unwatchElsewhere?.();
      // Whichever run is active now (maybe one started after we attached) forgets this socket.
      this.runs.get(sessionId)?.unsubscribe(subscriber);
      const current = this.watchers.get(sessionId);
      current?.delete(subscriber);
      if (current && current.size === 0) this.watchers.delete(sessionId);
    };
  }

  /** Resolves once the other processes have heard of every socket watching here so far. */
  announced(): Promise<void> {
    return this.cluster?.announced() ?? Promise.resolve();
  }

  /**
   * Sends an event that belongs to no run (a profile changed between runs) to every socket
   * watching the session, as it is: without `run_id` and `seq`.
   */
  notify(sessionId: string, event: AgentEvent): void {
    const json = JSON.stringify(event);
    for (const watcher of [...(this.watchers.get(sessionId) ?? [])]) watcher.deliver(event, json);
    this.cluster?.note(sessionId, event);
  }

  /** Stops the session's run, wherever it runs. False when nothing was running. */
  async stop(sessionId: string): Promise<boolean> {
    const local = this.runs.get(sessionId);
    if (local) return local.stop();
    return (await this.cluster?.stop(sessionId)) ?? false;
  }

  /**
   * Hands the person's answer to the elicitation a run of this process waits for. True when it
   * was taken; otherwise why not (unknown or finished elicitation, values that do not fit the
   * server's schema), for the `error` event.
   */
  async answerElicitation(
    sessionId: string,
    elicitationId: string,
    action: ElicitationAction,
    values: Record<string, unknown> | undefined,
  ): Promise<true | { message: string; code: ErrorCode }> {
    const local = this.runs.get(sessionId);
    if (local) return local.answerElicitation(elicitationId, action, values);
    if (await this.cluster?.activeElsewhere(sessionId))
      return {
        message:
          "This session's run is on another Navi process; answering a server's form there is not supported yet (such a run declines forms).",
        code: 'NOT_FOUND',
      };
    return {
      message: 'No run of this session is waiting for a form; it may have ended already.',
      code: 'NOT_FOUND',
    };
  }

  /** Answers a pending confirmation of this session's run only, wherever it runs. */
  async answer(sessionId: string, callId: string, approved: boolean): Promise<boolean> {
    const local = this.runs.get(sessionId);
    if (local) return local.answer(callId, approved);
    return (await this.cluster?.answer(sessionId, callId, approved)) ?? false;
  }

  /**
   * Refuses new runs, stops the active ones and waits up to `graceMs` for them to end and to
   * free their sessions for the other processes.
   */
  async close(graceMs = 3000): Promise<void> {
    this.closing = true;
    const active = [...this.runs.values()];
    for (const run of active) run.stop();
    if (active.length === 0 && this.releasing.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    const ended = Promise.all(active.map((run) => run.done)).then(() => Promise.all([...this.releasing]));
    await Promise.race([ended.then(() => undefined), timeout]);
    clearTimeout(timer);
    const stuck = active.filter((run) => !run.finished).length;
    if (stuck > 0) this.options.logger.warn({ stuck }, 'runs still active at shutdown');
  }
}
