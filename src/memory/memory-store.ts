/**
 * MemoryStore on SQLite (tables of migrations 002 and 008). Full-text search goes through the
 * FTS5 index kept in step by triggers; vector search compares binary codes held in memory and
 * ranks the best candidates by their exact float cosine distance (vector-index.ts). See
 * docs/memory.md for how each search works and what it costs.
 */
import type { Database, Statement } from 'better-sqlite3';
import { chooseEngine, exactNearest, type VectorEngine } from './exact-nearest.js';
import { type FtsQueries, toFtsQueries } from './fts-query.js';
import {
  checkedName,
  checkedValue,
  MAX_CATEGORY_LENGTH,
  MAX_KEY_LENGTH,
  normaliseName,
} from './normalise.js';
import {
  type FactInput,
  type FactListOptions,
  type FactPage,
  type FactPatch,
  type FactRef,
  type FtsHit,
  MemoryConflictError,
  type MemoryFact,
  type MemoryStore,
  type MemorySummary,
  type SessionMemoryState,
  type UpsertResult,
  type VectorEntry,
  type VectorHit,
} from './types.js';
import { hasLength, toBlob } from './vector-codes.js';
import { VectorIndex } from './vector-index.js';

export type { VectorEngine } from './exact-nearest.js';

export interface SqliteMemoryStoreOptions {
  now?: () => Date;
  /**
   * Engine of `nearestExact`: `auto` (default) uses sqlite-vec when it loads, else the
   * JavaScript scan. `nearest` needs neither.
   */
  vectorEngine?: VectorEngine | 'auto';
}

const FACT_COLUMNS = 'id, category, key, value, source_session_id, created_at, updated_at';
const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

interface SummaryRow {
  text: string;
  updated_at: string | null;
  facts_revision: number;
  summary_revision: number;
}

export class SqliteMemoryStore implements MemoryStore {
  readonly vectorEngine: VectorEngine;
  private readonly now: () => Date;
  private readonly byId: Statement<[number], MemoryFact>;
  private readonly byKey: Statement<[string, string], MemoryFact>;
  private readonly insertFact: Statement<[string, string, string, string | null, string, string]>;
  private readonly bumpRevision: Statement<[]>;
  private readonly replaceValue: Statement<[string, string, string | null, number]>;
  private readonly ranked: Statement<[string, number], { id: number; bm25: number }>;
  private readonly writeEmbedding: Statement<{ id: number; model: string; embedding: Buffer }>;
  private readonly writeEmbeddingOf: Statement<{
    id: number;
    model: string;
    embedding: Buffer;
    category: string;
    key: string;
    value: string;
  }>;
  private readonly unembedded: Statement<{ model: string; limit: number }, MemoryFact>;
  private readonly index: VectorIndex;

  constructor(
    private readonly db: Database,
    options: SqliteMemoryStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.vectorEngine = chooseEngine(db, options.vectorEngine ?? 'auto');
    this.byId = db.prepare(`SELECT ${FACT_COLUMNS} FROM memory_facts WHERE id = ?`);
    this.byKey = db.prepare(`SELECT ${FACT_COLUMNS} FROM memory_facts WHERE category = ? AND key = ?`);
    this.insertFact = db.prepare(
      `INSERT INTO memory_facts (category, key, value, source_session_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.bumpRevision = db.prepare(
      'UPDATE memory_summary SET facts_revision = facts_revision + 1 WHERE id = 1',
    );
    // A new value invalidates the vector: it described the old text.
    this.replaceValue = db.prepare(
      `UPDATE memory_facts SET value = ?, updated_at = ?, source_session_id = coalesce(?, source_session_id),
         embedding = NULL, embedding_model = NULL WHERE id = ?`,
    );
    // Weights: a word in the key says more about the fact than one in the category or value.
    this.ranked = db.prepare(
      `SELECT rowid AS id, bm25(memory_facts_fts, 1.0, 2.0, 1.0) AS bm25 FROM memory_facts_fts
       WHERE memory_facts_fts MATCH ? ORDER BY bm25, rowid LIMIT ?`,
    );
    this.writeEmbedding = db.prepare(
      'UPDATE memory_facts SET embedding = @embedding, embedding_model = @model WHERE id = @id',
    );
    this.writeEmbeddingOf = db.prepare(
      `UPDATE memory_facts SET embedding = @embedding, embedding_model = @model
       WHERE id = @id AND category = @category AND key = @key AND value = @value`,
    );
    // Three ranges of the embedding_model index, not a scan of every fact and its vector (which
    // an OR with ORDER BY id makes): at 100 000 embedded facts each search asks this first. The
    // store sets and clears embedding and embedding_model together: a NULL model is no vector.
    this.unembedded = db.prepare(
      `SELECT ${FACT_COLUMNS} FROM memory_facts WHERE id IN (
         SELECT id FROM memory_facts WHERE embedding_model IS NULL
         UNION ALL SELECT id FROM memory_facts WHERE embedding_model < @model
         UNION ALL SELECT id FROM memory_facts WHERE embedding_model > @model)
       ORDER BY id LIMIT @limit`,
    );
    this.index = new VectorIndex(db, this.vectorEngine);
  }

  async upsert(input: FactInput): Promise<UpsertResult> {
    return (await this.upsertMany([input]))[0]!;
  }

  async upsertMany(inputs: readonly FactInput[]): Promise<UpsertResult[]> {
    // Every input is checked before anything is written, so a bad one leaves the memory as it was.
    const checked = inputs.map((input) => ({
      category: checkedName(input.category, 'category', MAX_CATEGORY_LENGTH),
      key: checkedName(input.key, 'key', MAX_KEY_LENGTH),
      value: checkedValue(input.value),
      source: input.source_session_id ?? null,
    }));
    if (checked.length === 0) return [];
    const at = this.now().toISOString();
    return this.index.track((touch) => {
      let changed = false;
      const results = checked.map(({ category, key, value, source }): UpsertResult => {
        const existing = this.byKey.get(category, key);
        if (existing) {
          if (existing.value === value) return { fact: existing, created: false };
          this.replaceValue.run(value, at, source, existing.id);
          touch(existing.id);
          changed = true;
          return { fact: this.byId.get(existing.id)!, created: false };
        }
        const id = Number(this.insertFact.run(category, key, value, source, at, at).lastInsertRowid);
        changed = true;
        return { fact: this.byId.get(id)!, created: true };
      });
      if (changed) this.bumpRevision.run();
      return results;
    });
  }

  async get(id: number): Promise<MemoryFact | undefined> {
    return this.byId.get(id);
  }

  async getByKey(category: string, key: string): Promise<MemoryFact | undefined> {
    return this.byKey.get(normaliseName(category, MAX_CATEGORY_LENGTH), normaliseName(key, MAX_KEY_LENGTH));
  }

  async list(options: FactListOptions = {}): Promise<FactPage> {
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(options.limit ?? DEFAULT_PAGE)));
    const category =
      options.category === undefined ? null : normaliseName(options.category, MAX_CATEGORY_LENGTH);
    const where = category === null ? '' : 'WHERE category = @category';
    const facts = this.db
      .prepare<{ category: string | null; limit: number; offset: number }, MemoryFact>(
        `SELECT ${FACT_COLUMNS} FROM memory_facts ${where} ORDER BY updated_at DESC, id DESC LIMIT @limit OFFSET @offset`,
      )
      .all({ category, limit, offset });
    const total = this.db
      .prepare<{ category: string | null }, number>(`SELECT count(*) FROM memory_facts ${where}`)
      .pluck()
      .get({ category })!;
    return { facts, total, offset, limit };
  }

  async recent(limit: number): Promise<MemoryFact[]> {
    return this.db
      .prepare<[number], MemoryFact>(
        `SELECT ${FACT_COLUMNS} FROM memory_facts ORDER BY updated_at DESC, id DESC LIMIT ?`,
      )
      .all(Math.max(0, Math.floor(limit)));
  }

  async count(): Promise<number> {
    return this.db.prepare<[], number>('SELECT count(*) FROM memory_facts').pluck().get()!;
  }

  async update(id: number, patch: FactPatch): Promise<MemoryFact | undefined> {
    const at = this.now().toISOString();
    return this.index.track((touch) => {
      const old = this.byId.get(id);
      if (!old) return undefined;
      const category =
        patch.category === undefined
          ? old.category
          : checkedName(patch.category, 'category', MAX_CATEGORY_LENGTH);
      const key = patch.key === undefined ? old.key : checkedName(patch.key, 'key', MAX_KEY_LENGTH);
      const value = patch.value === undefined ? old.value : checkedValue(patch.value);
      if (category === old.category && key === old.key && value === old.value) return old;
      const other = this.byKey.get(category, key);
      if (other && other.id !== id) throw new MemoryConflictError(category, key, other.id);
      this.db
        .prepare(
          `UPDATE memory_facts SET category = ?, key = ?, value = ?, updated_at = ?,
             embedding = NULL, embedding_model = NULL WHERE id = ?`,
        )
        .run(category, key, value, at, id);
      touch(id);
      this.bumpRevision.run();
      return this.byId.get(id);
    });
  }

  async delete(ref: FactRef): Promise<boolean> {
    return this.index.track((touch) => {
      const id =
        'id' in ref
          ? ref.id
          : this.byKey.get(
              normaliseName(ref.category, MAX_CATEGORY_LENGTH),
              normaliseName(ref.key, MAX_KEY_LENGTH),
            )?.id;
      if (id === undefined) return false;
      const deleted = this.db.prepare('DELETE FROM memory_facts WHERE id = ?').run(id).changes > 0;
      if (deleted) {
        touch(id);
        this.bumpRevision.run();
      }
      return deleted;
    });
  }

  async search(query: string, limit: number): Promise<FtsHit[]> {
    const queries = toFtsQueries(query);
    if (queries === null || limit <= 0) return [];
    return this.rankedFacts(queries, Math.floor(limit)).map(({ bm25, ...fact }, i) => ({
      fact,
      bm25,
      rank: i + 1,
    }));
  }

  /**
   * The facts holding every word, best bm25 first; when they are fewer than `limit`, the facts
   * holding only some of the words follow, best bm25 first. Only the FTS index is read while
   * ranking, and the facts' rows only for the hits returned.
   */
  private rankedFacts(queries: FtsQueries, limit: number): (MemoryFact & { bm25: number })[] {
    const ranked = this.ranked;
    const hits = ranked.all(queries.all, limit);
    if (hits.length < limit && queries.any !== queries.all) {
      const seen = new Set(hits.map((h) => h.id));
      for (const hit of ranked.all(queries.any, limit + hits.length)) {
        if (hits.length === limit) break;
        if (!seen.has(hit.id)) hits.push(hit);
      }
    }
    const out: (MemoryFact & { bm25: number })[] = [];
    for (const { id, bm25 } of hits) {
      const fact = this.byId.get(id);
      if (fact) out.push({ ...fact, bm25 });
    }
    return out;
  }

  async missingEmbeddings(model: string, limit: number): Promise<MemoryFact[]> {
    return this.unembedded.all({ model, limit: Math.max(0, Math.floor(limit)) });
  }

  async setEmbedding(id: number, model: string, vector: Float32Array): Promise<void> {
    await this.setEmbeddings([{ id, model, vector }]);
  }

  async setEmbeddings(entries: readonly VectorEntry[]): Promise<void> {
    if (entries.length === 0) return;
    this.index.track((touch) => {
      for (const { id, model, vector, of } of entries) {
        const embedding = toBlob(vector);
        const written = of
          ? this.writeEmbeddingOf.run({
              id,
              model,
              embedding,
              category: of.category,
              key: of.key,
              value: of.value,
            })
          : this.writeEmbedding.run({ id, model, embedding });
        if (written.changes === 0) continue; // deleted, or its text edited, meanwhile
        if (vector.length > 0) this.index.storeCode(id, model, vector);
        touch(id);
      }
    });
  }

  async nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    if (limit <= 0 || vector.length === 0 || !hasLength(vector)) return [];
    return this.index.nearest(vector, model, Math.floor(limit));
  }

  /** `nearest` by brute force over every float vector: the reference its recall is measured against. */
  async nearestExact(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    if (limit <= 0 || vector.length === 0 || !hasLength(vector)) return [];
    return exactNearest(this.db, this.vectorEngine, vector, model, Math.floor(limit));
  }

  async getSummary(): Promise<MemorySummary> {
    const row = this.summaryRow();
    return { text: row.text, updated_at: row.updated_at, stale: row.facts_revision > row.summary_revision };
  }

  async setSummary(text: string, options: { basedOnRevision?: number } = {}): Promise<void> {
    const revision = options.basedOnRevision ?? this.summaryRow().facts_revision;
    // A summary written from later facts (another pass that finished first) is kept.
    this.db
      .prepare(
        'UPDATE memory_summary SET text = ?, updated_at = ?, summary_revision = ? WHERE id = 1 AND summary_revision <= ?',
      )
      .run(text, this.now().toISOString(), revision, revision);
  }

  async factsRevision(): Promise<number> {
    return this.summaryRow().facts_revision;
  }

  async getSessionState(sessionId: string): Promise<SessionMemoryState | undefined> {
    return this.db
      .prepare<[string], SessionMemoryState>('SELECT * FROM session_memory_state WHERE session_id = ?')
      .get(sessionId);
  }

  async listSessionStates(): Promise<SessionMemoryState[]> {
    return this.db.prepare<[], SessionMemoryState>('SELECT * FROM session_memory_state').all();
  }

  async setSessionState(state: SessionMemoryState): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO session_memory_state (session_id, extracted_at, status, attempts, last_error, attempted_at)
         VALUES (@session_id, @extracted_at, @status, @attempts, @last_error, @attempted_at)
         ON CONFLICT (session_id) DO UPDATE SET extracted_at = excluded.extracted_at, status = excluded.status,
           attempts = excluded.attempts, last_error = excluded.last_error, attempted_at = excluded.attempted_at`,
      )
      .run(state);
  }

  private summaryRow(): SummaryRow {
    return this.db
      .prepare<[], SummaryRow>(
        'SELECT text, updated_at, facts_revision, summary_revision FROM memory_summary WHERE id = 1',
      )
      .get()!;
  }
}
