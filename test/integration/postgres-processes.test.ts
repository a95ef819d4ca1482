/**
 * Two real `navi serve` processes on one PostgreSQL database (docs/postgres.md): started at the
 * same moment on an empty schema, both become healthy and the schema is migrated once; the
 * sessions one creates the other lists, reads and renames; and what is kept in files rather than
 * in the database (the vault, the MCP servers' configs) works from either, as long as both
 * share the data folder. Also: a process whose database is unreachable or newer than it knows
 * refuses to start, saying why, without printing the password.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpStatusView, SessionDetail, SessionSummary } from '../../src/protocol/rest.js';
import type { SecretList, SecretRecord } from '../../src/protocol/vault.js';
import { postgresMigrations } from '../../src/store/postgres/index.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { MASTER_KEY } from '../support/gnexus-vault.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { naviProcessEnv, runNavi, spawnNavi } from '../support/navi-process.js';
import { chatRequests } from '../support/rest.js';

const TOKEN = 'postgres-processes-token-0123';
const SECRET_VALUE = 'shared-folder-password-7731';
const auth = { authorization: `Bearer ${TOKEN}` };

/** A REST call with the token; throws with the status and body unless it answers `status`. */
async function call<T>(base: string, path: string, init: RequestInit = {}, status = 200): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { ...auth, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
  });
  const text = await res.text();
  if (res.status !== status)
    throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

describe.skipIf(!needsPostgres('two navi serve processes on PostgreSQL'))(
  'two navi serve processes on one PostgreSQL database',
  () => {
    const dir = tempDir('navi-pg-processes-');
    let schema: Awaited<ReturnType<typeof createTestSchema>>;
    let fake: FakeLlm;
    const urls: [string, string] = ['', ''];
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      schema = await createTestSchema();
      // The MCP folder both processes read (naviProcessEnv puts MCP_SERVERS_DIR there).
      mkdirSync(join(dir, 'mcp'));
      writeFileSync(
        join(dir, 'mcp', 'fixture.json'),
        JSON.stringify({
          name: 'fixture',
          command: process.execPath,
          args: ['--import', 'tsx', join(repoRoot, 'src', 'mcp', 'fixtures', 'fixture-server.ts')],
          cwd: repoRoot,
        }),
      );
      fake = await startFakeLlm();
      const ports = [
        Number(new URL(await closedPortUrl()).port),
        Number(new URL(await closedPortUrl()).port),
      ];
      const extra = { DATABASE_URL: schema.url, GNEXUS_MASTER_KEY: MASTER_KEY, NAVI_API_TOKEN: TOKEN };
      // Both spawned in the same tick, so they meet the empty schema together.
      const started = ports.map((port) =>
        spawnNavi({ dir, port, ollamaUrl: fake.ollamaUrl, extra, stdio: ['ignore', 'ignore', 'inherit'] }),
      );
      const settled = await Promise.allSettled(started);
      for (const s of settled) if (s.status === 'fulfilled') children.push(s.value);
      const failed = settled.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      urls[0] = `http://127.0.0.1:${ports[0]}`;
      urls[1] = `http://127.0.0.1:${ports[1]}`;
    }, 120_000);

    afterAll(async () => {
      await Promise.all(children.map(stop));
      await fake?.close();
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('both start on the empty schema, which is migrated once', async () => {
      for (const base of urls) expect((await fetch(`${base}/health`)).status).toBe(200);
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ version: number; n: string }>(
          'SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version',
        );
        // Each version once. A second process migrating alongside would have failed on the same
        // rows and exited, and spawnNavi would have said so.
        expect(rows.map((r) => [r.version, Number(r.n)])).toEqual(
          postgresMigrations.map((m) => [m.version, 1]),
        );
      } finally {
        await client.end();
      }
    });

    it('a session created through one is listed, read and renamed through the other', async () => {
      const [a, b] = urls;
      const { session_id: id } = await call<{ session_id: string }>(
        a,
        '/sessions',
        { method: 'POST', body: '{}' },
        201,
      );
      const listed = await call<SessionSummary[]>(b, '/sessions');
      expect(listed.map((s) => s.id)).toContain(id);

      fake.enqueue({ text: 'Stored in PostgreSQL.' });
      await call(a, `/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'Remember me' }),
      });
      const read = await call<SessionDetail>(b, `/sessions/${id}`);
      expect(read.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Remember me'],
        ['assistant', 'Stored in PostgreSQL.'],
      ]);

      const renamed = await call<SessionSummary>(b, `/sessions/${id}`, {
        method: 'PATCH',
        body: JSON.stringify({ title: 'Renamed through B' }),
      });
      expect(renamed.title).toBe('Renamed through B');
      expect((await call<SessionDetail>(a, `/sessions/${id}`)).title).toBe('Renamed through B');
    });

    it('a session deleted through one is gone from the other, and an unknown id is 404 on both', async () => {
      const [a, b] = urls;
      const { session_id: id } = await call<{ session_id: string }>(
        a,
        '/sessions',
        { method: 'POST', body: '{}' },
        201,
      );
      await call(b, `/sessions/${id}`, { method: 'DELETE' }, 204);
      expect((await fetch(`${a}/sessions/${id}`, { headers: auth })).status).toBe(404);
      expect((await call<SessionSummary[]>(a, '/sessions')).map((s) => s.id)).not.toContain(id);
      for (const base of urls) {
        const unknown = await fetch(`${base}/sessions/00000000-0000-4000-8000-000000000000`, {
          headers: auth,
        });
        expect(unknown.status).toBe(404);
        expect(await unknown.text()).toContain('SESSION_NOT_FOUND');
      }
    });

    it('a secret stored through one process is found and revealed through the other', async () => {
      const [a, b] = urls;
      const created = await call<SecretRecord>(
        a,
        '/vault/secrets',
        {
          method: 'POST',
          body: JSON.stringify({
            name: 'Shared NAS',
            type: 'password',
            tags: ['cluster'],
            fields: [{ name: 'password', value: SECRET_VALUE, secret: true }],
          }),
        },
        201,
      );
      const found = await call<SecretList>(b, '/vault/secrets?query=Shared');
      expect(found.secrets.map((s) => s.id)).toContain(created.id);
      const revealed = await call<{ value: string }>(b, `/vault/secrets/${created.id}/reveal`, {
        method: 'POST',
        body: JSON.stringify({ field: 'password' }),
      });
      expect(revealed.value).toBe(SECRET_VALUE);
      // And back: a change through B is what A reads.
      await call(b, `/vault/secrets/${created.id}/archive`, { method: 'POST' });
      expect((await call<SecretRecord>(a, `/vault/secrets/${created.id}`)).status).toBe('archived');
    });

    it('the MCP server of the shared folder is listed by both and its tool runs from either', async () => {
      const ready = async (base: string) => {
        for (;;) {
          const body = await call<McpStatusView>(base, '/agents/mcp');
          const server = body.servers.find((s) => s.name === 'fixture');
          if (server?.state === 'ready') return server;
          if (server?.state === 'down')
            throw new Error(`fixture is down through ${base}: ${server.last_error}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      for (const base of urls) {
        const server = await ready(base);
        expect(server.tools).toContain('mcp__fixture__info');
        const { session_id: id } = await call<{ session_id: string }>(
          base,
          '/sessions',
          { method: 'POST', body: '{}' },
          201,
        );
        const before = chatRequests(fake).length;
        fake.enqueue({ toolCalls: [{ name: 'mcp__fixture__info', arguments: {} }] }, { text: 'Asked it.' });
        await call(base, `/sessions/${id}/messages`, {
          method: 'POST',
          body: JSON.stringify({ content: 'Ask the fixture' }),
        });
        const asked = chatRequests(fake).slice(before);
        const toolMessage = asked
          .at(-1)
          ?.body.messages?.filter((m) => m.role === 'tool')
          .at(-1);
        // Each process runs the server of its own: the tool answers with that child's pid.
        expect(String(toolMessage?.content)).toBe(String(server.pid));
      }
    });
  },
);

describe.skipIf(!needsPostgres('navi serve refusing a PostgreSQL database'))(
  'navi serve refusing a database',
  () => {
    const dir = tempDir('navi-pg-refused-');
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    async function serve(databaseUrl: string) {
      const port = Number(new URL(await closedPortUrl()).port);
      const env = naviProcessEnv({
        dir,
        port,
        ollamaUrl: await closedPortUrl(),
        extra: { DATABASE_URL: databaseUrl },
      });
      return runNavi(['serve'], env, dir);
    }

    it('a wrong password stops it with the URL, the password hidden, and what to check', async () => {
      const url = new URL(process.env.NAVI_TEST_DATABASE_URL!);
      url.password = 'not-the-password-9137';
      const run = await serve(url.toString());
      // It ended by itself, as a failure, rather than serving (runNavi kills what still runs after 60 s).
      expect(run.code).toBe(1);
      const said = run.stdout + run.stderr;
      expect(said).toContain('Cannot open the PostgreSQL database');
      expect(said).toContain(':***@');
      expect(said).toContain('DATABASE_URL');
      expect(said).not.toContain('not-the-password-9137');
    });

    it('a schema written by a newer Navi is left alone, and the message says to upgrade', async () => {
      const schema = await createTestSchema();
      try {
        const client = new pg.Client({ connectionString: schema.url });
        await client.connect();
        try {
          await client.query(
            'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
          );
          await client.query(
            "INSERT INTO schema_migrations VALUES (999, 'from the future', '2099-01-01T00:00:00.000Z')",
          );
        } finally {
          await client.end();
        }
        const run = await serve(schema.url);
        expect(run.code).toBe(1);
        expect(run.stdout + run.stderr).toMatch(/schema version 999.*Upgrade Navi/s);
        const check = new pg.Client({ connectionString: schema.url });
        await check.connect();
        try {
          const { rows } = await check.query<{ n: string }>(
            'SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()',
          );
          // Nothing was created beside the table that said no.
          expect(Number(rows[0]?.n)).toBe(1);
        } finally {
          await check.end();
        }
      } finally {
        await schema.drop();
      }
    });
  },
);
