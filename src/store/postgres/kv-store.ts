/**
 * KvStore on PostgreSQL: one JSONB value per (session id, key). JSONB keeps the value, not its
 * spelling: an object's keys come back in JSONB's own order (which no caller relies on), and a
 * NUL in a string comes back as U+FFFD (see pg-values.ts).
 */
import type { KvStore } from '../types.js';
import type { PgDatabase } from './database.js';
import { pgJson, refuseNul, storableKey } from './pg-values.js';

export class PgKvStore implements KvStore {
  constructor(readonly db: PgDatabase) {}

  /** The stored value as JSON gives it back (so a Date comes back as its ISO string). */
  async get<T = unknown>(sessionId: string, key: string): Promise<T | undefined> {
    if (!storableKey(sessionId) || !storableKey(key)) return undefined;
    // As text, parsed here: a stored JSON null must read as null, not as a missing row.
    const [row] = await this.db.rows<{ value: string }>(
      'SELECT value::text AS value FROM session_kv WHERE session_id = $1 AND key = $2',
      [sessionId, key],
    );
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  /**
   * Stores `value` as JSON. `undefined` removes the key, so that `get` keeps answering what was
   * last set; a value JSON cannot represent (a BigInt, a cycle) throws.
   */
  async set(sessionId: string, key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined) {
      await this.delete(sessionId, key);
      return;
    }
    refuseNul('session id', sessionId);
    refuseNul('key', key);
    await this.db.query(
      `INSERT INTO session_kv (session_id, key, value, updated_at) VALUES ($1, $2, $3::jsonb, $4)
       ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [sessionId, key, pgJson(text), new Date().toISOString()],
    );
  }

  async delete(sessionId: string, key: string): Promise<boolean> {
    if (!storableKey(sessionId) || !storableKey(key)) return false;
    const result = await this.db.query('DELETE FROM session_kv WHERE session_id = $1 AND key = $2', [
      sessionId,
      key,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async clear(sessionId: string): Promise<void> {
    if (!storableKey(sessionId)) return;
    await this.db.query('DELETE FROM session_kv WHERE session_id = $1', [sessionId]);
  }
}
