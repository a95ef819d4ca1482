/**
 * Opens the embedded SQLite database: WAL (readers never wait for the writer, and a killed
 * process loses no committed transaction), foreign keys on, and every pending migration applied.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { migrate, SchemaTooNewError } from './migrate.js';
import { migrations as defaultMigrations, type Migration } from './migrations/index.js';

export type { Database } from 'better-sqlite3';

/** How long a statement waits for another connection's write lock before failing. */
const BUSY_TIMEOUT_MS = 5000;

const MEMORY = ':memory:';

/**
 * Opens (creating it and its folder if needed) and migrates the database at `file`.
 * `':memory:'` gives a private in-memory database (unit tests). Throws an Error naming the file
 * and what to do when it cannot be opened, is not a SQLite database, or is newer than this code.
 * `migrations` is for tests of the runner; callers use the default list.
 */
export function openDatabase(file: string, migrations: readonly Migration[] = defaultMigrations): Database {
  const path = file === MEMORY ? MEMORY : resolve(file);
  let db: Database | undefined;
  try {
    if (path !== MEMORY) mkdirSync(dirname(path), { recursive: true });
    db = new BetterSqlite3(path);
    // The first statement that reads the file header is where "file is not a database" shows.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (path !== MEMORY && mode !== 'wal') throw new Error(`journal_mode is ${String(mode)}, not wal`);
    // NORMAL is durable across process crashes in WAL mode; only a power cut can lose the last commits.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db, migrations);
    return db;
  } catch (err) {
    db?.close();
    if (err instanceof SchemaTooNewError) {
      throw new Error(`Cannot use the database ${path}: ${err.message}`, { cause: err });
    }
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `Cannot open the database ${path}: ${reason}. Check that the path is a writable file; if it is ` +
        'damaged, move it (and its -wal and -shm files) aside to start with an empty one or restore a ' +
        'backup, or set DB_PATH to another file.',
      { cause: err },
    );
  }
}

/**
 * Runs SQLite's full consistency check (for `navi doctor`): an empty array means healthy,
 * otherwise each entry describes one problem. Reads the whole file, so not for every start-up.
 */
export function checkIntegrity(db: Database): string[] {
  const rows = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).filter((line) => line !== 'ok');
}
