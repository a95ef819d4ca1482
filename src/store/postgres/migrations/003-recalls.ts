/**
 * Recalls: prompts scheduled to run later, headless, in their session. One row per recall. Its
 * times sort byte by byte (COLLATE "C"), as in SQLite, whatever the database's locale: canonical
 * ISO-8601 UTC text then sorts in time order. Several processes fire from this table; the row
 * lock of a claim keeps an occurrence to one of them, so no column records who holds it.
 */
import type { PgMigration } from './types.js';

export const recallsMigration: PgMigration = {
  version: 3,
  name: 'recalls',
  async up(client) {
    await client.query(`
      CREATE TABLE recalls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        prompt TEXT NOT NULL,
        schedule JSONB NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'done', 'cancelled')),
        next_run_at TEXT COLLATE "C",
        last_run_at TEXT COLLATE "C",
        last_outcome JSONB,
        run_count INTEGER NOT NULL DEFAULT 0,
        chain INTEGER NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL,
        CHECK (status <> 'active' OR next_run_at IS NOT NULL)
      );
      CREATE INDEX recalls_due ON recalls (next_run_at) WHERE status = 'active';
      CREATE INDEX recalls_by_session ON recalls (session_id, status);
    `);
  },
};
