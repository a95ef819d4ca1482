/**
 * The run cluster on PostgreSQL: several `navi serve` processes with one DATABASE_URL serve the
 * same sessions (docs/postgres.md#several-navi-processes-on-one-database).
 *
 * - A session is claimed for a run with an advisory lock held by this process's lock connection
 *   (released by the server when the process dies) and a row in `active_runs`.
 * - A run's events go to `run_events` in batches; each batch's NOTIFY tells the others, who
 *   read them and deliver them to their own watchers (`RemoteRun`) in seq order with no gap and
 *   no duplicate.
 * - Notices carry ids only, sealed with a key from `cluster_secret` (`NoticeSeal`): one that does
 *   not verify, or was taken before, is dropped.
 * - Stop and confirmation answers for a run elsewhere go to its process as a request notice and
 *   wait for its reply notice, for a few seconds at most.
 * - Each process tells the others how many sockets watch each session (`Presence`).
 *
 * Two dedicated connections, outside the pool: one listens, one holds the locks. Both carry
 * `navi-cluster:<member id>` as application_name, which is how a member is known to be alive.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServerEvent } from '../../protocol/events.js';
import type { PgDatabase } from '../../store/postgres/database.js';
import { DedicatedConnection } from '../../store/postgres/run-connection.js';
import {
  CLUSTER_APPLICATION_PREFIX,
  clusterChannel,
  clusterSecret,
  PgRunTables,
} from '../../store/postgres/run-tables.js';
import { ApiError } from '../errors.js';
import type { RunSubscriber } from '../run-subscriber.js';
import { Claims } from './claims.js';
import { EventWriter } from './event-writer.js';
import { NoticeSeal, ReplayWindow } from './notice-seal.js';
import { encodeNotice, type Notice, parseNotice } from './notices.js';
import { PendingReplies } from './pending-replies.js';
import { Presence } from './presence.js';
import { RemoteRun } from './remote-run.js';
import type { ClusterClaim, ClusterControl, RunCluster } from './types.js';

export interface PgRunClusterOptions {
  /** DATABASE_URL: the dedicated connections are opened from it. */
  url: string;
  db: PgDatabase;
  logger: Logger;
  /** How long a stop or an answer waits for the reply of the process running the run. */
  requestTimeoutMs?: number;
  /** How often dead members are looked for and old run events removed. */
  sweepIntervalMs?: number;
  /** Events of runs that ended this long ago are removed. */
  keepEventsMs?: number;
  /** `idleElsewhere` looks again this often when it hears nothing. */
  idlePollMs?: number;
}

/** Run ids whose end was delivered, so a late notice of them does not replay them again. */
const ENDED_MEMORY = 1000;
/**
 * Runs that began this long before the listening connection dropped are looked for too when it
 * comes back (the processes' clocks may differ a little; each stamps the events it writes).
 */
const MISSED_SLACK_MS = 5000;

export class PgRunCluster implements RunCluster {
  readonly memberId = randomUUID();
  private readonly tables: PgRunTables;
  private readonly log: Logger;
  private readonly presence: Presence;
  private listener!: DedicatedConnection;
  private lock!: DedicatedConnection;
  private control: ClusterControl | undefined;
  private readonly watchers = new Map<string, Set<RunSubscriber>>();
  private readonly mirrors = new Map<string, Map<string, RemoteRun>>();
  /** Runs not to replay here: delivered to the end, or this process's own. */
  private readonly ended = new Set<string>();
  /** When the listening connection dropped, while it is down. */
  private listenerLostAt: number | undefined;
  /** Runs named by a notice whose mirror waits for the tables to confirm the run. */
  private readonly confirming = new Map<string, Promise<void>>();
  private readonly seal: NoticeSeal;
  private readonly replays = new ReplayWindow();
  private rejected = 0;
  private readonly claims: Claims;
  private readonly replies = new PendingReplies();
  private readonly endWaiters = new Map<string, Set<() => void>>();
  private sendChain: Promise<void> = Promise.resolve();
  private sweepTimer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  private constructor(
    private readonly options: PgRunClusterOptions,
    private readonly channel: string,
    secret: Buffer,
  ) {
    this.seal = new NoticeSeal(secret);
    this.tables = new PgRunTables(options.db);
    this.log = options.logger.child({ component: 'cluster', member: this.memberId });
    this.claims = new Claims({
      tables: this.tables,
      lock: () => this.lock,
      member: this.memberId,
      log: this.log,
      closing: () => this.closed,
      lost: (sessionId, runId) => this.control?.lost(sessionId, runId),
    });
    this.presence = new Presence(this.memberId, (payloads) => {
      for (const payload of payloads) this.send(payload);
    });
  }

  /** Joins the cluster of the database `db` is connected to; resolves once both connections are up. */
  static async open(options: PgRunClusterOptions): Promise<PgRunCluster> {
    const cluster = new PgRunCluster(
      options,
      await clusterChannel(options.db),
      await clusterSecret(options.db),
    );
    await cluster.connect();
    return cluster;
  }

  private async connect(): Promise<void> {
    const applicationName = `${CLUSTER_APPLICATION_PREFIX}${this.memberId}`;
    const { url } = this.options;
    this.listener = new DedicatedConnection({
      url,
      applicationName,
      onConnect: async (client, reconnected) => {
        await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
        // Said once the connection is in place (so the replies are heard), and again after a
        // drop: notices sent meanwhile were missed.
        setImmediate(() => this.joined(reconnected));
      },
      onNotification: (_channel, payload) => this.heard(payload),
      onLost: (err) => {
        this.listenerLostAt ??= Date.now();
        this.log.warn({ err }, 'listening connection lost; reconnecting');
      },
    });
    this.lock = new DedicatedConnection({
      url,
      applicationName,
      onConnect: async (_client, reconnected) => {
        if (reconnected) setImmediate(() => void this.claims.takeAgain());
      },
      onLost: (err) =>
        this.log.warn({ err }, 'lock connection lost; its claims are taken again on reconnecting'),
    });
    try {
      await Promise.all([this.listener.ready(), this.lock.ready()]);
    } catch (err) {
      await this.close();
      throw err;
    }
    const every = this.options.sweepIntervalMs ?? 10_000;
    this.sweepTimer = setInterval(() => void this.sweep(), every);
    this.sweepTimer.unref();
  }

  serve(control: ClusterControl): void {
    this.control = control;
  }

  // ---- claims -------------------------------------------------------------------------------

  async claim(sessionId: string, runId: string): Promise<ClusterClaim | undefined> {
    if (!(await this.claims.take(sessionId, runId))) return undefined;
    this.remember(runId);
    // Whatever another process ran here before is over (it no longer holds the session): its
    // watchers here see it end before the new run begins.
    await Promise.all([...(this.mirrors.get(sessionId)?.values() ?? [])].map((mirror) => mirror.abandon()));
    const writer = new EventWriter({
      tables: this.tables,
      channel: this.channel,
      member: this.memberId,
      sessionId,
      runId,
      seal: (body) => this.seal.seal(body),
      log: this.log.child({ session_id: sessionId, run_id: runId }),
    });
    let released: Promise<void> | undefined;
    const release = () => {
      released ??= writer.drained().then(() => this.claims.release(sessionId, runId));
      return released;
    };
    return {
      subscriber: writer,
      end: (terminal, json) => {
        writer.deliver(terminal, json);
        return release();
      },
      after: (event, json) => writer.after(event, json),
      release,
    };
  }

  // ---- watching -----------------------------------------------------------------------------

  watch(sessionId: string, subscriber: RunSubscriber): () => void {
    let set = this.watchers.get(sessionId);
    if (!set) {
      set = new Set();
      this.watchers.set(sessionId, set);
    }
    set.add(subscriber);
    this.presence.added(sessionId, subscriber);
    const mirrors = this.mirrors.get(sessionId);
    if (mirrors && mirrors.size > 0) {
      for (const mirror of mirrors.values()) mirror.subscribe(subscriber);
    } else {
      void this.findRun(sessionId);
    }
    return () => {
      const current = this.watchers.get(sessionId);
      if (!current?.delete(subscriber)) return;
      this.presence.removed(sessionId, subscriber);
      for (const mirror of this.mirrors.get(sessionId)?.values() ?? []) mirror.unsubscribe(subscriber);
      if (current.size === 0) {
        this.watchers.delete(sessionId);
        // Nobody here reads them any more; a later watcher finds the run again.
        this.mirrors.delete(sessionId);
      }
    };
  }

  announced(): Promise<void> {
    return this.sendChain;
  }

  watchedElsewhere(sessionId: string): boolean {
    return this.presence.watchedElsewhere(sessionId);
  }

  /** A run elsewhere that the new watchers of the session should be replayed. */
  private async findRun(sessionId: string): Promise<void> {
    try {
      const row = await this.tables.activeRun(sessionId);
      if (!row || row.owner === this.memberId || this.ended.has(row.run_id)) return;
      void this.mirror(sessionId, row.run_id, row.owner)?.catchUp();
    } catch (err) {
      this.log.warn({ err, session_id: sessionId }, 'looking for a run elsewhere failed');
    }
  }

  /** The mirror of a run elsewhere, made (and given the session's watchers) on first use. */
  private mirror(sessionId: string, runId: string, owner: string): RemoteRun | undefined {
    const watchers = this.watchers.get(sessionId);
    if (!watchers || watchers.size === 0 || this.ended.has(runId)) return undefined;
    let runs = this.mirrors.get(sessionId);
    if (!runs) {
      runs = new Map();
      this.mirrors.set(sessionId, runs);
    }
    let mirror = runs.get(runId);
    if (!mirror) {
      mirror = new RemoteRun({
        sessionId,
        runId,
        owner,
        read: (id, after, limit) => this.tables.eventsAfter(id, after, limit),
        onFinish: (run) => this.finished(run),
        log: this.log,
      });
      runs.set(runId, mirror);
      for (const watcher of watchers) mirror.subscribe(watcher);
    }
    return mirror;
  }

  /**
   * Runs of a watched session whose first notices were missed while the listening connection was
   * down: those that began meanwhile, in the order they began (ended ones too), then its active run.
   */
  private async findMissed(sessionId: string, since: number | undefined): Promise<void> {
    try {
      const from = new Date((since ?? Date.now()) - MISSED_SLACK_MS).toISOString();
      for (const { run_id, owner } of await this.tables.runsSince(sessionId, from)) {
        // A run that is over has no owner any more; '' is alive nowhere, so one whose end was
        // never written is ended for its watchers at the next sweep.
        await this.mirror(sessionId, run_id, owner ?? '')?.catchUp();
      }
    } catch (err) {
      this.log.warn({ err, session_id: sessionId }, 'looking for runs missed while reconnecting failed');
    }
    await this.findRun(sessionId);
  }

  private remember(runId: string): void {
    this.ended.add(runId);
    if (this.ended.size > ENDED_MEMORY) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }

  private finished(run: RemoteRun): void {
    this.remember(run.runId);
    const runs = this.mirrors.get(run.sessionId);
    if (runs?.get(run.runId) === run) runs.delete(run.runId);
    if (runs?.size === 0) this.mirrors.delete(run.sessionId);
  }

  note(sessionId: string, event: ServerEvent): void {
    if (this.closed) return;
    // Written as the only event of a run of its own, which the sweep removes like any other.
    const runId = `note-${randomUUID()}`;
    const notice = this.seal.seal(encodeNotice({ k: 'note', p: this.memberId, s: sessionId, r: runId }));
    this.sendChain = this.sendChain.then(() =>
      this.tables
        .appendEvents({
          runId,
          sessionId,
          firstSeq: 1,
          events: [JSON.stringify(event)],
          ended: false,
          channel: this.channel,
          notice,
        })
        .catch((err: unknown) => {
          if (!this.closed) this.log.warn({ err }, 'event not shared with other processes');
        }),
    );
  }

  // ---- runs elsewhere -----------------------------------------------------------------------

  async activeElsewhere(sessionId: string): Promise<boolean> {
    const row = await this.tables.activeRun(sessionId);
    return row !== undefined && row.owner !== this.memberId;
  }

  async idleElsewhere(sessionId: string): Promise<void> {
    const poll = this.options.idlePollMs ?? 2000;
    while (!this.closed && (await this.activeElsewhere(sessionId))) {
      await new Promise<void>((resolve) => {
        let waiters = this.endWaiters.get(sessionId);
        if (!waiters) {
          waiters = new Set();
          this.endWaiters.set(sessionId, waiters);
        }
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          if (waiters.size === 0) this.endWaiters.delete(sessionId);
          resolve();
        };
        const timer = setTimeout(done, poll);
        timer.unref();
        waiters.add(done);
      });
    }
  }

  stop(sessionId: string): Promise<boolean> {
    return this.request(sessionId, { op: 'stop' });
  }

  answer(sessionId: string, callId: string, approved: boolean): Promise<boolean> {
    return this.request(sessionId, { op: 'answer', c: callId, a: approved });
  }

  /**
   * Sends a request about the session's run to the process that runs it and waits for its reply.
   * False when no other process runs anything in the session.
   */
  private async request(
    sessionId: string,
    op: { op: 'stop' } | { op: 'answer'; c: string; a: boolean },
  ): Promise<boolean> {
    const row = await this.tables.activeRun(sessionId);
    if (!row || row.owner === this.memberId) return false;
    const owner = row.owner;
    const body = { s: sessionId, r: row.run_id, ...op };
    const timeoutMs = this.options.requestTimeoutMs ?? 5000;
    const { id, reply } = this.replies.open(timeoutMs);
    await this.tables.notify(
      this.channel,
      this.seal.seal(encodeNotice({ k: 'ctl', p: this.memberId, to: owner, id, ...body })),
    );
    const ok = await reply;
    if (ok !== 'timeout') return ok;
    // A process that died cannot answer: nothing runs there any more.
    if (!(await this.tables.aliveMembers()).has(owner)) return false;
    throw new ApiError(
      'RUN_PROCESS_NO_REPLY',
      `asked to ${body.op === 'stop' ? 'stop the run' : 'take a confirmation answer'}, it gave no reply within ${timeoutMs / 1000} seconds`,
    );
  }

  // ---- notices ------------------------------------------------------------------------------

  /** Seals `body` and sends it, after everything sent before. */
  private send(body: string): void {
    if (this.closed) return;
    const payload = this.seal.seal(body);
    this.sendChain = this.sendChain.then(() =>
      this.tables.notify(this.channel, payload).catch((err: unknown) => {
        if (!this.closed) this.log.warn({ err }, 'notice to other processes not sent');
      }),
    );
  }

  private joined(reconnected: boolean): void {
    if (this.closed) return;
    // A count that fell to zero meanwhile was missed, and the answers to the hello repeat only
    // the sessions still watched: what the others said before is forgotten, not kept for good.
    if (reconnected) for (const member of this.presence.members()) this.presence.forget(member);
    this.send(JSON.stringify({ k: 'hello', p: this.memberId }));
    if (!reconnected) return;
    this.presence.announceAll();
    for (const runs of this.mirrors.values()) for (const mirror of runs.values()) void mirror.catchUp();
    const since = this.listenerLostAt;
    this.listenerLostAt = undefined;
    for (const sessionId of this.watchers.keys()) {
      if (!this.mirrors.get(sessionId)?.size) void this.findMissed(sessionId, since);
    }
  }

  /** Notices dropped because their seal did not verify, they did not parse, or were heard before. */
  get rejectedNotices(): number {
    return this.rejected;
  }

  private heard(payload: string): void {
    const opened = this.seal.open(payload);
    const notice = opened && parseNotice(opened.body);
    if (!opened || !notice) {
      this.reject(opened ? 'malformed' : 'seal does not verify');
      return;
    }
    if (notice.p === this.memberId) return;
    if (!this.replays.take(notice.p, opened.count)) {
      this.reject('heard before');
      return;
    }
    try {
      this.handle(notice);
    } catch (err) {
      this.log.error({ err, kind: notice.k }, 'handling a notice failed');
    }
  }

  private reject(reason: string): void {
    this.rejected++;
    this.log.debug({ reason, rejected: this.rejected }, 'notice dropped');
  }

  private handle(notice: Notice): void {
    switch (notice.k) {
      case 'ev': {
        if (notice.end) this.wakeEndWaiters(notice.s);
        const mirror = this.mirrors.get(notice.s)?.get(notice.r);
        if (mirror) mirror.offer(notice.l);
        else this.confirmRun(notice.s, notice.r, notice.p);
        return;
      }
      case 'after':
        void this.deliverStored(notice.s, notice.r, notice.q);
        return;
      case 'note':
        void this.deliverStored(notice.s, notice.r, 1);
        return;
      case 'presence':
        this.presence.heard(notice);
        return;
      case 'hello':
        this.presence.announceAll();
        return;
      case 'bye':
        this.memberGone(notice.p);
        return;
      case 'ctl': {
        if (notice.to !== this.memberId) return;
        const control = this.control;
        let ok = false;
        if (control && notice.op === 'stop') ok = control.stop(notice.s, notice.r);
        if (control && notice.op === 'answer')
          ok = control.answer(notice.s, notice.r, notice.c ?? '', notice.a === true);
        this.send(encodeNotice({ k: 'reply', p: this.memberId, to: notice.p, id: notice.id, ok }));
        return;
      }
      case 'reply':
        if (notice.to === this.memberId) this.replies.settle(notice.id, notice.ok);
        return;
    }
  }

  /**
   * The first events of a run not seen here yet: its mirror is made once Navi's tables name the
   * run, then reads everything written so far (later notices find the mirror).
   */
  private confirmRun(sessionId: string, runId: string, sender: string): void {
    if (!this.watchers.has(sessionId) || this.ended.has(runId) || this.confirming.has(runId)) return;
    const confirmed = (async () => {
      try {
        const owner = await this.tables.runOwner(sessionId, runId, sender);
        if (owner === undefined) this.reject('names a run the tables do not');
        else if (owner !== this.memberId) await this.mirror(sessionId, runId, owner)?.catchUp();
      } catch (err) {
        this.log.warn({ err, session_id: sessionId, run_id: runId }, 'looking up a run elsewhere failed');
      } finally {
        this.confirming.delete(runId);
      }
    })();
    this.confirming.set(runId, confirmed);
  }

  /**
   * Delivers event `seq` of `runId`, read from the table, to the session's watchers: after the
   * run's own events, when they are still being read.
   */
  private async deliverStored(sessionId: string, runId: string, seq: number): Promise<void> {
    if (!this.watchers.has(sessionId)) return;
    try {
      await this.confirming.get(runId);
      await this.mirrors.get(sessionId)?.get(runId)?.catchUp();
      const json = await this.tables.eventOf(sessionId, runId, seq);
      if (json !== undefined) this.deliverToWatchers(sessionId, JSON.parse(json) as ServerEvent, json);
    } catch (err) {
      this.log.warn({ err, session_id: sessionId }, 'reading an event of another process failed');
    }
  }

  private deliverToWatchers(sessionId: string, event: ServerEvent, json: string): void {
    for (const watcher of [...(this.watchers.get(sessionId) ?? [])]) watcher.deliver(event, json);
  }

  private wakeEndWaiters(sessionId: string): void {
    for (const wake of [...(this.endWaiters.get(sessionId) ?? [])]) wake();
  }

  private memberGone(member: string): void {
    this.presence.forget(member);
    for (const runs of this.mirrors.values()) {
      for (const mirror of runs.values()) if (mirror.owner === member) void mirror.abandon();
    }
  }

  /** Forgets dead members, gives up their runs, and removes what nobody needs any more. */
  async sweep(): Promise<void> {
    if (this.closed) return;
    try {
      const alive = await this.tables.aliveMembers();
      for (const member of this.presence.members()) if (!alive.has(member)) this.memberGone(member);
      for (const runs of [...this.mirrors.values()]) {
        for (const mirror of [...runs.values()]) {
          if (!alive.has(mirror.owner)) {
            await mirror.abandon();
            continue;
          }
          // A run whose row is gone has ended; whatever it wrote, its watchers get now.
          await mirror.catchUp();
          if (!mirror.done && (await this.tables.activeRun(mirror.sessionId))?.run_id !== mirror.runId)
            await mirror.abandon();
        }
      }
      for (const sessionId of [...this.endWaiters.keys()]) this.wakeEndWaiters(sessionId);
      const before = new Date(Date.now() - (this.options.keepEventsMs ?? 5 * 60_000)).toISOString();
      await this.tables.sweep(before);
    } catch (err) {
      if (!this.closed) this.log.warn({ err }, 'cluster sweep failed');
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.sweepTimer);
    // The goodbye goes out before the connections close, so the others forget this one now.
    if (this.listener) {
      this.send(JSON.stringify({ k: 'bye', p: this.memberId }));
      await this.sendChain;
    }
    this.closed = true;
    this.replies.refuseAll();
    for (const sessionId of [...this.endWaiters.keys()]) this.wakeEndWaiters(sessionId);
    await Promise.all([this.listener?.close(), this.lock?.close()]);
  }

  /** Tests: drops both connections without a goodbye, as a killed process would. */
  async crashForTest(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    await Promise.all([this.listener.close(true), this.lock.close(true)]);
  }

  /** Tests: the listening and the lock connection, to cut them. */
  connectionsForTest(): { listener: DedicatedConnection; lock: DedicatedConnection } {
    return { listener: this.listener, lock: this.lock };
  }
}
