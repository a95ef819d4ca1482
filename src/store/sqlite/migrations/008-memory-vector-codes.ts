/**
 * Binary codes of the memory facts' vectors (docs/memory.md#vector-search): vector search
 * compares these compact codes first and the float vectors only for the few best candidates.
 * Existing vectors get their code here, so a memory embedded before this version is searched
 * the same way at once, without asking the embedding model again.
 */
import type { Migration } from './types.js';

/** Facts read per step while filling the codes: bounded memory whatever the size of the table. */
const FILL_BATCH = 2000;

/**
 * The code src/memory/vector-codes.ts makes (bit i set when component i is positive, whole 32-bit
 * words), written out here because a migration is frozen once shipped and the store layer does
 * not import the memory layer; a test checks that both give the same bytes.
 */
function signBits(vector: Float32Array): Buffer {
  const words = new Int32Array(Math.ceil(vector.length / 32));
  for (let i = 0; i < vector.length; i++) if (vector[i]! > 0) words[i >>> 5]! |= 1 << (i & 31);
  return Buffer.from(words.buffer);
}

export const memoryVectorCodesMigration: Migration = {
  version: 8,
  name: 'memory-vector-codes',
  up(db) {
    db.exec(`
      CREATE TABLE memory_fact_codes (
        fact_id INTEGER PRIMARY KEY REFERENCES memory_facts(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dimension INTEGER NOT NULL,
        -- One sign bit per dimension of the fact's embedding, in 32-bit little-endian words.
        code BLOB NOT NULL
      );
      -- A new or cleared vector makes the old code wrong; the store writes the new one.
      CREATE TRIGGER memory_facts_embedding_au AFTER UPDATE OF embedding, embedding_model ON memory_facts BEGIN
        DELETE FROM memory_fact_codes WHERE fact_id = old.id;
      END;

      -- Grows with every change to the codes, whoever makes it, so a store holding the codes in
      -- memory knows with one read whether they are still the ones on disk.
      CREATE TABLE memory_codes_revision (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        revision INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO memory_codes_revision (id) VALUES (1);
      CREATE TRIGGER memory_fact_codes_ai AFTER INSERT ON memory_fact_codes BEGIN
        UPDATE memory_codes_revision SET revision = revision + 1 WHERE id = 1;
      END;
      CREATE TRIGGER memory_fact_codes_ad AFTER DELETE ON memory_fact_codes BEGIN
        UPDATE memory_codes_revision SET revision = revision + 1 WHERE id = 1;
      END;
      CREATE TRIGGER memory_fact_codes_au AFTER UPDATE ON memory_fact_codes BEGIN
        UPDATE memory_codes_revision SET revision = revision + 1 WHERE id = 1;
      END;
    `);
    const page = db
      .prepare<[number, number], [number, string, Buffer]>(
        `SELECT id, embedding_model, embedding FROM memory_facts
         WHERE id > ? AND embedding IS NOT NULL AND embedding_model IS NOT NULL
           AND length(embedding) > 0 AND length(embedding) % 4 = 0
         ORDER BY id LIMIT ?`,
      )
      .raw();
    const insert = db.prepare(
      'INSERT INTO memory_fact_codes (fact_id, model, dimension, code) VALUES (?, ?, ?, ?)',
    );
    for (let last = 0; ; ) {
      const rows = page.all(last, FILL_BATCH);
      if (rows.length === 0) break;
      for (const [id, model, blob] of rows) {
        const vector = new Float32Array(Uint8Array.from(blob).buffer);
        insert.run(id, model, vector.length, signBits(vector));
      }
      last = rows[rows.length - 1]![0];
    }
  },
};
