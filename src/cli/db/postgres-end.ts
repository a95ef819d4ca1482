/** A PostgreSQL database (the schema its URL selects) as an end of `navi db copy`. */
import pg from 'pg';
import { asFloats, binaryCode } from '../../memory/vector-codes.js';
import { hidePassword, PgDatabase, pgTypes } from '../../store/postgres/database.js';
import { pgSchemaVersion } from '../../store/postgres/migrate.js';
import { pgJson, pgNullableText, storableKey } from '../../store/postgres/pg-values.js';
import { CliRefusal } from '../cli-io.js';
import { type CellValue, type CopyEnd, fromPostgres, keyList, kindOf, quote, type Row } from './endpoint.js';
import { COPIED_TABLES, type ColumnKind, type TableSpec } from './tables.js';

const CONNECT_TIMEOUT_MS = 10_000;
/** Facts given their vector codes per statement. */
const CODE_BATCH = 2000;

const cast: Record<ColumnKind, string> = {
  text: 'text',
  int: 'bigint',
  bool: 'boolean',
  json: 'jsonb',
  blob: 'bytea',
};

function unreachable(url: string, err: unknown): CliRefusal {
  return new CliRefusal(
    `cannot connect to ${hidePassword(url)}: ${(err as Error).message}. Check that the server runs and accepts this user and password, and that the database exists (createdb)`,
  );
}

/** A pool of its own, without migrating: the copy reads a source as it is. */
async function connect(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    types: pgTypes,
  });
  pool.on('error', () => undefined);
  try {
    await pool.query('SELECT 1');
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw unreachable(url, err);
  }
}

async function schemaTables(pool: Pick<pg.Pool, 'query'>): Promise<string[]> {
  const { rows } = await pool.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((r) => r.t);
}

/**
 * Opens the Navi database at `url` to read; refuses one that holds no Navi schema. Everything is
 * read on one connection inside one REPEATABLE READ, READ ONLY transaction: a copy of a database
 * that a Navi goes on writing to is still one moment of it (no message without its session, no
 * table from later than another), and nothing the copy does can change the source.
 */
export async function openPostgresSource(url: string): Promise<{ end: CopyEnd; version: number }> {
  const pool = await connect(url);
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const on = client;
    const version = await pgSchemaVersion({ rows: async (sql) => (await on.query(sql)).rows });
    if (version === 0)
      throw new CliRefusal(
        `${hidePassword(url)} holds no Navi database (no schema versions in its schema); name the DATABASE_URL Navi runs on`,
      );
    const others = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const n = others.rows[0]?.n ?? 0;
    const warning =
      n > 0
        ? `${n} other connection${n === 1 ? ' is' : 's are'} open to ${hidePassword(url)}: if a Navi is among them, what it writes after the copy starts is not in the copy; stop it first to copy everything`
        : undefined;
    const end = new PostgresEnd(on, hidePassword(url), warning, async () => {
      await on.query('ROLLBACK').catch(() => undefined);
      on.release();
      await pool.end();
    });
    return { end, version };
  } catch (err) {
    client?.release();
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Opens (migrating) the database at `url` to copy into. Refuses a schema that holds tables but
 * no Navi schema (migrating would add Navi's tables to someone else's) and one a newer Navi wrote.
 */
export async function openPostgresTarget(url: string): Promise<CopyEnd> {
  const probe = await connect(url);
  try {
    const tables = await schemaTables(probe);
    if (tables.length > 0 && !tables.includes('schema_migrations'))
      throw new CliRefusal(
        `${hidePassword(url)} holds tables (${tables.slice(0, 3).join(', ')}…) but no Navi database; name an empty database or schema, or a Navi one`,
      );
  } finally {
    await probe.end().catch(() => undefined);
  }
  try {
    const db = await PgDatabase.open(url, { max: 2 });
    return new PostgresEnd(db.pool, db.displayUrl, undefined, () => db.close());
  } catch (err) {
    throw new CliRefusal((err as Error).message.replace(/\.$/, ''));
  }
}

/**
 * A key or id with a NUL cannot be written as it is, and rewriting it (as other text is) would
 * make it another key: a second run would take the row for the target's own, and two keys that
 * differ only there would become one. Such a row is refused, named, before anything of its batch.
 */
function refuseNulIds(t: TableSpec, rows: readonly Row[], label: string): void {
  const checked = [...t.key, ...(t.ids ?? [])]
    .map((name) => ({ name, at: t.columns.findIndex((c) => c.name === name) }))
    .filter((c) => c.at >= 0);
  for (const row of rows) {
    const bad = checked.find((c) => {
      const v = row[c.at];
      return typeof v === 'string' && !storableKey(v);
    });
    if (!bad) continue;
    // Merging renumbers identity ids, so a fact is named by its other ids then.
    const keyed = checked.filter((c) => t.key.includes(c.name));
    const key = (keyed.length > 0 ? keyed : checked)
      .map((c) => `${c.name} ${JSON.stringify(row[c.at])}`)
      .join(', ');
    throw new CliRefusal(
      `the ${t.name} row (${key}) has a NUL character in ${bad.name}, which ${label} cannot store, and changing it would make it another ${bad.name}. ` +
        'Rename or delete that row in the source (for example with the sqlite3 shell, Navi stopped)',
    );
  }
}

class PostgresEnd implements CopyEnd {
  readonly engine = 'postgres';

  constructor(
    /** The target's pool, or the one connection a source is read on (inside its snapshot). */
    private readonly pool: Pick<pg.Pool, 'query'>,
    readonly label: string,
    readonly warning: string | undefined,
    private readonly closer: () => Promise<void>,
  ) {}

  async tables(): Promise<string[]> {
    return schemaTables(this.pool);
  }

  async columns(table: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ c: string }>(
      `SELECT column_name AS c FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
       ORDER BY ordinal_position`,
      [table],
    );
    return rows.map((r) => r.c);
  }

  async count(table: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${quote(table)}`);
    return rows[0]?.n ?? 0;
  }

  async read(t: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]> {
    return this.page(
      t,
      t.columns.map((c) => c.name),
      after,
      limit,
    );
  }

  async readKeys(t: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]> {
    return this.page(t, [...t.key], after, limit);
  }

  private async page(
    t: TableSpec,
    names: string[],
    after: CellValue[] | undefined,
    limit: number,
  ): Promise<Row[]> {
    const kinds = names.map((n) => kindOf(t, n));
    // JSON leaves as text, the form SQLite keeps it in.
    const select = names.map((n, i) => (kinds[i] === 'json' ? `${quote(n)}::text AS ${quote(n)}` : quote(n)));
    const params: unknown[] = after ? [...after] : [];
    const where = after
      ? `WHERE (${keyList(t)}) > (${t.key.map((k, i) => `$${i + 1}::${cast[kindOf(t, k)]}`).join(', ')})`
      : '';
    params.push(limit);
    const { rows } = await this.pool.query({
      text: `SELECT ${select.join(', ')} FROM ${quote(t.name)} ${where} ORDER BY ${keyList(t)} LIMIT $${params.length}`,
      values: params,
      rowMode: 'array',
    });
    return (rows as unknown[][]).map((r) => r.map((v, i) => fromPostgres(kinds[i]!, v)));
  }

  async countKeys(t: TableSpec, keys: readonly Row[]): Promise<number> {
    if (keys.length === 0) return 0;
    const width = t.key.length;
    const tuples = keys.map(
      (_, r) => `(${t.key.map((k, i) => `$${r * width + i + 1}::${cast[kindOf(t, k)]}`).join(', ')})`,
    );
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*) AS n FROM ${quote(t.name)} WHERE (${keyList(t)}) IN (VALUES ${tuples.join(', ')})`,
      keys.flat(),
    );
    return rows[0]?.n ?? 0;
  }

  async insert(t: TableSpec, rows: readonly Row[]): Promise<number> {
    if (rows.length === 0) return 0;
    const names = t.columns.map((c) => quote(c.name));
    const width = names.length;
    const tuples = rows.map(
      (_, r) => `(${t.columns.map((c, i) => `$${r * width + i + 1}::${cast[c.kind]}`).join(', ')})`,
    );
    const conflict = t.singletonDefault
      ? `ON CONFLICT (${keyList(t)}) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')} WHERE ${t.singletonDefault}`
      : 'ON CONFLICT DO NOTHING';
    refuseNulIds(t, rows, this.label);
    // A NUL in text or JSON becomes U+FFFD, as the stores write it: PostgreSQL cannot hold one.
    const values = rows.flatMap((row) =>
      row.map((value, i) => {
        if (typeof value !== 'string') return value;
        const kind = t.columns[i]?.kind;
        return kind === 'text' ? pgNullableText(value) : kind === 'json' ? pgJson(value) : value;
      }),
    );
    // One statement: all of the batch or none of it.
    const result = await this.pool.query(
      `INSERT INTO ${quote(t.name)} (${names.join(', ')}) VALUES ${tuples.join(', ')} ${conflict}`,
      values,
    );
    return result.rowCount ?? 0;
  }

  async prepare(): Promise<void> {
    await this.moveSequences();
  }

  /** Moves each identity sequence past the highest id of its table (never back). */
  private async moveSequences(): Promise<void> {
    for (const t of COPIED_TABLES) {
      if (!t.identity) continue;
      await this.pool.query(
        `SELECT setval(seq, m) FROM (
           SELECT pg_get_serial_sequence($1, $2)::regclass AS seq, max(${quote(t.identity)}) AS m FROM ${quote(t.name)}
         ) s
         WHERE m IS NOT NULL AND m > coalesce(pg_sequence_last_value(seq), 0)`,
        [t.name, t.identity],
      );
    }
  }

  /**
   * Identity columns would hand out copied ids again: their sequences move past the highest.
   * The full-text columns and the search index follow the copied rows by themselves (generated
   * columns, triggers); the vector codes memory search reads first are written by the memory
   * store, so the copy writes those of the copied facts, the same codes the store would.
   */
  async finish(): Promise<void> {
    for (;;) {
      const { rows } = await this.pool.query<{ id: number; model: string; embedding: Buffer }>(
        `SELECT id, embedding_model AS model, embedding FROM memory_facts f
         WHERE embedding IS NOT NULL AND embedding_model IS NOT NULL
           AND length(embedding) > 0 AND length(embedding) % 4 = 0
           AND NOT EXISTS (SELECT 1 FROM memory_fact_codes c WHERE c.fact_id = f.id)
         ORDER BY id LIMIT $1`,
        [CODE_BATCH],
      );
      if (rows.length === 0) break;
      const values = rows.map(
        (_, i) => `($${i * 4 + 1}::bigint, $${i * 4 + 2}, $${i * 4 + 3}::int, $${i * 4 + 4}::bytea)`,
      );
      await this.pool.query(
        `INSERT INTO memory_fact_codes (fact_id, model, dimension, code) VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`,
        rows.flatMap((r) => {
          const vector = asFloats(r.embedding);
          return [r.id, r.model, vector.length, binaryCode(vector)];
        }),
      );
    }
    await this.moveSequences();
    // Until the planner has statistics, it reads a whole session for each page of it (tens of
    // milliseconds at 20 000 messages instead of under one); autovacuum would take a while.
    await this.pool.query(`ANALYZE ${COPIED_TABLES.map((t) => quote(t.name)).join(', ')}`);
  }

  async close(): Promise<void> {
    await this.closer();
  }
}
