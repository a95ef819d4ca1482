/**
 * Claims on a real PostgreSQL: a row in `active_runs` counts only while its owner holds the
 * session's lock, so a session is never held for good by a row that a failed release left
 * behind; a release whose lock connection is gone still removes the row.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterMembers,
  type Member,
  newSession,
  waitUntil,
  waitUntilAsync,
} from '../../../test/server/cluster-members.js';
import { silentLogger } from '../../config/logger.js';
import { DedicatedConnection } from '../../store/postgres/run-connection.js';
import { CLUSTER_APPLICATION_PREFIX, PgRunTables } from '../../store/postgres/run-tables.js';
import { createTestSchema, needsPostgres } from '../../store/test-engines.js';
import { Claims } from './claims.js';

let url = '';
let drop: () => Promise<void> = async () => {};
const { member, leaveAll } = clusterMembers(() => url);

describe.runIf(needsPostgres('run cluster claims'))('session claims', () => {
  let a: Member;
  let b: Member;
  const rowsOf = async (sessionId: string) =>
    a.db.rows<{ run_id: string }>('SELECT run_id FROM active_runs WHERE session_id = $1', [sessionId]);
  const leaveRow = (sessionId: string, runId: string, owner: string) =>
    a.db.query('INSERT INTO active_runs (session_id, run_id, owner, started_at) VALUES ($1, $2, $3, $4)', [
      sessionId,
      runId,
      owner,
      new Date().toISOString(),
    ]);

  beforeAll(async () => {
    ({ url, drop } = await createTestSchema());
    a = await member();
    b = await member();
  });
  afterAll(async () => {
    await leaveAll();
    await drop();
  });

  it('a row left behind by a live member that no longer holds the session holds nothing, and the sweep removes it', async () => {
    const s = newSession();
    await leaveRow(s, 'left-behind', b.cluster.memberId);
    expect(await a.runs.busy(s)).toBe(false);
    expect(await a.runs.stop(s)).toBe(false);
    await a.runs.idle(s);
    await a.cluster.sweep();
    expect(await rowsOf(s)).toEqual([]);
    const run = await a.runs.start(s, { content: 'go', trigger: 'user' });
    expect((await run.done).type).toBe('stream_end');
  });

  it('a member of the same name holding the same lock key in another database does not hold the session', async () => {
    const s = newSession();
    const [row] = await a.db.rows<{ key: string }>(
      `SELECT hashtextextended(current_schema() || '/' || $1::text, 0)::text AS key`,
      [s],
    );
    const elsewhere = new URL(url);
    elsewhere.pathname = '/postgres';
    elsewhere.search = '';
    const other = new pg.Client({
      connectionString: elsewhere.toString(),
      application_name: `${CLUSTER_APPLICATION_PREFIX}elsewhere`,
    });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1::bigint)', [row?.key]);
      await leaveRow(s, 'run-elsewhere', 'elsewhere');
      expect(await a.runs.busy(s)).toBe(false);
      await a.cluster.sweep();
      expect(await rowsOf(s)).toEqual([]);
    } finally {
      await other.end();
    }
  });

  it('a release whose lock connection is gone removes the row through the pool', async () => {
    const s = newSession();
    const lock = new DedicatedConnection({
      url,
      applicationName: `${CLUSTER_APPLICATION_PREFIX}claims-test`,
    });
    await lock.ready();
    const claims = new Claims({
      tables: new PgRunTables(a.db),
      lock: () => lock,
      member: 'claims-test',
      log: silentLogger(),
      closing: () => false,
      lost: () => undefined,
    });
    expect(await claims.take(s, 'r1')).toBe(true);
    expect(await b.runs.busy(s)).toBe(true);
    await lock.close();
    await claims.release(s, 'r1');
    expect(await rowsOf(s)).toEqual([]);
  });

  it('a run released while the claims before it are taken again (after a drop) is not claimed again', async () => {
    const s = newSession();
    const name = 'claims-test-again';
    let again: Promise<void> | undefined;
    const lock: DedicatedConnection = new DedicatedConnection({
      url,
      applicationName: `${CLUSTER_APPLICATION_PREFIX}${name}`,
      onConnect: async (_client, reconnected) => {
        if (reconnected) setImmediate(() => (again = claims.takeAgain()));
      },
    });
    const claims: Claims = new Claims({
      tables: new PgRunTables(a.db),
      lock: () => lock,
      member: name,
      log: silentLogger(),
      closing: () => false,
      lost: () => undefined,
    });
    await lock.ready();
    // The run that is ending still holds the session once when the next one claims it.
    expect(await claims.take(s, 'ending')).toBe(true);
    expect(await claims.take(s, 'next')).toBe(true);
    // A transaction holding the row makes taking the first claim again wait.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM active_runs WHERE session_id = $1 FOR UPDATE', [s]);
      const [pid] = await lock.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await a.db.query('SELECT pg_terminate_backend($1)', [pid?.pid]);
      await waitUntilAsync(async () => {
        const waiting = await a.db.rows(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [`${CLUSTER_APPLICATION_PREFIX}${name}`],
        );
        return waiting.length > 0;
      });
      const released = claims.release(s, 'next');
      await blocker.query('COMMIT');
      await released;
      await waitUntil(() => again !== undefined);
      await again;
    } finally {
      await blocker.end();
      await lock.close();
    }
    expect(await rowsOf(s)).toEqual([{ run_id: 'ending' }]);
  });
});
