/** RecallStore on SQLite: the `recalls` table, schedules and outcomes kept as JSON. */
import type { Database, Statement } from 'better-sqlite3';
import type { RecallOutcome, RecallSchedule, RecallStatus } from '../../protocol/rest.js';
import type {
  RecallClaim,
  RecallClaimStart,
  RecallPatch,
  RecallRecord,
  RecallStore,
  RecallTime,
} from '../types.js';

interface RecallRow {
  id: string;
  session_id: string;
  prompt: string;
  schedule: string;
  status: RecallStatus;
  next_run_at: string | null;
  last_run_at: string | null;
  last_outcome: string | null;
  run_count: number;
  chain: number;
  created_at: string;
}

const COLUMNS =
  'id, session_id, prompt, schedule, status, next_run_at, last_run_at, last_outcome, run_count, chain, created_at';

function fromRow(row: RecallRow): RecallRecord {
  return {
    ...row,
    schedule: JSON.parse(row.schedule) as RecallSchedule,
    last_outcome: row.last_outcome === null ? null : (JSON.parse(row.last_outcome) as RecallOutcome),
  };
}

export class SqliteRecallStore implements RecallStore {
  private readonly insert: Statement<RecallRow>;
  private readonly byId: Statement<[string], RecallRow>;
  private readonly activeOf: Statement<[string], RecallRow>;
  private readonly finishedOf: Statement<[string, number], RecallRow>;
  private readonly countOf: Statement<[string], number>;
  private readonly times: Statement<[number], RecallTime>;
  private readonly dueBy: Statement<[string, number], RecallRow>;
  /**
   * Occurrences being started. One process owns the SQLite file, so a set is all the claim
   * needs: it keeps two schedulers in this process (a restart overlapping its predecessor) apart.
   */
  private readonly claiming = new Set<string>();

  constructor(private readonly db: Database) {
    this.insert = db.prepare(
      `INSERT INTO recalls (${COLUMNS}) VALUES (@id, @session_id, @prompt, @schedule, @status,
       @next_run_at, @last_run_at, @last_outcome, @run_count, @chain, @created_at)`,
    );
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM recalls WHERE id = ?`);
    this.activeOf = db.prepare(
      `SELECT ${COLUMNS} FROM recalls WHERE session_id = ? AND status = 'active' ORDER BY next_run_at, created_at`,
    );
    this.finishedOf = db.prepare(
      `SELECT ${COLUMNS} FROM recalls WHERE session_id = ? AND status <> 'active'
       ORDER BY COALESCE(last_run_at, created_at) DESC LIMIT ?`,
    );
    this.countOf = db
      .prepare<[string], number>(`SELECT COUNT(*) FROM recalls WHERE session_id = ? AND status = 'active'`)
      .pluck();
    this.times = db.prepare(
      `SELECT id, next_run_at FROM recalls WHERE status = 'active' ORDER BY next_run_at, created_at LIMIT ?`,
    );
    this.dueBy = db.prepare(
      `SELECT ${COLUMNS} FROM recalls WHERE status = 'active' AND next_run_at <= ?
       ORDER BY next_run_at, created_at LIMIT ?`,
    );
  }

  async add(recall: RecallRecord): Promise<void> {
    this.insert.run({
      ...recall,
      schedule: JSON.stringify(recall.schedule),
      last_outcome: recall.last_outcome === null ? null : JSON.stringify(recall.last_outcome),
    });
  }

  async get(id: string): Promise<RecallRecord | undefined> {
    const row = this.byId.get(id);
    return row ? fromRow(row) : undefined;
  }

  async listForSession(sessionId: string, finishedLimit = 20): Promise<RecallRecord[]> {
    return [...this.activeOf.all(sessionId), ...this.finishedOf.all(sessionId, finishedLimit)].map(fromRow);
  }

  async countActive(sessionId: string): Promise<number> {
    return this.countOf.get(sessionId) ?? 0;
  }

  async soonest(limit: number): Promise<RecallTime[]> {
    return this.times.all(limit);
  }

  async due(nowIso: string, limit: number): Promise<RecallRecord[]> {
    return this.dueBy.all(nowIso, limit).map(fromRow);
  }

  async claim<T>(
    id: string,
    dueAt: string,
    start: (current: RecallRecord) => Promise<RecallClaimStart<T>>,
  ): Promise<RecallClaim<T>> {
    const row = this.byId.get(id);
    if (row?.status !== 'active' || row.next_run_at !== dueAt) return { kind: 'gone' };
    if (this.claiming.has(id)) return { kind: 'taken' };
    this.claiming.add(id);
    try {
      const { value, patch } = await start(fromRow(row));
      if (patch) await this.update(id, patch);
      return { kind: 'claimed', value };
    } finally {
      this.claiming.delete(id);
    }
  }

  async update(id: string, patch: RecallPatch): Promise<RecallRecord | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [column, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(column === 'last_outcome' && value !== null ? JSON.stringify(value) : value);
    }
    if (sets.length > 0)
      this.db.prepare(`UPDATE recalls SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
    return this.get(id);
  }
}
