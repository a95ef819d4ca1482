/**
 * Recalls: prompts the agent scheduled to run later, headless, in their session. One row per
 * recall, recurring ones included: a recurring recall moves its `next_run_at` forward.
 */
import type { Migration } from './types.js';

export const recallsMigration: Migration = {
  version: 5,
  name: 'recalls',
  up(db) {
    db.exec(`
      CREATE TABLE recalls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        prompt TEXT NOT NULL,
        schedule TEXT NOT NULL CHECK (json_valid(schedule)),
        status TEXT NOT NULL CHECK (status IN ('active', 'done', 'cancelled')),
        -- Canonical ISO-8601 UTC, so text order is time order; NULL once it no longer fires.
        next_run_at TEXT,
        last_run_at TEXT,
        last_outcome TEXT CHECK (last_outcome IS NULL OR json_valid(last_outcome)),
        run_count INTEGER NOT NULL DEFAULT 0,
        chain INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        CHECK (status <> 'active' OR next_run_at IS NOT NULL)
      );
      CREATE INDEX recalls_due ON recalls (next_run_at) WHERE status = 'active';
      CREATE INDEX recalls_by_session ON recalls (session_id, status);
    `);
  },
};
