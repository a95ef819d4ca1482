import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../open-stores.js';
import { createTestSchema, needsPostgres } from '../test-engines.js';
import { PgDatabase } from './database.js';
import { pgSchemaVersion } from './migrate.js';
import { migrations } from './migrations/index.js';

describe.skipIf(!needsPostgres('PostgreSQL migrations'))('PostgreSQL migrations', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('migrates an empty schema to the last version, and a second open applies nothing', async () => {
    const schema = await createTestSchema();
    cleanups.push(schema.drop);
    const db = await PgDatabase.open(schema.url);
    cleanups.push(() => db.close());
    expect(await pgSchemaVersion(db)).toBe(migrations.at(-1)?.version);
    const again = await PgDatabase.open(schema.url);
    cleanups.push(() => again.close());
    const recorded = await db.rows<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(recorded.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
  });

  it('lets processes that start together on an empty database migrate it once', async () => {
    const schema = await createTestSchema();
    cleanups.push(schema.drop);
    const opened = await Promise.all(
      Array.from({ length: 4 }, () => PgDatabase.open(schema.url, { max: 2 })),
    );
    for (const db of opened) cleanups.push(() => db.close());
    const [{ n } = { n: 0 }] = await opened[0]!.rows<{ n: number }>(
      'SELECT count(*)::int AS n FROM schema_migrations',
    );
    expect(n).toBe(migrations.length);
  });

  it('starts with data rights alone once the schema is current (no CREATE on the schema)', async () => {
    const schema = await createTestSchema();
    cleanups.push(schema.drop);
    const admin = await PgDatabase.open(schema.url);
    const [{ s } = { s: '' }] = await admin.rows<{ s: string }>('SELECT current_schema() AS s');
    await admin.close();
    // The test role may not create roles, so the owner takes CREATE on the schema from itself:
    // the same refusal a data-only role meets ("permission denied for schema").
    const owner = new pg.Client({ connectionString: schema.url });
    await owner.connect();
    try {
      await owner.query(`REVOKE CREATE ON SCHEMA ${s} FROM CURRENT_USER`);
      await expect(
        owner.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER)'),
      ).rejects.toThrow(/permission denied for schema/);
    } finally {
      await owner.end();
    }
    const stores = await openStores({ DB_PATH: '', DATABASE_URL: schema.url });
    cleanups.push(() => stores.close());
    await stores.sessions.create({ id: 's1', profile_id: 'default', title: 'data rights only' });
    await stores.kv.set('s1', 'k', { ok: true });
    expect(await stores.kv.get('s1', 'k')).toEqual({ ok: true });
  });

  it('refuses a database newer than this Navi, naming what to do', async () => {
    const schema = await createTestSchema();
    cleanups.push(schema.drop);
    const db = await PgDatabase.open(schema.url);
    await db.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')`);
    await db.close();
    await expect(PgDatabase.open(schema.url)).rejects.toThrow(/schema version 999.*Upgrade Navi/);
  });

  it('says what to check when the server cannot be reached', async () => {
    await expect(
      PgDatabase.open('postgres://navi:secret-pw@127.0.0.1:1/nothing', { connectTimeoutMs: 2000 }),
    ).rejects.toThrow(
      /Cannot open the PostgreSQL database postgres:\/\/navi:\*\*\*@127\.0\.0\.1:1\/nothing.*DATABASE_URL/,
    );
  });
});
