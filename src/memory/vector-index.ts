/**
 * Approximate nearest-neighbour search over the facts' vectors (docs/memory.md#vector-search):
 * the binary codes of `memory_fact_codes` (migration 008), held in memory per (model,
 * dimension), pick the max(RERANK_FACTOR × limit, MIN_CANDIDATES) candidates nearest by Hamming
 * distance; only their float vectors are read and ranked by exact cosine distance (inside SQLite
 * with sqlite-vec, else in JavaScript). Up to EXACT_UP_TO vectors all are ranked, so a small
 * memory gets the exact result; the `memory` bench measures the recall of a large one.
 *
 * The codes in memory follow the table through `memory_codes_revision`, which triggers bump on
 * every change: writes made through `track` patch the affected facts in place, and any other
 * change (another connection, another store on this one) makes the next search reload them.
 */
import type { Database, Statement } from 'better-sqlite3';
import { exactNearest, rankByCosine, type VectorEngine } from './exact-nearest.js';
import type { VectorHit } from './types.js';
import { binaryCode, CodeSet, codeWords, toBlob } from './vector-codes.js';

/** Candidates read as floats per result asked for. */
export const RERANK_FACTOR = 10;
/** Fewest candidates, so small limits still reach a good recall. */
export const MIN_CANDIDATES = 200;
/**
 * Up to this many vectors every one is ranked exactly (a few milliseconds): in a small memory
 * the nearest facts are often hardly nearer than the rest, where sign bits tell them apart worst.
 */
export const EXACT_UP_TO = 2000;

interface RerankParams {
  ids: string;
  model: string;
  bytes: number;
  limit: number;
}

export class VectorIndex {
  private revision = -1;
  private readonly sets = new Map<string, CodeSet>();
  private readonly readRevision: Statement<[], number>;
  private readonly codeOf: Statement<[number], { model: string; dimension: number; code: Buffer }>;
  private readonly writeCode: Statement<[number, string, number, Buffer]>;
  private readonly rerankInSql: Statement<RerankParams & { query: Buffer }, VectorHit> | undefined;
  private readonly candidateRows: Statement<RerankParams, [number, Buffer]>;

  constructor(
    private readonly db: Database,
    /** Who computes the exact distances of the candidates: sqlite-vec in SQLite, or JavaScript. */
    private readonly engine: VectorEngine,
  ) {
    this.readRevision = db
      .prepare<[], number>('SELECT revision FROM memory_codes_revision WHERE id = 1')
      .pluck();
    this.codeOf = db.prepare('SELECT model, dimension, code FROM memory_fact_codes WHERE fact_id = ?');
    this.writeCode = db.prepare(
      `INSERT INTO memory_fact_codes (fact_id, model, dimension, code) VALUES (?, ?, ?, ?)
       ON CONFLICT (fact_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, code = excluded.code`,
    );
    const candidates =
      'id IN (SELECT value FROM json_each(@ids)) AND embedding_model = @model AND length(embedding) = @bytes';
    // Only a connection with sqlite-vec loaded knows vec_distance_cosine.
    this.rerankInSql =
      engine === 'sqlite-vec'
        ? db.prepare(
            `SELECT id, distance FROM (
               SELECT id, vec_distance_cosine(embedding, @query) AS distance FROM memory_facts WHERE ${candidates})
             WHERE distance IS NOT NULL ORDER BY distance, id LIMIT @limit`,
          )
        : undefined;
    this.candidateRows = db
      .prepare<RerankParams, [number, Buffer]>(`SELECT id, embedding FROM memory_facts WHERE ${candidates}`)
      .raw();
  }

  /** Writes the code of a vector just stored for `id`; call inside `track`. */
  storeCode(id: number, model: string, vector: Float32Array): void {
    this.writeCode.run(id, model, vector.length, binaryCode(vector));
  }

  /**
   * Runs `write` in a transaction; `touch` names each fact whose code it may have changed. When
   * the codes in memory were current before, only those facts are re-read afterwards. When the
   * transaction does not commit (an error, a COMMIT refused for a full disk) or is nested in an
   * outer one that may still roll back, the codes in memory are forgotten instead: patched and
   * labelled with a revision the database went back from, they would pass for current as soon as
   * later writes brought the counter to the same number.
   */
  track<T>(write: (touch: (id: number) => void) => T): T {
    const nested = this.db.inTransaction;
    try {
      const result = this.db.transaction(() => {
        const before = this.readRevision.get()!;
        const touched = new Set<number>();
        const result = write((id) => touched.add(id));
        const after = this.readRevision.get()!;
        if (after !== before && this.revision === before && !nested) {
          for (const id of touched) this.refresh(id);
          this.revision = after;
        }
        return result;
      })();
      if (nested) this.revision = -1;
      return result;
    } catch (err) {
      this.revision = -1;
      throw err;
    }
  }

  /** The `limit` facts nearest to `vector` among those embedded with `model`, nearest first. */
  nearest(vector: Float32Array, model: string, limit: number): VectorHit[] {
    const set = this.set(model, vector.length);
    const wanted = Math.max(limit * RERANK_FACTOR, MIN_CANDIDATES);
    if (set.count === 0) return [];
    // The brute force reads the model's rows through its index: faster than a list of ids this size.
    if (set.count <= Math.max(wanted, EXACT_UP_TO))
      return exactNearest(this.db, this.engine, vector, model, limit);
    const ids = set.closest(codeWords(binaryCode(vector)), wanted);
    const params = { ids: JSON.stringify(ids), model, bytes: vector.length * 4, limit };
    if (this.rerankInSql) {
      return this.rerankInSql.all({ ...params, query: toBlob(vector) });
    }
    const rows = this.candidateRows.all(params);
    return rankByCosine(vector, rows).slice(0, limit);
  }

  private set(model: string, dimension: number): CodeSet {
    const revision = this.readRevision.get()!;
    if (revision !== this.revision) {
      this.sets.clear();
      this.revision = revision;
    }
    const key = setKey(model, dimension);
    let set = this.sets.get(key);
    if (!set) {
      const rows = this.db
        .prepare<[string, number], [number, Buffer]>(
          'SELECT fact_id, code FROM memory_fact_codes WHERE model = ? AND dimension = ?',
        )
        .raw()
        .all(model, dimension);
      set = new CodeSet(dimension, rows.length);
      for (const [id, code] of rows) set.put(id, codeWords(code));
      this.sets.set(key, set);
    }
    return set;
  }

  private refresh(id: number): void {
    for (const set of this.sets.values()) set.remove(id);
    const row = this.codeOf.get(id);
    if (row) this.sets.get(setKey(row.model, row.dimension))?.put(id, codeWords(row.code));
  }
}

function setKey(model: string, dimension: number): string {
  return `${dimension}:${model}`;
}
