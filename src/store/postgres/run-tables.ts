/**
 * The SQL of the run cluster (several `navi serve` processes on one database): claiming a
 * session for a run, the shared log of run events, and telling which processes are alive.
 *
 * A claim is two things at once. A session-level advisory lock, held by the owner's dedicated
 * connection, is the truth: only one connection can hold it, and the server releases it the
 * moment that connection ends (a process killed with -9 frees its sessions). A row in
 * `active_runs` tells the others who runs it and under which run id, so they can route a stop
 * or an answer and replay the run's events. A row counts only while its owner holds the lock
 * (read from pg_locks): one left behind by a release that failed holds nothing.
 *
 * A process is alive while one of its connections is: each dedicated connection carries
 * `navi-cluster:<process id>` as its application_name, read back from pg_stat_activity.
 */
import { randomBytes } from 'node:crypto';
import type { PgDatabase } from './database.js';
import type { DedicatedConnection } from './run-connection.js';

/** application_name prefix of a cluster member's dedicated connections. */
export const CLUSTER_APPLICATION_PREFIX = 'navi-cluster:';

/** The advisory lock key of session `session` (SQL): per schema, so schemas on one database never meet. */
const lockKey = (session: string) => `hashtextextended(current_schema() || '/' || ${session}::text, 0)`;
const LOCK_KEY = lockKey('$1');

/**
 * SQL: whether the member named by `owner` holds the lock of `session` now, on a connection to
 * this database. pg_locks shows a bigint advisory key as its high half in classid and its low
 * half in objid, with objsubid 1.
 */
const heldBy = (session: string, owner: string) => `EXISTS (
  SELECT 1 FROM pg_locks l JOIN pg_stat_activity p ON p.pid = l.pid
  CROSS JOIN LATERAL (SELECT ${lockKey(session)} AS key) k
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ((k.key >> 32) & 4294967295)::oid AND l.objid = (k.key & 4294967295)::oid
    AND p.application_name = '${CLUSTER_APPLICATION_PREFIX}' || ${owner}
)`;

export type ClaimResult =
  | { ok: true }
  /** `holder` is the row of the run that holds the session; undefined while it is being taken or freed. */
  | { ok: false; holder: { run_id: string; owner: string } | undefined };

export interface ActiveRunRow {
  run_id: string;
  owner: string;
}

export interface StoredRunEvent {
  seq: number;
  json: string;
}

/** The process id whose dedicated connections carry `applicationName`, if it is a member's. */
function memberId(applicationName: string): string | undefined {
  return applicationName.startsWith(CLUSTER_APPLICATION_PREFIX)
    ? applicationName.slice(CLUSTER_APPLICATION_PREFIX.length)
    : undefined;
}

export class PgRunTables {
  constructor(private readonly db: PgDatabase) {}

  /**
   * Takes the session's lock on `lock` (the owner's dedicated connection) and, when it got it,
   * writes the row naming the run in the same statement. A row left by a dead owner is replaced.
   * Taking a lock this connection already holds succeeds again (the run of this process that is
   * ending still holds it once); each claim is released once.
   */
  async claim(
    lock: DedicatedConnection,
    sessionId: string,
    runId: string,
    owner: string,
  ): Promise<ClaimResult> {
    const [row] = await lock.query<{ ok: boolean }>(
      `WITH l AS (SELECT pg_try_advisory_lock(${LOCK_KEY}) AS ok),
       ins AS (
         INSERT INTO active_runs (session_id, run_id, owner, started_at)
         SELECT $1, $2, $3, $4 FROM l WHERE l.ok
         ON CONFLICT (session_id) DO UPDATE
           SET run_id = EXCLUDED.run_id, owner = EXCLUDED.owner, started_at = EXCLUDED.started_at
         RETURNING 1
       )
       SELECT (SELECT ok FROM l) AS ok`,
      [sessionId, runId, owner, new Date().toISOString()],
    );
    if (row?.ok) return { ok: true };
    const [holder] = await this.db.rows<ActiveRunRow>(
      'SELECT run_id, owner FROM active_runs WHERE session_id = $1',
      [sessionId],
    );
    return { ok: false, holder };
  }

  /** Removes the run's row (if still its own) and releases one hold of the session's lock. */
  async release(lock: DedicatedConnection, sessionId: string, runId: string): Promise<void> {
    await lock.query(
      `WITH d AS (DELETE FROM active_runs WHERE session_id = $1 AND run_id = $2)
       SELECT pg_advisory_unlock(${LOCK_KEY})`,
      [sessionId, runId],
    );
  }

  /** Removes the run's row, through the pool: its release on the lock connection failed. */
  async forget(sessionId: string, runId: string): Promise<void> {
    await this.db.query('DELETE FROM active_runs WHERE session_id = $1 AND run_id = $2', [sessionId, runId]);
  }

  /**
   * Appends a run's events `firstSeq…` in one statement, and in the same transaction sends
   * `notice` on `channel` (delivered at commit, so a process that hears it can read the rows).
   * With `ended`, the run's row goes in the same commit: whoever sees the terminal event finds
   * the session free, or about to be (its lock is released right after).
   */
  async appendEvents(args: {
    runId: string;
    sessionId: string;
    firstSeq: number;
    events: readonly string[];
    ended: boolean;
    channel: string;
    notice: string;
  }): Promise<void> {
    await this.db.query(
      `WITH ins AS (
         INSERT INTO run_events (run_id, seq, session_id, event, created_at)
         SELECT $1, $3::int + (t.ord - 1)::int, $2, t.e::json, $5
         FROM unnest($4::text[]) WITH ORDINALITY AS t(e, ord)
       ),
       d AS (DELETE FROM active_runs WHERE $6::boolean AND session_id = $2 AND run_id = $1)
       SELECT pg_notify($7, $8)`,
      [
        args.runId,
        args.sessionId,
        args.firstSeq,
        args.events,
        new Date().toISOString(),
        args.ended,
        args.channel,
        args.notice,
      ],
    );
  }

  /** The run's events after `afterSeq`, in order, at most `limit`. */
  async eventsAfter(runId: string, afterSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    return this.db.rows<StoredRunEvent>(
      `SELECT seq, event::text AS json FROM run_events
       WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [runId, afterSeq, limit],
    );
  }

  /**
   * Who runs `runId` in the session, when Navi's tables name that run: its row in `active_runs`,
   * or (a run that already ended) its first event in `run_events`, whose writer is `sender`.
   */
  async runOwner(sessionId: string, runId: string, sender: string): Promise<string | undefined> {
    const [row] = await this.db.rows<{ owner: string }>(
      `SELECT owner FROM active_runs WHERE session_id = $1 AND run_id = $2
       UNION ALL
       SELECT $3 FROM run_events WHERE run_id = $2 AND seq = 1 AND session_id = $1
       LIMIT 1`,
      [sessionId, runId, sender],
    );
    return row?.owner;
  }

  /** The text of event `seq` of `runId`, when it belongs to the session. */
  async eventOf(sessionId: string, runId: string, seq: number): Promise<string | undefined> {
    const [row] = await this.db.rows<{ json: string }>(
      'SELECT event::text AS json FROM run_events WHERE run_id = $1 AND seq = $2 AND session_id = $3',
      [runId, seq, sessionId],
    );
    return row?.json;
  }

  /**
   * The session's runs whose first event was written at `from` or later, in that order, with
   * their owner while they are active (events outside runs, `note-…`, are not runs).
   */
  async runsSince(sessionId: string, from: string): Promise<{ run_id: string; owner: string | null }[]> {
    return this.db.rows(
      `SELECT e.run_id, a.owner FROM run_events e
       LEFT JOIN active_runs a ON a.session_id = e.session_id AND a.run_id = e.run_id
       WHERE e.session_id = $1 AND e.seq = 1 AND e.created_at >= $2 AND e.run_id NOT LIKE 'note-%'
       ORDER BY e.created_at, e.run_id`,
      [sessionId, from],
    );
  }

  /** The session's run, while its owner holds the session. */
  async activeRun(sessionId: string): Promise<ActiveRunRow | undefined> {
    const [row] = await this.db.rows<ActiveRunRow>(
      `SELECT run_id, owner FROM active_runs a WHERE session_id = $1 AND ${heldBy('a.session_id', 'a.owner')}`,
      [sessionId],
    );
    return row;
  }

  /** The ids of the members with a connection open now. */
  async aliveMembers(): Promise<Set<string>> {
    const rows = await this.db.rows<{ name: string }>(
      `SELECT DISTINCT application_name AS name FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE $1`,
      [`${CLUSTER_APPLICATION_PREFIX}%`],
    );
    const ids = new Set<string>();
    for (const { name } of rows) {
      const id = memberId(name);
      if (id) ids.add(id);
    }
    return ids;
  }

  /**
   * Housekeeping any member may do: rows whose owner no longer holds the session (it is gone,
   * or its release failed), and the events of runs that are not active and were written before
   * `eventsBefore`.
   */
  async sweep(eventsBefore: string): Promise<void> {
    // The locks are read in the same statement: a claim commits its row while holding the lock.
    await this.db.query(`DELETE FROM active_runs a WHERE NOT ${heldBy('a.session_id', 'a.owner')}`);
    await this.db.query(
      `DELETE FROM run_events e WHERE created_at < $1
       AND NOT EXISTS (SELECT 1 FROM active_runs a WHERE a.run_id = e.run_id)`,
      [eventsBefore],
    );
  }

  /** Sends `payload` to every member listening on `channel`. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }
}

/**
 * The key notices are sealed with: made once, by whichever member comes first, and read by each
 * member as it joins. It lives in a table, so only roles that may read Navi's tables know it.
 */
export async function clusterSecret(db: Pick<PgDatabase, 'query' | 'rows'>): Promise<Buffer> {
  await db.query('INSERT INTO cluster_secret (id, secret) VALUES (true, $1) ON CONFLICT (id) DO NOTHING', [
    randomBytes(32),
  ]);
  const [row] = await db.rows<{ secret: Buffer }>('SELECT secret FROM cluster_secret WHERE id');
  if (!row) throw new Error('the cluster secret could not be read from cluster_secret');
  return row.secret;
}

/** The channel the members of the current schema talk on (a channel is per database, not per schema). */
export async function clusterChannel(db: Pick<PgDatabase, 'rows'>): Promise<string> {
  const [row] = await db.rows<{ channel: string }>(
    `SELECT 'navi_runs_' || substr(md5(current_schema()), 1, 16) AS channel`,
  );
  if (!row) throw new Error('PostgreSQL did not say which schema is in use');
  return row.channel;
}
