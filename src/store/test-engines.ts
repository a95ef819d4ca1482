/**
 * The store tests run once per engine: SQLite always, and PostgreSQL when
 * `NAVI_TEST_DATABASE_URL` names a server (as `.ci/run` sets it). Under NAVI_REQUIRE_ALL=1 a
 * missing URL fails the run instead of skipping PostgreSQL. Each `open()` gives an empty store of
 * its own: a temporary SQLite file, or a fresh PostgreSQL schema dropped by `dispose`.
 *
 *   describe.each(storeEngines())('sessions on $name', ({ open }) => { … });
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type OpenedStores, openStores, type StoreEngine } from './open-stores.js';

export interface TestStores {
  stores: OpenedStores;
  /** The settings that open these same stores again (a second process, a restart). */
  settings: { DB_PATH: string; DATABASE_URL: string };
  /** A temporary folder of the test's own (the SQLite file is in it). */
  dir: string;
  /** Closes the stores and removes the file or schema. */
  dispose(): Promise<void>;
}

export interface EngineCase {
  name: StoreEngine;
  open(): Promise<TestStores>;
}

/** The URL of the PostgreSQL server tests may use, or undefined. */
export function postgresTestUrl(): string | undefined {
  const url = process.env.NAVI_TEST_DATABASE_URL?.trim();
  return url ? url : undefined;
}

let warned = false;

/**
 * Whether the PostgreSQL half may run: true with a URL; without one, throws under
 * NAVI_REQUIRE_ALL=1, else prints (once) why it is skipped and returns false.
 */
export function needsPostgres(what: string): boolean {
  if (postgresTestUrl()) return true;
  const reason = `${what}: NAVI_TEST_DATABASE_URL is not set`;
  if (process.env.NAVI_REQUIRE_ALL === '1')
    throw new Error(`${reason}, and NAVI_REQUIRE_ALL=1 forbids skipping`);
  if (!warned) {
    warned = true;
    process.stderr.write(
      `SKIP ${reason}, so the PostgreSQL half of the store tests is skipped (point it at a database, e.g. postgres://navi:navi@127.0.0.1:5432/navi_test, to run them)\n`,
    );
  }
  return false;
}

/**
 * A new empty schema on the test server (or the server of `base`, for the bench): the URL that
 * selects it (through `search_path`) and the function that drops it.
 */
export async function createTestSchema(
  base = postgresTestUrl(),
  prefix = 'navi_t',
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!base) throw new Error('NAVI_TEST_DATABASE_URL is not set');
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'navi-store-'));
}

const sqliteCase: EngineCase = {
  name: 'sqlite',
  async open() {
    const dir = tempDir();
    const settings = { DB_PATH: join(dir, 'navi.db'), DATABASE_URL: '' };
    const stores = await openStores(settings);
    return {
      stores,
      settings,
      dir,
      async dispose() {
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgresCase: EngineCase = {
  name: 'postgres',
  async open() {
    const dir = tempDir();
    const schema = await createTestSchema();
    const settings = { DB_PATH: join(dir, 'unused.db'), DATABASE_URL: schema.url };
    const stores = await openStores(settings);
    return {
      stores,
      settings,
      dir,
      async dispose() {
        await stores.close();
        await schema.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** SQLite, and PostgreSQL when it may run (see `needsPostgres`). */
export function storeEngines(what = 'store tests'): EngineCase[] {
  return needsPostgres(what) ? [sqliteCase, postgresCase] : [sqliteCase];
}
