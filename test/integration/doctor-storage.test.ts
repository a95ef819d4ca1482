/**
 * `navi doctor` and `navi pair` on either store, run as real child processes: which store is in
 * use with its version, schema version and latency; on PostgreSQL how memory finds vectors; an
 * unreachable server as a failed check with its reason, never a crash or a leaked password.
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDatabase } from '../../src/store/postgres/index.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { runNavi } from '../support/navi-process.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

describe('navi doctor and navi pair on each store', () => {
  let fake: FakeLlm;
  const dir = tempDir('navi-doctor-store-');
  let env: NodeJS.ProcessEnv;
  const drops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    fake = await startFakeLlm();
    env = {
      DB_PATH: join(dir, 'navi.db'),
      SESSION_FILES_DIR: join(dir, 'files'),
      TOOLS_DIR: join(dir, 'tools'),
      CONTEXT_PROVIDERS_DIR: join(dir, 'providers'),
      MCP_SERVERS_DIR: join(dir, 'mcp'),
      OLLAMA_HOST: fake.ollamaUrl,
      OLLAMA_DEFAULT_MODEL: 'test-model',
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
      MCP_SHIPPED_SERVERS: 'false',
      NAVI_SANDBOX: 'off',
    };
  });
  afterAll(async () => {
    await fake?.close();
    for (const drop of drops) await drop();
  });

  it('on SQLite: the file, its version, schema version and round trip', async () => {
    const run = await runNavi(['doctor'], env, dir);
    expect(run.stdout).toMatch(
      /\[ok\] +database: SQLite 3\.\d+\.\d+ at .*navi\.db, schema version \d+, [\d.]+ ms round trip/,
    );
    expect(run.stdout).not.toContain('memory vectors');
    expect(run.code).toBe(0);
  });

  it('an unreachable PostgreSQL is a failed check that says what to check, with the password hidden', async () => {
    const run = await runNavi(
      ['doctor'],
      { ...env, DATABASE_URL: 'postgres://navi:hunter2@127.0.0.1:1/navi' },
      dir,
    );
    expect(run.stdout).toMatch(
      /\[FAIL\] database: Cannot open the PostgreSQL database postgres:\/\/navi:\*\*\*@127\.0\.0\.1:1\/navi/,
    );
    expect(run.stdout).toContain('Check that the server runs');
    expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
    expect(run.stdout).toMatch(/check\(s\) failed/);
    expect(run.code).toBe(1);
    const pair = await runNavi(
      ['pair'],
      { ...env, DATABASE_URL: 'postgres://navi:hunter2@127.0.0.1:1/navi' },
      dir,
    );
    expect(pair.stderr).toMatch(/navi pair: Cannot open the PostgreSQL database .*\*\*\*/);
    expect(pair.code).toBe(1);
  });

  it.runIf(needsPostgres('navi doctor on PostgreSQL'))(
    'on PostgreSQL: the server, its version, schema version, latency and the vector search; pair writes its code there',
    async () => {
      const schema = await createTestSchema();
      drops.push(schema.drop);
      const pgEnv = { ...env, DATABASE_URL: schema.url };
      const run = await runNavi(['doctor'], pgEnv, dir);
      expect(run.stdout).toMatch(
        /\[ok\] +database: PostgreSQL \d+\.\d+.* at postgres:\/\/navi:\*\*\*@127\.0\.0\.1:5432\/navi_test.*, schema version \d+, [\d.]+ ms round trip/,
      );
      expect(run.stdout).toMatch(/\[ok\] +data: .*database in PostgreSQL \(DATABASE_URL\)/);
      expect(run.stdout).toMatch(/\[ok\] +memory vectors: found (with pgvector|by a scan in Navi)/);
      expect(run.stdout).not.toContain(':navi@');
      const pair = await runNavi(['pair'], pgEnv, dir);
      expect(pair.stdout).toMatch(/#pair=/);
      expect(pair.code).toBe(0);
      // The code is in PostgreSQL, not in the SQLite file DB_PATH names.
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pairing_codes');
        expect(Number(rows[0]?.n)).toBe(1);
      } finally {
        await client.end();
      }
      const unpair = await runNavi(['pair', '--unpair-all'], pgEnv, dir);
      expect(unpair.stdout).toContain('Forgot 0 paired browsers');
      expect(unpair.code).toBe(0);
    },
  );

  it.runIf(needsPostgres('navi doctor on PostgreSQL'))(
    'on PostgreSQL: checking the vector search leaves the schema and the extensions as they were',
    async () => {
      const schema = await createTestSchema();
      drops.push(schema.drop);
      const name = new URL(schema.url).searchParams.get('options')?.replace('-c search_path=', '') ?? '';
      // This server has no pgvector. A view of the schema, found before pg_catalog's through the
      // search path, makes it look offered: the case in which setting pgvector up would start.
      const url = new URL(schema.url);
      url.searchParams.set('options', `-c search_path=${name},pg_catalog`);
      const db = await PgDatabase.open(url.toString(), { max: 1 }); // migrated, as doctor would
      const snapshot = async () =>
        (
          await db.rows<{ what: string }>(
            `SELECT c.relkind::text || ' ' || c.relname AS what FROM pg_class c
               WHERE c.relnamespace = current_schema()::regnamespace
             UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = current_schema()::regnamespace
             UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
               WHERE c.relnamespace = current_schema()::regnamespace
             UNION ALL SELECT 'extension ' || extname FROM pg_extension
             ORDER BY 1`,
          )
        ).map((r) => r.what);
      try {
        await db.query(
          "CREATE VIEW pg_available_extensions AS SELECT 'vector'::name AS name, '0.8.0'::text AS default_version",
        );
        const before = await snapshot();
        expect(before).toContain('r memory_facts');
        const run = await runNavi(['doctor'], { ...env, DATABASE_URL: url.toString() }, dir);
        expect(run.stdout).toMatch(
          /\[ok\] +memory vectors: found by a scan in Navi for now: the server offers pgvector, which navi serve sets up on its first vector search/,
        );
        expect(await snapshot()).toEqual(before);
      } finally {
        await db.close();
      }
    },
  );
});
