/**
 * Vector search through pgvector, when the server has the extension and lets Navi create it
 * (`CREATE EXTENSION IF NOT EXISTS vector`). The embeddings stay in `memory_facts.embedding`
 * (bytea, as on SQLite); a copy as `vector` lives in `memory_fact_vectors`, made here on first
 * use, filled from the stored embeddings, kept by the store on every write and dropped by a
 * trigger when a fact's embedding changes. Each dimension in use gets an HNSW index (cosine).
 *
 * Without the extension nothing here is created and the store uses the binary codes
 * (pg-vector-index.ts). Navi's tests run on a server without pgvector, so this path is kept
 * small and every step of its set-up falls back to the codes when it fails.
 */
import type { PgClient, PgDatabase } from '../store/postgres/index.js';
import type { VectorHit } from './types.js';
import { asFloats } from './vector-codes.js';

/**
 * What the database holds for pgvector, read without changing anything: `pgvector` when the
 * extension and `memory_fact_vectors` exist (a process set it up), `offered` when the server
 * offers or has the extension but no process set it up here yet, `absent` when it offers none.
 */
export type PgVectorState = 'pgvector' | 'offered' | 'absent';

const SETUP_LOCK_CLASS = 0x4e617656; // "NavV"
const BACKFILL_BATCH = 500;

const SETUP_SQL = `
  CREATE TABLE IF NOT EXISTS memory_fact_vectors (
    fact_id BIGINT PRIMARY KEY REFERENCES memory_facts(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vec vector NOT NULL
  );
  CREATE OR REPLACE FUNCTION memory_facts_drop_vector() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM memory_fact_vectors WHERE fact_id = OLD.id;
    RETURN NULL;
  END $$;
  DROP TRIGGER IF EXISTS memory_facts_vector_au ON memory_facts;
  CREATE TRIGGER memory_facts_vector_au AFTER UPDATE OF embedding, embedding_model ON memory_facts
    FOR EACH ROW WHEN (OLD.embedding IS DISTINCT FROM NEW.embedding
                       OR OLD.embedding_model IS DISTINCT FROM NEW.embedding_model)
    EXECUTE FUNCTION memory_facts_drop_vector();`;

/** `[0.1,0.2,…]`: pgvector's text form. */
function literal(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

export class PgVectorExtension {
  private ready: Promise<boolean> | undefined;
  private readonly indexed = new Set<number>();

  constructor(private readonly db: PgDatabase) {}

  /** Whether pgvector answers `nearest`; set up once, on the first call. */
  available(): Promise<boolean> {
    this.ready ??= this.setUp().catch(() => false);
    return this.ready;
  }

  /** Reads the catalogs only: for `navi doctor`, which must not change the database it checks. */
  async state(): Promise<PgVectorState> {
    const [row] = await this.db.rows<{ installed: boolean; set_up: boolean; offered: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed,
              to_regclass('memory_fact_vectors') IS NOT NULL AS set_up,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS offered`,
    );
    if (row?.installed && row.set_up) return 'pgvector';
    return row?.installed || row?.offered ? 'offered' : 'absent';
  }

  async store(client: PgClient, id: number, model: string, vector: Float32Array): Promise<void> {
    await client.query(
      `INSERT INTO memory_fact_vectors (fact_id, model, dimension, vec) VALUES ($1, $2, $3, $4::vector)
       ON CONFLICT (fact_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, vec = excluded.vec`,
      [id, model, vector.length, literal(vector)],
    );
  }

  async nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]> {
    const dim = vector.length; // an integer from the array's length, safe to write into the SQL
    await this.ensureIndex(dim);
    return this.db.transaction(async (client) => {
      // HNSW returns at most ef_search rows: enough for the largest pool a search asks for.
      await client.query(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, limit * 2))}`);
      const { rows } = await client.query<VectorHit>(
        `SELECT fact_id AS id, (vec::vector(${dim}) <=> $1::vector(${dim})) AS distance
         FROM memory_fact_vectors WHERE dimension = ${dim} AND model = $2
         ORDER BY vec::vector(${dim}) <=> $1::vector(${dim}) LIMIT $3`,
        [literal(vector), model, limit],
      );
      return rows.filter((r) => Number.isFinite(r.distance));
    });
  }

  private async setUp(): Promise<boolean> {
    const offered = await this.db.rows("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (offered.length === 0) return false;
    await this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [SETUP_LOCK_CLASS]);
      await client.query('CREATE EXTENSION IF NOT EXISTS vector');
      await client.query(SETUP_SQL);
    });
    // Embeddings stored before (another engine's copy, a server that lacked pgvector then).
    for (;;) {
      const { rows } = await this.db.query<{ id: number; model: string; embedding: Buffer }>(
        `SELECT f.id, f.embedding_model AS model, f.embedding FROM memory_facts f
         WHERE f.embedding_model IS NOT NULL AND length(f.embedding) > 0 AND length(f.embedding) % 4 = 0
           AND NOT EXISTS (SELECT 1 FROM memory_fact_vectors v WHERE v.fact_id = f.id)
         ORDER BY f.id LIMIT ${BACKFILL_BATCH}`,
      );
      if (rows.length === 0) return true;
      await this.db.transaction(async (client) => {
        for (const { id, model, embedding } of rows) {
          await this.store(client, id, model, asFloats(embedding));
        }
      });
    }
  }

  private async ensureIndex(dim: number): Promise<void> {
    if (this.indexed.has(dim)) return;
    // HNSW indexes at most 2 000 dimensions; beyond that the search scans, still exactly.
    if (dim <= 2000) {
      await this.db
        .query(
          `CREATE INDEX IF NOT EXISTS memory_fact_vectors_hnsw_${dim} ON memory_fact_vectors
           USING hnsw ((vec::vector(${dim})) vector_cosine_ops) WHERE dimension = ${dim}`,
        )
        .catch(() => undefined);
    }
    this.indexed.add(dim);
  }
}
