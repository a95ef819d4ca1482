/**
 * Applies pending migrations, each in its own transaction together with its row in
 * `schema_migrations`, so a crash leaves the database at a whole version, never between two.
 */
import type { Database } from 'better-sqlite3';
import type { Migration } from './migrations/index.js';

/** The database was written by a newer Navi than this one; opening it could damage it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `The database has schema version ${databaseVersion}, but this version of Navi only knows up to ` +
        `${knownVersion}. Upgrade Navi, or set DB_PATH to another file.`,
    );
    this.name = 'SchemaTooNewError';
  }
}

export interface MigrationResult {
  /** Version before the run (0 for a new database). */
  from: number;
  /** Version after the run. */
  to: number;
  /** Versions applied by this run, in order. */
  applied: number[];
}

/** Throws when the list itself is wrong: a programming error, caught by the first test run. */
function checkOrder(list: readonly Migration[]): void {
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

/** Highest applied version, or 0. */
export function schemaVersion(db: Database): number {
  const row = db.prepare<[], { v: number | null }>('SELECT max(version) AS v FROM schema_migrations').get();
  return row?.v ?? 0;
}

/** Whether `db` has the table `name`: a file Navi may not have written (a backup) need not. */
export function hasTable(db: Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/**
 * Highest applied version of a database file Navi may not have written, read without changing
 * it; null when it has no migration recorded, so it is not a Navi database.
 */
export function recordedSchemaVersion(db: Database): number | null {
  return hasTable(db, 'schema_migrations') ? schemaVersion(db) || null : null;
}

/**
 * Brings `db` up to the last migration of `list`. Idempotent: a second call applies nothing.
 * Throws {@link SchemaTooNewError} when the database already has a version `list` does not know.
 */
export function migrate(db: Database, list: readonly Migration[]): MigrationResult {
  checkOrder(list);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const known = list.at(-1)?.version ?? 0;
  const from = schemaVersion(db);
  if (from > known) throw new SchemaTooNewError(from, known);

  const isApplied = db.prepare<[number], { version: number }>(
    'SELECT version FROM schema_migrations WHERE version = ?',
  );
  const record = db.prepare<[number, string, string]>(
    'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
  );
  const applied: number[] = [];
  for (const m of list) {
    if (m.version <= from) continue;
    const step = db.transaction(() => {
      // Another process may have migrated between our read and this write lock.
      if (isApplied.get(m.version)) return;
      m.up(db);
      record.run(m.version, m.name, new Date().toISOString());
      applied.push(m.version);
    });
    // IMMEDIATE takes the write lock first, so two processes never run the same step twice.
    step.immediate();
  }
  return { from, to: schemaVersion(db), applied };
}
