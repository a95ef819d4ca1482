/**
 * Sessions, their two message buffers (docs/architecture.md#two-buffers), per-session key-value state and file records.
 *
 * Messages keep the fields every query needs as typed columns and the fields whose presence
 * varies (images, tool calls, thinking, metadata…) in one JSON `payload`, so adding an optional
 * message field needs no migration.
 */
import type { Migration } from './types.js';

// The two buffers share one shape; a function keeps them from drifting apart.
function messageTable(table: string): string {
  return `
    CREATE TABLE ${table} (
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      -- Order within the buffer. Not contiguous: compression puts its summary just below the
      -- first kept row, so seq can be negative.
      seq INTEGER NOT NULL,
      id TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
      content TEXT,
      payload TEXT CHECK (payload IS NULL OR json_valid(payload)),
      created_at TEXT NOT NULL,
      UNIQUE (session_id, id),
      UNIQUE (session_id, seq)
    );`;
}

export const coreMigration: Migration = {
  version: 1,
  name: 'core',
  up(db) {
    db.exec(`
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        profile_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        created_at TEXT NOT NULL,
        last_active TEXT NOT NULL,
        context_token_count INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_by_order ON sessions (pinned DESC, last_active DESC);

      ${messageTable('messages')}
      ${messageTable('context_messages')}

      -- No foreign key to sessions: subagents keep state under ids like subagent_<uuid> that are
      -- not sessions. SessionStore.delete removes a session's rows explicitly.
      CREATE TABLE session_kv (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL CHECK (json_valid(value)),
        updated_at TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
      );

      -- Same reason as session_kv for having no foreign key.
      CREATE TABLE session_files (
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mime_type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        -- Canonical ISO-8601 UTC (toISOString), so text order is time order for the expiry scan.
        expires_at TEXT NOT NULL,
        PRIMARY KEY (session_id, name)
      );
      CREATE INDEX session_files_by_expiry ON session_files (expires_at);
    `);
  },
};
