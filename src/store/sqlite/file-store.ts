/** FileStore on SQLite: records of uploaded and shared files; the files themselves are on disk. */
import type { Database, Statement } from 'better-sqlite3';
import type { FileStore, SessionFileRecord } from '../types.js';

const COLUMNS = 'session_id, name, path, size, mime_type, created_at, expires_at';

/**
 * Expiry is found by comparing text, which is only time order when every stamp has the same
 * format, so stamps are stored as `toISOString()` gives them.
 */
function canonicalTime(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`File record ${field} is not a date: ${JSON.stringify(value)}`);
  return new Date(ms).toISOString();
}

export class SqliteFileStore implements FileStore {
  private readonly upsert: Statement<[SessionFileRecord]>;
  private readonly selectOne: Statement<[string, string], SessionFileRecord>;
  private readonly selectSession: Statement<[string], SessionFileRecord>;
  private readonly deleteOne: Statement<[string, string]>;
  private readonly selectExpired: Statement<[string], SessionFileRecord>;

  constructor(db: Database) {
    // Uploading a file under a name already used in the session replaces the record.
    this.upsert = db.prepare(
      `INSERT INTO session_files (${COLUMNS})
       VALUES (@session_id, @name, @path, @size, @mime_type, @created_at, @expires_at)
       ON CONFLICT (session_id, name) DO UPDATE SET path = excluded.path, size = excluded.size,
         mime_type = excluded.mime_type, created_at = excluded.created_at, expires_at = excluded.expires_at`,
    );
    this.selectOne = db.prepare(`SELECT ${COLUMNS} FROM session_files WHERE session_id = ? AND name = ?`);
    this.selectSession = db.prepare(
      `SELECT ${COLUMNS} FROM session_files WHERE session_id = ? ORDER BY created_at, name`,
    );
    this.deleteOne = db.prepare('DELETE FROM session_files WHERE session_id = ? AND name = ?');
    this.selectExpired = db.prepare(
      `SELECT ${COLUMNS} FROM session_files WHERE expires_at <= ? ORDER BY expires_at`,
    );
  }

  /** Adds or replaces the record; `created_at` and `expires_at` are stored in canonical ISO form. */
  async add(record: SessionFileRecord): Promise<void> {
    this.upsert.run({
      session_id: record.session_id,
      name: record.name,
      path: record.path,
      size: record.size,
      mime_type: record.mime_type,
      created_at: canonicalTime(record.created_at, 'created_at'),
      expires_at: canonicalTime(record.expires_at, 'expires_at'),
    });
  }

  async get(sessionId: string, name: string): Promise<SessionFileRecord | undefined> {
    return this.selectOne.get(sessionId, name);
  }

  /** Oldest first. */
  async list(sessionId: string): Promise<SessionFileRecord[]> {
    return this.selectSession.all(sessionId);
  }

  async remove(sessionId: string, name: string): Promise<boolean> {
    return this.deleteOne.run(sessionId, name).changes > 0;
  }

  async expired(now: Date): Promise<SessionFileRecord[]> {
    return this.selectExpired.all(now.toISOString());
  }
}
