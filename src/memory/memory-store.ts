/**
 * MemoryStore on SQLite (tables of migration 002). Full-text search goes through the FTS5 index
 * kept in step by triggers; vector search computes cosine distances inside SQLite with
 * sqlite-vec's `vec_distance_cosine` when the extension loads, or by scanning the Float32 blobs
 * in JavaScript otherwise (both are exact brute force: see docs/memory.md for the figures).
 */
import type { Database, Statement } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { toFtsQuery } from './fts-query.js';
import { MAX_CATEGORY_LENGTH, MAX_KEY_LENGTH, normaliseName, normaliseValue } from './normalise.js';
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
  MemoryValidationError,
  type SessionMemoryState,
  type VectorHit,
} from './types.js';

export type VectorEngine = 'sqlite-vec' | 'scan';

export interface SqliteMemoryStoreOptions {
  now?: () => Date;
  /** `auto` (default) uses sqlite-vec when it loads, else the JavaScript scan. */
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
  }

  async upsert(input: FactInput): Promise<{ fact: MemoryFact; created: boolean }> {
    const category = checkedName(input.category, 'category', MAX_CATEGORY_LENGTH);
    const key = checkedName(input.key, 'key', MAX_KEY_LENGTH);
    const value = checkedValue(input.value);
    const at = this.now().toISOString();
    return this.db.transaction(() => {
      const existing = this.byKey.get(category, key);
      if (existing) {
        if (existing.value === value) return { fact: existing, created: false };
        // A new value invalidates the vector: it described the old text.
        this.db
          .prepare(
            `UPDATE memory_facts SET value = ?, updated_at = ?, source_session_id = coalesce(?, source_session_id),
               embedding = NULL, embedding_model = NULL WHERE id = ?`,
          )
          .run(value, at, input.source_session_id ?? null, existing.id);
        this.bumpRevision.run();
        return { fact: this.byId.get(existing.id)!, created: false };
      }
      const id = Number(
        this.insertFact.run(category, key, value, input.source_session_id ?? null, at, at).lastInsertRowid,
      );
      this.bumpRevision.run();
      return { fact: this.byId.get(id)!, created: true };
    })();
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
    return this.db.transaction(() => {
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
      this.bumpRevision.run();
      return this.byId.get(id);
    })();
  }

  async delete(ref: FactRef): Promise<boolean> {
    return this.db.transaction(() => {
      const result =
        'id' in ref
          ? this.db.prepare('DELETE FROM memory_facts WHERE id = ?').run(ref.id)
          : this.db
              .prepare('DELETE FROM memory_facts WHERE category = ? AND key = ?')
              .run(normaliseName(ref.category, MAX_CATEGORY_LENGTH), normaliseName(ref.key, MAX_KEY_LENGTH));
      if (result.changes > 0) this.bumpRevision.run();
      return result.changes > 0;
    })();
  }

  async search(query: string, limit: number): Promise<FtsHit[]> {
    const match = toFtsQuery(query);
    if (match === null || limit <= 0) return [];
    // Weights: a word in the key says more about the fact than one in the category or value.
    const rows = this.db
      .prepare<[string, number], MemoryFact & { bm25: number }>(
        `SELECT f.id, f.category, f.key, f.value, f.source_session_id, f.created_at, f.updated_at,
                bm25(memory_facts_fts, 1.0, 2.0, 1.0) AS bm25
         FROM memory_facts_fts JOIN memory_facts f ON f.id = memory_facts_fts.rowid
         WHERE memory_facts_fts MATCH ? ORDER BY bm25, f.id LIMIT ?`,
      )
      .all(match, Math.floor(limit));
    return rows.map(({ bm25, ...fact }, i) => ({ fact, bm25, rank: i + 1 }));
  }

  async missingEmbeddings(model: string, limit: number): Promise<MemoryFact[]> {
    return this.db
      .prepare<[string, number], MemoryFact>(
        `SELECT ${FACT_COLUMNS} FROM memory_facts
         WHERE embedding IS NULL OR embedding_model IS NOT ? ORDER BY id LIMIT ?`,
      )
      .all(model, Math.max(0, Math.floor(limit)));
  }

  async setEmbedding(id: number, model: string, vector: Float32Array): Promise<void> {
    this.db
      .prepare('UPDATE memory_facts SET embedding = ?, embedding_model = ? WHERE id = ?')
      .run(toBlob(vector), model, id);
  }

  async nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    if (limit <= 0 || vector.length === 0 || !hasLength(vector)) return [];
    const bytes = vector.length * 4;
    if (this.vectorEngine === 'sqlite-vec') {
      return this.db
        .prepare<[Buffer, string, number, number], VectorHit>(
          `SELECT id, distance FROM (
             SELECT id, vec_distance_cosine(embedding, ?) AS distance FROM memory_facts
             WHERE embedding_model = ? AND length(embedding) = ?)
           WHERE distance IS NOT NULL ORDER BY distance, id LIMIT ?`,
        )
        .all(toBlob(vector), model, bytes, Math.floor(limit));
    }
    return this.scanNearest(vector, model, bytes, Math.floor(limit));
  }

  /** Exact top-k by cosine distance over the stored blobs, without loading them all at once. */
  private scanNearest(query: Float32Array, model: string, bytes: number, limit: number): VectorHit[] {
    const queryNorm = Math.sqrt(dot(query, query));
    const top: VectorHit[] = [];
    const rows = this.db
      .prepare<[string, number], [number, Buffer]>(
        'SELECT id, embedding FROM memory_facts WHERE embedding_model = ? AND length(embedding) = ?',
      )
      .raw()
      .iterate(model, bytes);
    for (const [id, blob] of rows) {
      const v = new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
      const norm = Math.sqrt(dot(v, v));
      if (norm === 0) continue;
      const distance = 1 - dot(query, v) / (queryNorm * norm);
      if (top.length === limit && distance >= top[top.length - 1]!.distance) continue;
      let i = top.length;
      while (i > 0 && top[i - 1]!.distance > distance) i--;
      top.splice(i, 0, { id, distance });
      if (top.length > limit) top.pop();
    }
    return top;
  }

  async getSummary(): Promise<MemorySummary> {
    const row = this.summaryRow();
    return { text: row.text, updated_at: row.updated_at, stale: row.facts_revision > row.summary_revision };
  }

  async setSummary(text: string, options: { basedOnRevision?: number } = {}): Promise<void> {
    const revision = options.basedOnRevision ?? this.summaryRow().facts_revision;
    this.db
      .prepare('UPDATE memory_summary SET text = ?, updated_at = ?, summary_revision = ? WHERE id = 1')
      .run(text, this.now().toISOString(), revision);
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

function chooseEngine(db: Database, wanted: VectorEngine | 'auto'): VectorEngine {
  if (wanted === 'scan') return 'scan';
  try {
    // Loading twice on one connection is harmless; probing tells us it really answers.
    sqliteVec.load(db);
    db.prepare('SELECT vec_version()').get();
    return 'sqlite-vec';
  } catch (err) {
    if (wanted === 'sqlite-vec') throw err;
    return 'scan';
  }
}

function checkedName(raw: string, field: string, max: number): string {
  const name = normaliseName(String(raw), max);
  if (!name) throw new MemoryValidationError(`The ${field} must contain at least one letter or digit.`);
  return name;
}

function checkedValue(raw: string): string {
  const value = normaliseValue(String(raw));
  if (!value) throw new MemoryValidationError('The value must not be empty.');
  return value;
}

function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function hasLength(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return true;
  return false;
}
