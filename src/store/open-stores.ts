/**
 * Opens the stores Navi runs on: the SQLite file `DB_PATH` by default, or PostgreSQL when
 * `DATABASE_URL` is set (docs/postgres.md). Callers see the same interfaces either way; the
 * engine-specific handle (`db` or `pg`) is for the stores other layers build on it (memory, the
 * run cluster) and for `navi doctor`.
 */
import { performance } from 'node:perf_hooks';
import type { Database } from 'better-sqlite3';
import { createPostgresStores, type PgDatabase, pgSchemaVersion } from './postgres/index.js';
import { createSqliteStores, schemaVersion } from './sqlite/index.js';
import type { ConsentStore, FileStore, KvStore, RecallStore, SearchStore, SessionStore } from './types.js';

export type StoreEngine = 'sqlite' | 'postgres';

/** What `navi doctor` says about the store in use. */
export interface StoreReport {
  engine: StoreEngine;
  /** The file, or the URL with its password hidden. */
  location: string;
  /** The engine's version (SQLite's library, or the PostgreSQL server's). */
  version: string;
  /** The schema's migration level. */
  migration: number;
  /** One round trip (`SELECT 1`), in milliseconds. */
  latencyMs: number;
}

interface StoreSet {
  sessions: SessionStore;
  kv: KvStore;
  files: FileStore;
  consent: ConsentStore;
  recalls: RecallStore;
  search: SearchStore;
  report(): Promise<StoreReport>;
  /** Closes the connection or pool; safe to call twice. */
  close(): Promise<void>;
}

export type OpenedStores =
  | (StoreSet & { engine: 'sqlite'; db: Database })
  | (StoreSet & { engine: 'postgres'; pg: PgDatabase });

export interface StoreSettings {
  DB_PATH: string;
  /** `postgres://…` selects PostgreSQL; empty keeps the SQLite file. */
  DATABASE_URL: string;
}

/** Opens (creating and migrating) the store the settings select. */
export async function openStores(settings: StoreSettings): Promise<OpenedStores> {
  const url = settings.DATABASE_URL.trim();
  if (url !== '') {
    if (!/^postgres(ql)?:\/\//i.test(url)) {
      throw new Error(
        'DATABASE_URL must start with postgres:// or postgresql:// (for example postgres://navi:secret@localhost:5432/navi); ' +
          'unset it to use the SQLite file DB_PATH.',
      );
    }
    const stores = await createPostgresStores(url);
    const { pg } = stores;
    return {
      ...stores,
      engine: 'postgres',
      async report() {
        const start = performance.now();
        await pg.query('SELECT 1');
        const latencyMs = performance.now() - start;
        return {
          engine: 'postgres',
          location: pg.displayUrl,
          version: await pg.serverVersion(),
          migration: await pgSchemaVersion(pg),
          latencyMs,
        };
      },
    };
  }
  const stores = createSqliteStores(settings.DB_PATH);
  const { db } = stores;
  return {
    ...stores,
    engine: 'sqlite',
    async report() {
      const start = performance.now();
      db.prepare('SELECT 1').get();
      const latencyMs = performance.now() - start;
      return {
        engine: 'sqlite',
        location: db.name,
        version: String(db.prepare('SELECT sqlite_version()').pluck().get()),
        migration: schemaVersion(db),
        latencyMs,
      };
    },
    async close() {
      stores.close();
    },
  };
}
