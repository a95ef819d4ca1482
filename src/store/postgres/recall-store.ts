/**
 * RecallStore on PostgreSQL: the `recalls` table, schedules and outcomes as `jsonb`. Several Navi
 * processes share it, so firing goes through `claim`: the occurrence's row is locked
 * (`FOR UPDATE SKIP LOCKED`) while its run starts, and moved on in the same transaction.
 */
import type { RecallOutcome, RecallSchedule, RecallStatus } from '../../protocol/rest.js';
import type {
  RecallClaim,
  RecallClaimStart,
  RecallPatch,
  RecallRecord,
  RecallStore,
  RecallTime,
} from '../types.js';
import type { PgDatabase } from './database.js';

interface RecallRow {
  id: string;
  session_id: string;
  prompt: string;
  schedule: RecallSchedule;
  status: RecallStatus;
  next_run_at: string | null;
  last_run_at: string | null;
  last_outcome: RecallOutcome | null;
  run_count: number;
  chain: number;
  created_at: string;
}

/** One statement's rows, on the pool or on a claim's connection. */
type Rows = (sql: string, params: unknown[]) => Promise<RecallRow[]>;

const COLUMNS =
  'id, session_id, prompt, schedule, status, next_run_at, last_run_at, last_outcome, run_count, chain, created_at';

/** The columns a patch may set, in a fixed order (never a name taken from the caller's object). */
const PATCHABLE = ['status', 'next_run_at', 'last_run_at', 'last_outcome', 'run_count'] as const;

/**
 * How long a claim may sit idle inside its transaction. The lock dies with the connection when
 * a process is killed; this bounds the case where the connection outlives a process that hangs
 * or a host that vanished without closing it. Starting a run takes milliseconds.
 */
const CLAIM_IDLE_LIMIT = '2min';

function toRecord(row: RecallRow): RecallRecord {
  // Spelled out so that a column added to the table does not leak into the record.
  return {
    id: row.id,
    session_id: row.session_id,
    prompt: row.prompt,
    schedule: row.schedule,
    status: row.status,
    next_run_at: row.next_run_at,
    last_run_at: row.last_run_at,
    last_outcome: row.last_outcome,
    run_count: row.run_count,
    chain: row.chain,
    created_at: row.created_at,
  };
}

export class PgRecallStore implements RecallStore {
  /**
   * This process's claims, one after another. Each holds a pooled connection while its run
   * starts, and starting a run uses the pool too; a burst of due recalls claimed all at once
   * could take every connection and leave none to start them with.
   */
  private claims: Promise<unknown> = Promise.resolve();
  /** Recalls this process is claiming or waiting to: a second claim of one is `taken` at once. */
  private readonly claiming = new Set<string>();

  private readonly pooled: Rows;

  constructor(readonly db: PgDatabase) {
    this.pooled = (sql, params) => db.rows<RecallRow>(sql, params);
  }

  async add(recall: RecallRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO recalls (${COLUMNS}) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8::jsonb, $9, $10, $11)`,
      [
        recall.id,
        recall.session_id,
        recall.prompt,
        JSON.stringify(recall.schedule),
        recall.status,
        recall.next_run_at,
        recall.last_run_at,
        recall.last_outcome === null ? null : JSON.stringify(recall.last_outcome),
        recall.run_count,
        recall.chain,
        recall.created_at,
      ],
    );
  }

  async get(id: string): Promise<RecallRecord | undefined> {
    return this.getOn(this.pooled, id);
  }

  async listForSession(sessionId: string, finishedLimit = 20): Promise<RecallRecord[]> {
    const active = await this.db.rows<RecallRow>(
      `SELECT ${COLUMNS} FROM recalls WHERE session_id = $1 AND status = 'active'
       ORDER BY next_run_at, created_at`,
      [sessionId],
    );
    const finished = await this.db.rows<RecallRow>(
      `SELECT ${COLUMNS} FROM recalls WHERE session_id = $1 AND status <> 'active'
       ORDER BY COALESCE(last_run_at, created_at) DESC LIMIT $2`,
      [sessionId, Math.max(0, Math.floor(finishedLimit))],
    );
    return [...active, ...finished].map(toRecord);
  }

  async countActive(sessionId: string): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>(
      `SELECT COUNT(*) AS n FROM recalls WHERE session_id = $1 AND status = 'active'`,
      [sessionId],
    );
    return row?.n ?? 0;
  }

  async soonest(limit: number): Promise<RecallTime[]> {
    return this.db.rows<RecallTime>(
      `SELECT id, next_run_at FROM recalls WHERE status = 'active' ORDER BY next_run_at, created_at LIMIT $1`,
      [Math.max(0, Math.floor(limit))],
    );
  }

  async due(nowIso: string, limit: number): Promise<RecallRecord[]> {
    const rows = await this.db.rows<RecallRow>(
      `SELECT ${COLUMNS} FROM recalls WHERE status = 'active' AND next_run_at <= $1
       ORDER BY next_run_at, created_at LIMIT $2`,
      [nowIso, Math.max(0, Math.floor(limit))],
    );
    return rows.map(toRecord);
  }

  async update(id: string, patch: RecallPatch): Promise<RecallRecord | undefined> {
    return this.updateOn(this.pooled, id, patch);
  }

  claim<T>(
    id: string,
    dueAt: string,
    start: (current: RecallRecord) => Promise<RecallClaimStart<T>>,
  ): Promise<RecallClaim<T>> {
    if (this.claiming.has(id)) return Promise.resolve({ kind: 'taken' });
    this.claiming.add(id);
    const claimed = this.claims
      .then(() => this.claimNow(id, dueAt, start))
      .finally(() => this.claiming.delete(id));
    this.claims = claimed.catch(() => undefined);
    return claimed;
  }

  private async claimNow<T>(
    id: string,
    dueAt: string,
    start: (current: RecallRecord) => Promise<RecallClaimStart<T>>,
  ): Promise<RecallClaim<T>> {
    return this.db.transaction(async (client) => {
      const rowsOf: Rows = async (sql, params) => (await client.query<RecallRow>(sql, params)).rows;
      await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${CLAIM_IDLE_LIMIT}'`);
      // SKIP LOCKED: a row another process is starting is passed over at once, not waited for.
      const [row] = await rowsOf(
        `SELECT ${COLUMNS} FROM recalls WHERE id = $1 AND status = 'active' AND next_run_at = $2
         FOR UPDATE SKIP LOCKED`,
        [id, dueAt],
      );
      if (!row) {
        // Nothing came back: either the row is locked by another claim, or it has moved on.
        const now = await this.getOn(rowsOf, id);
        return now?.status === 'active' && now.next_run_at === dueAt ? { kind: 'taken' } : { kind: 'gone' };
      }
      const { value, patch } = await start(toRecord(row));
      if (patch) await this.updateOn(rowsOf, id, patch);
      return { kind: 'claimed', value };
    });
  }

  private async getOn(rows: Rows, id: string): Promise<RecallRecord | undefined> {
    const [row] = await rows(`SELECT ${COLUMNS} FROM recalls WHERE id = $1`, [id]);
    return row ? toRecord(row) : undefined;
  }

  private async updateOn(rows: Rows, id: string, patch: RecallPatch): Promise<RecallRecord | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const column of PATCHABLE) {
      const value = patch[column];
      if (value === undefined) continue;
      values.push(column === 'last_outcome' && value !== null ? JSON.stringify(value) : value);
      sets.push(`${column} = $${values.length}${column === 'last_outcome' ? '::jsonb' : ''}`);
    }
    if (sets.length === 0) return this.getOn(rows, id);
    values.push(id);
    const [row] = await rows(
      `UPDATE recalls SET ${sets.join(', ')} WHERE id = $${values.length} RETURNING ${COLUMNS}`,
      values,
    );
    return row ? toRecord(row) : undefined;
  }
}
