/** KvStore on SQLite: one JSON value per (session id, key). */
import type { Database, Statement } from 'better-sqlite3';
import type { KvStore } from '../types.js';

export class SqliteKvStore implements KvStore {
  private readonly selectValue: Statement<[string, string], string>;
  private readonly upsert: Statement<[string, string, string, string]>;
  private readonly deleteKey: Statement<[string, string]>;
  private readonly deleteSession: Statement<[string]>;

  constructor(db: Database) {
    this.selectValue = db
      .prepare<[string, string], string>('SELECT value FROM session_kv WHERE session_id = ? AND key = ?')
      .pluck();
    this.upsert = db.prepare(
      `INSERT INTO session_kv (session_id, key, value, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    );
    this.deleteKey = db.prepare('DELETE FROM session_kv WHERE session_id = ? AND key = ?');
    this.deleteSession = db.prepare('DELETE FROM session_kv WHERE session_id = ?');
  }

  /** The stored value as JSON gives it back (so a Date comes back as its ISO string). */
  async get<T = unknown>(sessionId: string, key: string): Promise<T | undefined> {
    const text = this.selectValue.get(sessionId, key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  /**
   * Stores `value` as JSON. `undefined` removes the key, so that `get` keeps answering what was
   * last set; a value JSON cannot represent (a BigInt, a cycle) throws.
   */
  async set(sessionId: string, key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined) {
      this.deleteKey.run(sessionId, key);
      return;
    }
    this.upsert.run(sessionId, key, text, new Date().toISOString());
  }

  async delete(sessionId: string, key: string): Promise<boolean> {
    return this.deleteKey.run(sessionId, key).changes > 0;
  }

  async clear(sessionId: string): Promise<void> {
    this.deleteSession.run(sessionId);
  }
}
