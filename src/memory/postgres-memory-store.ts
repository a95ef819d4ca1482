/**
 * MemoryStore on PostgreSQL (migration 002; docs/postgres.md#memory-search-on-postgresql). Full
 * text goes through the facts' generated `tsvector` column and its GIN index, ranked by
 * `ts_rank`; the query is built from the same sanitised words as on SQLite (`memoryQueryTerms`).
 * Vectors are found through pgvector when the server has it (pg-vector-extension.ts), else by
 * the binary codes held in memory and an exact re-rank of the best candidates (pg-vector-index.ts).
 *
 * Several Navi processes may share the database: every write is one transaction, the facts'
 * revision lives in the database, and no cache is used without checking its revision first.
 */
import type { PgClient, PgDatabase } from '../store/postgres/index.js';
import { tsqueryText } from '../store/postgres/pg-text-search.js';
import { pgErrorCode, UNIQUE_VIOLATION } from '../store/postgres/pg-values.js';
import { memoryQueryTerms } from './fts-query.js';
import {
  checkedName,
  checkedValue,
  MAX_CATEGORY_LENGTH,
  MAX_KEY_LENGTH,
  normaliseName,
} from './normalise.js';
import { PgVectorExtension, type PgVectorState } from './pg-vector-extension.js';
import { PgVectorIndex, type Touch } from './pg-vector-index.js';
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

export interface PgMemoryStoreOptions {
  now?: () => Date;
  /** `auto` (default) uses pgvector when the server offers it; `scan` never tries. */
  vectorSearch?: 'auto' | 'scan';
}

const FACT_COLUMNS = 'id, category, key, value, source_session_id, created_at, updated_at';
const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;
/** ts_rank weights {D, C, B, A}: a key word (A) counts twice a category or value word (B). */
const RANK_WEIGHTS = '{0.1, 0.2, 0.5, 1.0}';
/**
 * The facts' text as a tsvector per configuration: the stored, GIN-indexed `fts` column
 * (migration 002), and the same weights under 'simple' for queries of stop words only.
 */
const FACT_VECTOR = {
  english: 'fts',
  simple: `(setweight(to_tsvector('simple', navi_fts_fold(category)), 'B') ||
    setweight(to_tsvector('simple', navi_fts_fold(key)), 'A') ||
    setweight(to_tsvector('simple', navi_fts_fold(value)), 'B'))`,
} as const;
/** Key of the advisory locks that let one process at a time mine a session. */
const EXTRACTION_LOCK_CLASS = 0x4e61764d; // "NavM"

interface SummaryRow {
  text: string;
  updated_at: string | null;
  facts_revision: number;
  summary_revision: number;
}

export class PgMemoryStore implements MemoryStore {
  private readonly now: () => Date;
  private readonly index: PgVectorIndex;
  private readonly extension: PgVectorExtension | undefined;

  constructor(
    readonly db: PgDatabase,
    options: PgMemoryStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.index = new PgVectorIndex(db);
    this.extension = options.vectorSearch === 'scan' ? undefined : new PgVectorExtension(db);
  }

  /** Which way `nearest` finds vectors in this process; sets pgvector up when first asked. */
  async vectorSearch(): Promise<'pgvector' | 'scan'> {
    return (await this.extension?.available()) ? 'pgvector' : 'scan';
  }

  /**
   * How vectors are found, from the catalogs alone (for `navi doctor`, which must leave the
   * database as it was): `vectorSearch()` would create the extension, a table and a trigger.
   * `scan` when this store never uses pgvector.
   */
  async vectorSearchState(): Promise<PgVectorState | 'scan'> {
    return this.extension ? this.extension.state() : 'scan';
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
    return this.index.track(async (client, touch) => {
      let changed = false;
      const results: UpsertResult[] = [];
      for (const { category, key, value, source } of checked) {
        const result = await upsertOne(client, touch, category, key, value, source, at);
        if (result.changed) changed = true;
        results.push({ fact: result.fact, created: result.created });
      }
      if (changed) await bumpFactsRevision(client);
      return results;
    });
  }

  async get(id: number): Promise<MemoryFact | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const [fact] = await this.db.rows<MemoryFact>(`SELECT ${FACT_COLUMNS} FROM memory_facts WHERE id = $1`, [
      id,
    ]);
    return fact;
  }

  async getByKey(category: string, key: string): Promise<MemoryFact | undefined> {
    return byKey(this.db, normaliseName(category, MAX_CATEGORY_LENGTH), normaliseName(key, MAX_KEY_LENGTH));
  }

  async list(options: FactListOptions = {}): Promise<FactPage> {
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(options.limit ?? DEFAULT_PAGE)));
    const category =
      options.category === undefined ? null : normaliseName(options.category, MAX_CATEGORY_LENGTH);
    const where = category === null ? 'WHERE $1::text IS NULL' : 'WHERE category = $1';
    const facts = await this.db.rows<MemoryFact>(
      `SELECT ${FACT_COLUMNS} FROM memory_facts ${where} ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [category, limit, offset],
    );
    const [row] = await this.db.rows<{ n: number }>(
      `SELECT count(*)::bigint AS n FROM memory_facts ${where}`,
      [category],
    );
    return { facts, total: row?.n ?? 0, offset, limit };
  }

  async recent(limit: number): Promise<MemoryFact[]> {
    return this.db.rows<MemoryFact>(
      `SELECT ${FACT_COLUMNS} FROM memory_facts ORDER BY updated_at DESC, id DESC LIMIT $1`,
      [Math.max(0, Math.floor(limit))],
    );
  }

  async count(): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>('SELECT count(*)::bigint AS n FROM memory_facts');
    return row?.n ?? 0;
  }

  async update(id: number, patch: FactPatch): Promise<MemoryFact | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const at = this.now().toISOString();
    return this.index.track(async (client, touch) => {
      const [old] = (
        await client.query<MemoryFact>(`SELECT ${FACT_COLUMNS} FROM memory_facts WHERE id = $1 FOR UPDATE`, [
          id,
        ])
      ).rows;
      if (!old) return undefined;
      const category =
        patch.category === undefined
          ? old.category
          : checkedName(patch.category, 'category', MAX_CATEGORY_LENGTH);
      const key = patch.key === undefined ? old.key : checkedName(patch.key, 'key', MAX_KEY_LENGTH);
      const value = patch.value === undefined ? old.value : checkedValue(patch.value);
      if (category === old.category && key === old.key && value === old.value) return old;
      const other = await byKey(client, category, key);
      if (other && other.id !== id) throw new MemoryConflictError(category, key, other.id);
      let updated: MemoryFact | undefined;
      try {
        [updated] = (
          await client.query<MemoryFact>(
            `UPDATE memory_facts SET category = $1, key = $2, value = $3, updated_at = $4,
               embedding = NULL, embedding_model = NULL WHERE id = $5 RETURNING ${FACT_COLUMNS}`,
            [category, key, value, at, id],
          )
        ).rows;
      } catch (err) {
        // Another process took this (category, key) after the check above.
        if (pgErrorCode(err) === UNIQUE_VIOLATION) {
          const taken = await this.getByKey(category, key);
          throw new MemoryConflictError(category, key, taken?.id ?? -1);
        }
        throw err;
      }
      touch(id);
      await bumpFactsRevision(client);
      return updated;
    });
  }

  async delete(ref: FactRef): Promise<boolean> {
    return this.index.track(async (client, touch) => {
      const id =
        'id' in ref
          ? ref.id
          : (
              await byKey(
                client,
                normaliseName(ref.category, MAX_CATEGORY_LENGTH),
                normaliseName(ref.key, MAX_KEY_LENGTH),
              )
            )?.id;
      if (id === undefined || !Number.isSafeInteger(id)) return false;
      const { rowCount } = await client.query('DELETE FROM memory_facts WHERE id = $1', [id]);
      if (!rowCount) return false;
      touch(id);
      await bumpFactsRevision(client);
      return true;
    });
  }

  /**
   * Full-text hits: the facts holding every word first, best `ts_rank` first, then (when fewer
   * than `limit`) those holding some. `bm25` is the negated rank, so lower is better as on SQLite.
   * A query made only of English stop words ("the which") is empty under 'english', whose index
   * holds no stop word; SQLite has no stop words and finds them, so such a query is matched under
   * 'simple' against the facts' text, by a scan (no index holds those words).
   */
  async search(query: string, limit: number): Promise<FtsHit[]> {
    const terms = memoryQueryTerms(query);
    if (terms === null || !(limit > 0)) return [];
    const wanted = Math.floor(limit);
    let config: 'english' | 'simple' = 'english';
    const ranked = (q: string, n: number, skip: number[]) =>
      this.db.rows<MemoryFact & { rank: number }>(
        `SELECT ${FACT_COLUMNS}, ts_rank('${RANK_WEIGHTS}', ${FACT_VECTOR[config]}, q) AS rank
         FROM memory_facts, to_tsquery('${config}', navi_fts_unaccent($1)) AS q
         WHERE ${FACT_VECTOR[config]} @@ q AND NOT (id = ANY($3::bigint[]))
         ORDER BY rank DESC, id LIMIT $2`,
        [q, n, skip],
      );
    const all = tsqueryText(terms, 'all');
    let hits = await ranked(all, wanted, []);
    if (hits.length === 0 && (await onlyStopWords(this.db, all))) {
      config = 'simple';
      hits = await ranked(all, wanted, []);
    }
    if (hits.length < wanted && terms.length > 1) {
      const seen = hits.map((h) => h.id);
      hits.push(...(await ranked(tsqueryText(terms, 'any'), wanted - hits.length, seen)));
    }
    return hits.map(({ rank, ...fact }, i) => ({ fact, bm25: -rank, rank: i + 1 }));
  }

  async missingEmbeddings(model: string, limit: number): Promise<MemoryFact[]> {
    // Three ranges of the embedding_model index instead of a scan of every fact.
    return this.db.rows<MemoryFact>(
      `SELECT ${FACT_COLUMNS} FROM memory_facts WHERE id IN (
         SELECT id FROM memory_facts WHERE embedding_model IS NULL
         UNION ALL SELECT id FROM memory_facts WHERE embedding_model < $1
         UNION ALL SELECT id FROM memory_facts WHERE embedding_model > $1)
       ORDER BY id LIMIT $2`,
      [model, Math.max(0, Math.floor(limit))],
    );
  }

  async setEmbedding(id: number, model: string, vector: Float32Array): Promise<void> {
    await this.setEmbeddings([{ id, model, vector }]);
  }

  async setEmbeddings(entries: readonly VectorEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const pgvector = await this.extension?.available();
    await this.index.track(async (client, touch) => {
      for (const { id, model, vector, of } of entries) {
        if (!Number.isSafeInteger(id)) continue;
        const embedding = toBlob(vector);
        const { rowCount } = of
          ? await client.query(
              `UPDATE memory_facts SET embedding = $2, embedding_model = $3
               WHERE id = $1 AND category = $4 AND key = $5 AND value = $6`,
              [id, embedding, model, of.category, of.key, of.value],
            )
          : await client.query('UPDATE memory_facts SET embedding = $2, embedding_model = $3 WHERE id = $1', [
              id,
              embedding,
              model,
            ]);
        if (!rowCount) continue; // deleted, or its text edited, meanwhile
        if (vector.length > 0) {
          await this.index.storeCode(client, id, model, vector);
          if (pgvector) await this.extension?.store(client, id, model, vector);
        }
        touch(id);
      }
    });
  }

  async nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    if (!(limit > 0) || vector.length === 0 || !hasLength(vector)) return [];
    if (await this.extension?.available()) return this.extension!.nearest(vector, model, Math.floor(limit));
    return this.index.nearest(vector, model, Math.floor(limit));
  }

  /** Every vector of `model` ranked exactly: the reference `nearest`'s recall is measured against. */
  async nearestExact(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    if (!(limit > 0) || vector.length === 0 || !hasLength(vector)) return [];
    return this.index.exact(vector, model, Math.floor(limit));
  }

  async getSummary(): Promise<MemorySummary> {
    const row = await this.summaryRow();
    return { text: row.text, updated_at: row.updated_at, stale: row.facts_revision > row.summary_revision };
  }

  async setSummary(text: string, options: { basedOnRevision?: number } = {}): Promise<void> {
    // Two processes may summarise at once: the one that read the facts earlier must not replace
    // a summary written from later facts, whichever finishes last.
    await this.db.query(
      `UPDATE memory_summary SET text = $1, updated_at = $2,
         summary_revision = coalesce($3::bigint, facts_revision)
       WHERE id = 1 AND summary_revision <= coalesce($3::bigint, facts_revision)`,
      [text, this.now().toISOString(), options.basedOnRevision ?? null],
    );
  }

  async factsRevision(): Promise<number> {
    return (await this.summaryRow()).facts_revision;
  }

  async getSessionState(sessionId: string): Promise<SessionMemoryState | undefined> {
    const [row] = await this.db.rows<SessionMemoryState>(
      'SELECT * FROM session_memory_state WHERE session_id = $1',
      [sessionId],
    );
    return row;
  }

  async listSessionStates(): Promise<SessionMemoryState[]> {
    return this.db.rows<SessionMemoryState>('SELECT * FROM session_memory_state');
  }

  async setSessionState(state: SessionMemoryState): Promise<void> {
    await this.db.query(
      `INSERT INTO session_memory_state (session_id, extracted_at, status, attempts, last_error, attempted_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (session_id) DO UPDATE SET extracted_at = excluded.extracted_at, status = excluded.status,
         attempts = excluded.attempts, last_error = excluded.last_error, attempted_at = excluded.attempted_at`,
      [
        state.session_id,
        state.extracted_at,
        state.status,
        state.attempts,
        state.last_error,
        state.attempted_at,
      ],
    );
  }

  /**
   * Runs `mine` while this process alone mines `sessionId`: a session-level advisory lock on a
   * connection of its own, held for the whole extraction (LLM calls included) and released after,
   * or by the server when the process dies. Another process holding it: `mine` does not run and
   * the answer is `{ claimed: false }`.
   */
  async exclusively<T>(
    sessionId: string,
    mine: () => Promise<T>,
  ): Promise<{ claimed: true; value: T } | { claimed: false }> {
    const client = await this.db.pool.connect();
    let broken: Error | undefined;
    try {
      const key = [EXTRACTION_LOCK_CLASS, sessionId];
      const { rows } = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock($1, hashtext(current_schema() || '/' || $2)) AS ok",
        key,
      );
      if (!rows[0]?.ok) return { claimed: false };
      try {
        return { claimed: true, value: await mine() };
      } finally {
        await client
          .query("SELECT pg_advisory_unlock($1, hashtext(current_schema() || '/' || $2))", key)
          .catch((err: Error) => {
            // A connection that cannot unlock must not go back to the pool still holding the lock.
            broken = err;
          });
      }
    } finally {
      client.release(broken);
    }
  }

  private async summaryRow(): Promise<SummaryRow> {
    const [row] = await this.db.rows<SummaryRow>(
      'SELECT text, updated_at, facts_revision, summary_revision FROM memory_summary WHERE id = 1',
    );
    if (!row)
      throw new Error(
        'The memory_summary row is missing: the database was changed by hand; run the migrations again.',
      );
    return row;
  }
}

/** The pool or a transaction's connection: both run one statement. */
interface Queryable {
  query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }>;
}

async function byKey(db: Queryable, category: string, key: string): Promise<MemoryFact | undefined> {
  const { rows } = await db.query(
    `SELECT ${FACT_COLUMNS} FROM memory_facts WHERE category = $1 AND key = $2`,
    [category, key],
  );
  return rows[0] as MemoryFact | undefined;
}

/**
 * One fact written inside the caller's transaction, in one statement: inserted, or its value
 * replaced when it differs (the vector cleared: it described the old text). A fact another
 * process inserts meanwhile is waited for and then updated, never a unique-key error.
 */
async function upsertOne(
  client: PgClient,
  touch: Touch,
  category: string,
  key: string,
  value: string,
  source: string | null,
  at: string,
): Promise<{ fact: MemoryFact; created: boolean; changed: boolean }> {
  const { rows } = await client.query<MemoryFact & { created: boolean }>(
    `INSERT INTO memory_facts AS f (category, key, value, source_session_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (category, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
       source_session_id = coalesce(excluded.source_session_id, f.source_session_id),
       embedding = NULL, embedding_model = NULL
     WHERE f.value IS DISTINCT FROM excluded.value
     RETURNING ${FACT_COLUMNS}, (xmax = 0) AS created`,
    [category, key, value, source, at],
  );
  const written = rows[0];
  if (written) {
    const { created, ...fact } = written;
    if (!created) touch(fact.id);
    return { fact, created, changed: true };
  }
  // The same value already stored: nothing written.
  const existing = await byKey(client, category, key);
  if (!existing) throw new Error(`The fact ${category}/${key} vanished while it was saved; try again.`);
  return { fact: existing, created: false, changed: false };
}

/** Whether every word of `tsquery` is an English stop word, so 'english' finds nothing. */
async function onlyStopWords(db: PgDatabase, tsquery: string): Promise<boolean> {
  const [row] = await db.rows<{ empty: boolean }>(
    "SELECT numnode(to_tsquery('english', navi_fts_unaccent($1))) = 0 AS empty",
    [tsquery],
  );
  return row?.empty === true;
}

async function bumpFactsRevision(client: PgClient): Promise<void> {
  await client.query('UPDATE memory_summary SET facts_revision = facts_revision + 1 WHERE id = 1');
}
