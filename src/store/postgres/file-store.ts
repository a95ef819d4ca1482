/** FileStore on PostgreSQL: records of uploaded and shared files; the files themselves are on disk. */
import type { FileStore, SessionFileRecord } from '../types.js';
import type { PgDatabase } from './database.js';
import { pgText, storableKey } from './pg-values.js';

const COLUMNS = 'session_id, name, path, size, mime_type, created_at, expires_at';

/**
 * Expiry is found by comparing text (in the "C" collation), which is only time order when every
 * stamp has the same format, so stamps are stored as `toISOString()` gives them.
 */
function canonicalTime(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`File record ${field} is not a date: ${JSON.stringify(value)}`);
  return new Date(ms).toISOString();
}

export class PgFileStore implements FileStore {
  constructor(readonly db: PgDatabase) {}

  /** Adds or replaces the record; `created_at` and `expires_at` are stored in canonical ISO form. */
  async add(record: SessionFileRecord): Promise<void> {
    for (const field of ['session_id', 'name', 'path'] as const) {
      if (!storableKey(record[field])) {
        throw new Error(
          `File record ${field} cannot contain the NUL character: ${JSON.stringify(record[field])}`,
        );
      }
    }
    // Uploading a file under a name already used in the session replaces the record.
    await this.db.query(
      `INSERT INTO session_files (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (session_id, name) DO UPDATE SET path = excluded.path, size = excluded.size,
         mime_type = excluded.mime_type, created_at = excluded.created_at, expires_at = excluded.expires_at`,
      [
        record.session_id,
        record.name,
        record.path,
        record.size,
        pgText(record.mime_type),
        canonicalTime(record.created_at, 'created_at'),
        canonicalTime(record.expires_at, 'expires_at'),
      ],
    );
  }

  async get(sessionId: string, name: string): Promise<SessionFileRecord | undefined> {
    if (!storableKey(sessionId) || !storableKey(name)) return undefined;
    const [row] = await this.db.rows<SessionFileRecord>(
      `SELECT ${COLUMNS} FROM session_files WHERE session_id = $1 AND name = $2`,
      [sessionId, name],
    );
    return row;
  }

  /** Oldest first. */
  async list(sessionId: string): Promise<SessionFileRecord[]> {
    if (!storableKey(sessionId)) return [];
    return this.db.rows<SessionFileRecord>(
      `SELECT ${COLUMNS} FROM session_files WHERE session_id = $1 ORDER BY created_at, name`,
      [sessionId],
    );
  }

  async remove(sessionId: string, name: string): Promise<boolean> {
    if (!storableKey(sessionId) || !storableKey(name)) return false;
    const result = await this.db.query('DELETE FROM session_files WHERE session_id = $1 AND name = $2', [
      sessionId,
      name,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async expired(now: Date): Promise<SessionFileRecord[]> {
    return this.db.rows<SessionFileRecord>(
      `SELECT ${COLUMNS} FROM session_files WHERE expires_at <= $1 ORDER BY expires_at`,
      [now.toISOString()],
    );
  }
}
