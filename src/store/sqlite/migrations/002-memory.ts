/**
 * Long-term memory (docs/memory.md#long-term-memory): facts about the user, their full-text index, the narrative
 * summary injected into every run, and which sessions have been mined for facts.
 */
import type { Migration } from './types.js';

export const memoryMigration: Migration = {
  version: 2,
  name: 'memory',
  up(db) {
    db.exec(`
      CREATE TABLE memory_facts (
        id INTEGER PRIMARY KEY,
        category TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        -- No foreign key: a fact outlives the session it was learnt in.
        source_session_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        -- Float32 little-endian vector and the model that produced it; NULL until embedded.
        embedding BLOB,
        embedding_model TEXT,
        UNIQUE (category, key)
      );
      CREATE INDEX memory_facts_by_update ON memory_facts (updated_at DESC);
      CREATE INDEX memory_facts_by_model ON memory_facts (embedding_model);

      -- External-content index: the text lives once, in memory_facts; triggers keep both in step.
      CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        category, key, value,
        content = 'memory_facts', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (rowid, category, key, value) VALUES (new.id, new.category, new.key, new.value);
      END;
      CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, category, key, value)
          VALUES ('delete', old.id, old.category, old.key, old.value);
      END;
      -- Only text changes touch the index; storing an embedding does not.
      CREATE TRIGGER memory_facts_au AFTER UPDATE OF category, key, value ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, category, key, value)
          VALUES ('delete', old.id, old.category, old.key, old.value);
        INSERT INTO memory_facts_fts (rowid, category, key, value) VALUES (new.id, new.category, new.key, new.value);
      END;

      -- One row. facts_revision grows with every change to the facts; summary_revision is the
      -- revision the summary was written from, so a stale summary is a comparison away.
      CREATE TABLE memory_summary (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        text TEXT NOT NULL DEFAULT '',
        updated_at TEXT,
        facts_revision INTEGER NOT NULL DEFAULT 0,
        summary_revision INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO memory_summary (id) VALUES (1);

      CREATE TABLE session_memory_state (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        -- When the last successful extraction started: messages after it are not yet mined.
        extracted_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        attempted_at TEXT
      );
    `);
  },
};
