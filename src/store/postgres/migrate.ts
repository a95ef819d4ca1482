/**
 * Applies pending PostgreSQL migrations in one transaction that holds an advisory lock: two
 * processes starting on the same empty database take turns, and the second finds nothing left
 * to do. A failed migration rolls back whole, leaving the schema at the version it had.
 */
import type { PgDatabase } from './database.js';
import type { PgMigration } from './migrations/index.js';

/** The database was migrated by a newer Navi than this one; using it could damage it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `the database has schema version ${databaseVersion}, but this version of Navi only knows up to ` +
        `${knownVersion}. Upgrade Navi, or point DATABASE_URL at another database.`,
    );
    this.name = 'SchemaTooNewError';
  }
}

export interface PgMigrationResult {
  from: number;
  to: number;
  applied: number[];
}

/** Key of the advisory lock migrations hold; the second half is the schema's, so schemas migrate independently. */
const MIGRATION_LOCK_CLASS = 0x4e617669; // "Navi"

function checkOrder(list: readonly PgMigration[]): void {
  let previous = 0;
  for (const m of list) {
    if (!Number.isInteger(m.version) || m.version <= previous) {
      throw new Error(
        `Migration "${m.name}" has version ${m.version}; versions must be integers increasing from 1`,
      );
    }
    previous = m.version;
  }
}

/** Highest applied version, or 0 when the database has no Navi schema yet. */
export async function pgSchemaVersion(db: Pick<PgDatabase, 'rows'>): Promise<number> {
  const [exists] = await db.rows<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!exists?.t) return 0;
  const [row] = await db.rows<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return row?.v ?? 0;
}

/**
 * Brings the database up to the last migration of `list`. Idempotent. A schema that is already
 * current is only read (no lock, no DDL), so a role with data rights alone (USAGE on the schema,
 * SELECT/INSERT/UPDATE/DELETE on its tables) can start Navi once an administrator migrated it.
 */
export async function migrate(db: PgDatabase, list: readonly PgMigration[]): Promise<PgMigrationResult> {
  checkOrder(list);
  const known = list.at(-1)?.version ?? 0;
  const current = await pgSchemaVersion(db);
  if (current > known) throw new SchemaTooNewError(current, known);
  if (current === known) return { from: current, to: current, applied: [] };
  return db.transaction(async (client) => {
    // Waits for a process migrating right now; released at COMMIT or ROLLBACK.
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [
      MIGRATION_LOCK_CLASS,
    ]);
    // Migrations are pending, so this role needs CREATE on the schema anyway. (A check with
    // to_regclass here could read a catalog cache from before the lock and miss a table another
    // process has just created.)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`);
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM schema_migrations',
    );
    const from = rows[0]?.v ?? 0;
    if (from > known) throw new SchemaTooNewError(from, known);
    const applied: number[] = [];
    for (const m of list) {
      if (m.version <= from) continue;
      await m.up(client);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        new Date().toISOString(),
      ]);
      applied.push(m.version);
    }
    return { from, to: applied.at(-1) ?? from, applied };
  });
}
