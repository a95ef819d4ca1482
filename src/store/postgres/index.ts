/** The PostgreSQL implementation of the stores, on one connection pool (`DATABASE_URL`). */
import { PgConsentStore } from './consent-store.js';
import { PgDatabase, type PgDatabaseOptions } from './database.js';
import { PgFileStore } from './file-store.js';
import { PgKvStore } from './kv-store.js';
import { PgRecallStore } from './recall-store.js';
import { PgSearchStore } from './search-store.js';
import { PgSessionStore } from './session-store.js';

export { hidePassword, type PgClient, PgDatabase, type PgQueryable } from './database.js';
export { migrate as migratePostgres, pgSchemaVersion } from './migrate.js';
export { migrations as postgresMigrations, type PgMigration } from './migrations/index.js';

export interface PostgresStores {
  /** The pool, for stores added by other layers (memory, the run cluster). */
  pg: PgDatabase;
  sessions: PgSessionStore;
  kv: PgKvStore;
  files: PgFileStore;
  consent: PgConsentStore;
  recalls: PgRecallStore;
  search: PgSearchStore;
  close(): Promise<void>;
}

/** Connects to `url`, migrates it, and builds the stores on the pool. */
export async function createPostgresStores(
  url: string,
  options: PgDatabaseOptions = {},
): Promise<PostgresStores> {
  const pg = await PgDatabase.open(url, options);
  return {
    pg,
    sessions: new PgSessionStore(pg),
    kv: new PgKvStore(pg),
    files: new PgFileStore(pg),
    consent: new PgConsentStore(pg),
    recalls: new PgRecallStore(pg),
    search: new PgSearchStore(pg),
    close: () => pg.close(),
  };
}
