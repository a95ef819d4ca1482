/**
 * Nearest facts by cosine distance on PostgreSQL without pgvector: the SQLite path's method
 * (vector-index.ts) over a pool. The binary codes of `memory_fact_codes` are held in memory per
 * (model, dimension); the closest by Hamming distance are the candidates, and only their float
 * vectors travel from the server to be ranked exactly. Up to EXACT_UP_TO vectors every one is a
 * candidate, so a small memory gets the exact answer.
 *
 * Several processes write the same table. The codes in memory are labelled with the
 * `memory_codes_revision` they were read at (one statement reads both, so they agree) and each
 * search compares that label with the stored revision first. Writes go through `track`, which
 * locks the revision row before writing: between its first read and COMMIT no other writer can
 * move it, so when the codes in memory were current before, patching the facts it touched keeps
 * them current; any other change makes the next search read the codes again.
 */
import type { PgClient, PgDatabase } from '../store/postgres/index.js';
import { rankByCosine } from './exact-nearest.js';
import type { VectorHit } from './types.js';
import { binaryCode, CodeSet, codeWords } from './vector-codes.js';
import { EXACT_UP_TO, MIN_CANDIDATES, RERANK_FACTOR } from './vector-index.js';

interface CodeRow {
  fact_id: number;
  model: string;
  dimension: number;
  code: Buffer;
}

interface Cache {
  revision: number;
  sets: Map<string, CodeSet>;
}

/** A write's view of the codes: name each fact whose vector it may have changed. */
export type Touch = (id: number) => void;

export class PgVectorIndex {
  private cache: Cache = { revision: -1, sets: new Map() };
  /** Moves on every patch, so a load that started before one is not cached as current. */
  private generation = 0;

  constructor(private readonly db: PgDatabase) {}

  /**
   * Runs `write` in a transaction that first locks the codes' revision row. After COMMIT, when
   * the codes in memory were current before, the touched facts' codes (read inside the
   * transaction) are patched in; otherwise, or when it fails, nothing in memory is trusted.
   */
  async track<T>(write: (client: PgClient, touch: Touch) => Promise<T>): Promise<T> {
    try {
      const { result, before, after, rows, touched } = await this.db.transaction(async (client) => {
        const before = await revisionOf(client, 'FOR UPDATE');
        const touched = new Set<number>();
        const result = await write(client, (id) => touched.add(id));
        const after = await revisionOf(client, '');
        const rows =
          after !== before && touched.size > 0
            ? (
                await client.query<CodeRow>(
                  'SELECT fact_id, model, dimension, code FROM memory_fact_codes WHERE fact_id = ANY($1::bigint[])',
                  [[...touched]],
                )
              ).rows
            : [];
        return { result, before, after, rows, touched };
      });
      if (after !== before) this.patch(before, after, touched, rows);
      return result;
    } catch (err) {
      this.forget();
      throw err;
    }
  }

  /** Writes the code of a vector just stored for `id`; call inside `track`. */
  async storeCode(client: PgClient, id: number, model: string, vector: Float32Array): Promise<void> {
    await client.query(
      `INSERT INTO memory_fact_codes (fact_id, model, dimension, code) VALUES ($1, $2, $3, $4)
       ON CONFLICT (fact_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, code = excluded.code`,
      [id, model, vector.length, binaryCode(vector)],
    );
  }

  /** The `limit` facts nearest to `vector` among those embedded with `model`, nearest first. */
  async nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    const set = await this.set(model, vector.length);
    if (set.count === 0) return [];
    const wanted = Math.max(limit * RERANK_FACTOR, MIN_CANDIDATES);
    const ids =
      set.count <= Math.max(wanted, EXACT_UP_TO)
        ? set.all()
        : set.closest(codeWords(binaryCode(vector)), wanted);
    return rankByCosine(vector, await this.vectors(ids, model, vector.length)).slice(0, limit);
  }

  /** Every float vector of `model` ranked exactly: the reference `nearest`'s recall is measured against. */
  async exact(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    const { rows } = await this.db.query<{ id: number; embedding: Buffer }>(
      'SELECT id, embedding FROM memory_facts WHERE embedding_model = $1 AND length(embedding) = $2',
      [model, vector.length * 4],
    );
    return rankByCosine(
      vector,
      rows.map((r): [number, Buffer] => [r.id, r.embedding]),
    ).slice(0, limit);
  }

  private async vectors(ids: number[], model: string, dimension: number): Promise<[number, Buffer][]> {
    // The model and length checked again: a vector replaced since the codes were read is left out.
    const { rows } = await this.db.query<{ id: number; embedding: Buffer }>(
      `SELECT id, embedding FROM memory_facts
       WHERE id = ANY($1::bigint[]) AND embedding_model = $2 AND length(embedding) = $3`,
      [ids, model, dimension * 4],
    );
    return rows.map((r) => [r.id, r.embedding]);
  }

  private async set(model: string, dimension: number): Promise<CodeSet> {
    const key = `${dimension}:${model}`;
    const [row] = await this.db.rows<{ revision: number }>(
      'SELECT revision FROM memory_codes_revision WHERE id = 1',
    );
    const stored = row?.revision ?? 0;
    if (stored === this.cache.revision) {
      const set = this.cache.sets.get(key);
      if (set) return set;
    }
    const generation = this.generation;
    const { revision, set } = await this.load(model, dimension);
    if (generation === this.generation) {
      if (revision !== this.cache.revision) this.cache = { revision, sets: new Map() };
      this.cache.sets.set(key, set);
    }
    return set;
  }

  /** The codes of one (model, dimension) and the revision they are at, read in one snapshot. */
  private async load(model: string, dimension: number): Promise<{ revision: number; set: CodeSet }> {
    const { rows } = await this.db.query<{ revision: number; fact_id: number | null; code: Buffer | null }>(
      `SELECT r.revision, c.fact_id, c.code FROM memory_codes_revision r
       LEFT JOIN memory_fact_codes c ON c.model = $1 AND c.dimension = $2
       WHERE r.id = 1`,
      [model, dimension],
    );
    const set = new CodeSet(dimension, rows.length);
    for (const { fact_id, code } of rows) if (fact_id !== null && code) set.put(fact_id, codeWords(code));
    return { revision: rows[0]?.revision ?? 0, set };
  }

  private patch(before: number, after: number, touched: Set<number>, rows: CodeRow[]): void {
    this.generation++;
    if (this.cache.revision !== before) {
      this.cache = { revision: -1, sets: new Map() };
      return;
    }
    for (const id of touched) for (const set of this.cache.sets.values()) set.remove(id);
    for (const { fact_id, model, dimension, code } of rows)
      this.cache.sets.get(`${dimension}:${model}`)?.put(fact_id, codeWords(code));
    this.cache.revision = after;
  }

  private forget(): void {
    this.generation++;
    this.cache = { revision: -1, sets: new Map() };
  }
}

async function revisionOf(client: PgClient, lock: 'FOR UPDATE' | ''): Promise<number> {
  const { rows } = await client.query<{ revision: number }>(
    `SELECT revision FROM memory_codes_revision WHERE id = 1 ${lock}`,
  );
  return rows[0]?.revision ?? 0;
}
