/** The SQLite implementation of the stores (docs/architecture.md#storage), opened from one file. */
import type { Database } from 'better-sqlite3';
import { SqliteConsentStore } from './consent-store.js';
import { openDatabase } from './database.js';
import { SqliteFileStore } from './file-store.js';
import { SqliteKvStore } from './kv-store.js';
import { SqliteRecallStore } from './recall-store.js';
import { SqliteSearchStore } from './search-store.js';
import { SqliteSessionStore } from './session-store.js';

export { normalisePairingCode, SqliteConsentStore } from './consent-store.js';
export { checkIntegrity, openDatabase } from './database.js';
export { SqliteFileStore } from './file-store.js';
export { SqliteKvStore } from './kv-store.js';
export { type MigrationResult, migrate, SchemaTooNewError, schemaVersion } from './migrate.js';
export { type Migration, migrations } from './migrations/index.js';
export { SqliteRecallStore } from './recall-store.js';
export { SqliteSearchStore } from './search-store.js';
export { SqliteSessionStore } from './session-store.js';

export interface SqliteStores {
  /** The open connection, for stores added by other layers (memory, recalls). */
  db: Database;
  sessions: SqliteSessionStore;
  kv: SqliteKvStore;
  files: SqliteFileStore;
  consent: SqliteConsentStore;
  recalls: SqliteRecallStore;
  search: SqliteSearchStore;
  /** Closes the connection; safe to call twice. */
  close(): void;
}

/** Opens (creating and migrating) the database at `file` and builds the stores on it. */
export function createSqliteStores(file: string): SqliteStores {
  const db = openDatabase(file);
  return {
    db,
    sessions: new SqliteSessionStore(db),
    kv: new SqliteKvStore(db),
    files: new SqliteFileStore(db),
    consent: new SqliteConsentStore(db),
    recalls: new SqliteRecallStore(db),
    search: new SqliteSearchStore(db),
    close() {
      if (db.open) db.close();
    },
  };
}
