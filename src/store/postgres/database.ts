/**
 * The connection pool to PostgreSQL (`DATABASE_URL=postgres://…`): opened, checked and migrated
 * once at start-up, then shared by every store. Queries go through `query` (one statement on any
 * pooled connection) or `transaction` (several statements on one connection, committed together
 * or not at all).
 */
import pg from 'pg';
import { migrate, SchemaTooNewError } from './migrate.js';
import { migrations as defaultMigrations, type PgMigration } from './migrations/index.js';

export type PgClient = pg.PoolClient;
export type PgQueryable = Pick<pg.PoolClient, 'query'>;

export interface PgDatabaseOptions {
  /** Connections in the pool; each store call holds one only while its statements run. */
  max?: number;
  /** The numbered migrations (tests of the runner pass their own). */
  migrations?: readonly PgMigration[];
  /** Gives up connecting after this long. */
  connectTimeoutMs?: number;
}

const DEFAULT_POOL_SIZE = 10;
const CONNECT_TIMEOUT_MS = 10_000;

/** BIGINT (int8) counts as numbers: every count Navi keeps fits in 2^53. Shared by every pool Navi opens. */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export class PgDatabase {
  private closed = false;

  private constructor(
    readonly pool: pg.Pool,
    /** The URL with its password hidden, for messages and `navi doctor`. */
    readonly displayUrl: string,
  ) {}

  /**
   * Connects to `url`, checks the server answers, and applies pending migrations (under an
   * advisory lock, so processes starting together migrate once). Throws an Error that says what
   * to check when the server cannot be reached or its schema is newer than this Navi.
   */
  static async open(url: string, options: PgDatabaseOptions = {}): Promise<PgDatabase> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? DEFAULT_POOL_SIZE,
      connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      types: pgTypes,
    });
    // An idle connection the server drops (restart, network) must not crash the process; the
    // pool replaces it on the next query.
    pool.on('error', () => undefined);
    const db = new PgDatabase(pool, hidePassword(url));
    try {
      await db.query('SELECT 1');
      await migrate(db, options.migrations ?? defaultMigrations);
      return db;
    } catch (err) {
      await db.close();
      if (err instanceof SchemaTooNewError) {
        throw new Error(`Cannot use the database ${db.displayUrl}: ${err.message}`, { cause: err });
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(
        `Cannot open the PostgreSQL database ${db.displayUrl}: ${reason}. Check that the server runs and ` +
          'accepts this user and password, and that the database exists (createdb), or unset DATABASE_URL ' +
          'to use the SQLite file.',
        { cause: err },
      );
    }
  }

  /** Runs one statement on any pooled connection. */
  async query<R extends pg.QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(sql, params as unknown[]);
  }

  /** The rows of one statement. */
  async rows<R extends pg.QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<R[]> {
    return (await this.query<R>(sql, params)).rows;
  }

  /**
   * Runs `fn` in a transaction on one connection: committed when it resolves, rolled back when
   * it throws (the error is rethrown).
   */
  async transaction<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      // The stores count on READ COMMITTED (each statement of a transaction sees what was
      // committed before it: the last seq after the session lock, the migration level after the
      // advisory lock), whatever default an administrator gave the server or the role.
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** The server's version, as `SHOW server_version` prints it (15.18 …). */
  async serverVersion(): Promise<string> {
    const [row] = await this.rows<{ server_version: string }>('SHOW server_version');
    return row?.server_version ?? 'unknown';
  }

  /** Closes every connection; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

/** `url` with its password replaced by `***`. */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the DATABASE_URL (not a valid URL)';
  }
}
