/**
 * `navi db copy` as a real child process on real files and real PostgreSQL schemas: a whole
 * installation (a session of 1 000 messages, files, memory facts with vectors, recalls, paired
 * browsers) SQLite → PostgreSQL → a new SQLite file, compared row by row; run twice; a copy
 * killed half-way and finished; and every refusal a person can meet.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COPIED_TABLES, notCopiedBecause } from '../../src/cli/db/tables.js';
import { SqliteMemoryStore } from '../../src/memory/memory-store.js';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { createSqliteStores } from '../../src/store/sqlite/index.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { runNavi } from '../support/navi-process.js';

const MESSAGES = 1000;

/** A Navi database with some of everything, written through the stores. */
async function populate(file: string): Promise<void> {
  const stores = createSqliteStores(file);
  const memory = new SqliteMemoryStore(stores.db);
  try {
    await stores.sessions.create({ id: 's-big', profile_id: 'plain', title: 'Big chat about otters' });
    await stores.sessions.create({ id: 's-small', profile_id: 'plain', title: '' });
    await stores.sessions.update('s-small', {
      pinned: true,
      model_override: { backend: 'ollama', model: 'm' },
    });
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const entries = Array.from({ length: MESSAGES }, (_, i) => ({
      message: {
        id: `m${i}`,
        role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: i === 7 ? 'otters hold hands — ünïcode ✓' : `message number ${i}`,
        created_at: new Date(t0 + i * 1000).toISOString(),
        ...(i % 2 === 1 ? { thinking: `thought ${i}` } : {}),
      },
      display: true,
      context: i >= MESSAGES / 2,
    }));
    for (let i = 0; i < entries.length; i += 100)
      await stores.sessions.append('s-big', entries.slice(i, i + 100));
    await stores.sessions.append('s-small', [
      {
        message: {
          id: 'x1',
          role: 'user',
          content: 'hi',
          created_at: new Date(t0).toISOString(),
          kind: 'form_submit',
        },
        display: true,
        context: true,
      },
    ]);
    await stores.kv.set('s-big', 'plan', { steps: ['a', 'b'], done: false });
    await stores.kv.set('subagent_1', 'state', 42);
    await stores.files.add({
      session_id: 's-big',
      name: 'notes.txt',
      path: '/data/files/s-big/notes.txt',
      size: 12,
      mime_type: 'text/plain',
      created_at: new Date(t0).toISOString(),
      expires_at: new Date(t0 + 86_400_000).toISOString(),
    });
    const code = await stores.consent.createPairingCode(600_000);
    await stores.consent.redeemPairingCode(code, 'test-browser');
    await stores.consent.createPairingCode(600_000);
    for (let i = 0; i < 30; i++)
      await memory.upsert({
        category: 'fact',
        key: `k${i}`,
        value: `the user likes thing ${i}`,
        source_session_id: 's-big',
      });
    await memory.delete({ category: 'fact', key: 'k3' }); // a gap in the ids
    const list = await memory.list({ limit: 100 });
    for (const fact of list.facts)
      await memory.setEmbedding(
        fact.id,
        'embed-model',
        Float32Array.from({ length: 8 }, (_, j) => Math.sin(fact.id * 7 + j)),
      );
    await memory.setSummary('The user likes otters.');
    await memory.setSessionState({
      session_id: 's-big',
      extracted_at: new Date(t0).toISOString(),
      status: 'failed',
      attempts: 2,
      last_error: 'model down',
      attempted_at: new Date(t0).toISOString(),
    });
    stores.db
      .prepare(
        `INSERT INTO recalls (id, session_id, prompt, schedule, status, next_run_at, last_run_at, last_outcome, run_count, chain, created_at)
         VALUES ('r1', 's-big', 'check the otters', '{"kind":"every","minutes":60}', 'active', '2026-02-01T00:00:00.000Z', NULL, '{"ok":true}', 3, 1, '2026-01-01T00:00:00.000Z')`,
      )
      .run();
  } finally {
    stores.close();
  }
}

type Dump = Record<string, unknown[]>;

/** Every copied table of a SQLite file, read directly, in key order, with JSON parsed. */
function dump(file: string): Dump {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const out: Dump = {};
    for (const t of COPIED_TABLES) {
      const rows = db
        .prepare(`SELECT * FROM ${t.name} ORDER BY ${t.key.map((k) => `"${k}"`).join(', ')}`)
        .all() as Record<string, unknown>[];
      out[t.name] = rows.map((row) => {
        const copy: Record<string, unknown> = { ...row };
        for (const c of t.columns)
          if (c.kind === 'json' && typeof copy[c.name] === 'string')
            copy[c.name] = JSON.parse(copy[c.name] as string);
        return copy;
      });
    }
    return out;
  } finally {
    db.close();
  }
}

function derived(file: string): { searchDocs: number; codes: number; fts: number } {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const n = (sql: string) => db.prepare(sql).pluck().get() as number;
    return {
      searchDocs: n('SELECT count(*) FROM search_docs'),
      codes: n('SELECT count(*) FROM memory_fact_codes'),
      fts: n("SELECT count(*) FROM memory_facts_fts WHERE memory_facts_fts MATCH 'thing'"),
    };
  } finally {
    db.close();
  }
}

const copy = (from: string, to: string, dir: string, ...flags: string[]) =>
  runNavi(['db', 'copy', '--from', from, '--to', to, ...flags], {}, dir);

/** Every count line of the check ends in "ok", and the "new" column is `expectNew` or any. */
function countsOk(stdout: string): boolean {
  const lines = stdout.split('\n').filter((l) => COPIED_TABLES.some((t) => l.startsWith(`${t.name} `)));
  return lines.length === COPIED_TABLES.length && lines.every((l) => l.trimEnd().endsWith('ok'));
}
const newRows = (stdout: string, table: string) =>
  Number(
    stdout
      .split('\n')
      .find((l) => l.startsWith(`${table} `))
      ?.trim()
      .split(/\s+/)[3],
  );

describe('navi db copy between SQLite files', () => {
  const dir = tempDir('navi-db-copy-');

  it('copies a whole installation into a new file, then copies nothing new the second time', async () => {
    const src = join(dir, 'a.db');
    await populate(src);
    const dst = join(dir, 'b.db');
    const first = await copy(src, dst, dir);
    expect(first.stderr).toContain('copied messages: 1001 rows read, 1001 new');
    expect(first.code).toBe(0);
    expect(countsOk(first.stdout)).toBe(true);
    expect(dump(dst)).toEqual(dump(src));
    expect(derived(dst)).toEqual(derived(src));
    const second = await copy(src, dst, dir);
    expect(second.code).toBe(0);
    for (const t of COPIED_TABLES) expect(newRows(second.stdout, t.name)).toBe(0);
    expect(dump(dst)).toEqual(dump(src));
  });

  it('every table of a new database is either copied or known to be derived', () => {
    const db = new BetterSqlite3(join(dir, 'a.db'), { readonly: true });
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    db.close();
    const unknown = names.filter((n) => !COPIED_TABLES.some((t) => t.name === n) && !notCopiedBecause(n));
    expect(unknown).toEqual([]);
  });
});

describe('navi db copy refuses what it cannot do, and says why', () => {
  const dir = tempDir('navi-db-copy-bad-');
  const src = join(dir, 'src.db');
  const ready = populate(src);

  it('wrong, missing, repeated and oversized arguments', async () => {
    await ready;
    const cases: [string[], RegExp][] = [
      [['db'], /Usage: navi db copy/],
      [['db', 'move'], /unknown command "move"/],
      [['db', 'copy', '--to', join(dir, 'x.db')], /needs both --from and --to \(missing --from\)/],
      [['db', 'copy', '--from', src], /missing --to/],
      [['db', 'copy', '--from', src, '--to'], /--to needs a value/],
      [['db', 'copy', '--from', src, '--to', join(dir, 'x.db'), '--fast'], /unknown argument "--fast"/],
      [['db', 'copy', '--from', src, '--from', src, '--to', join(dir, 'x.db')], /--from is given twice/],
      [
        ['db', 'copy', '--from', src, '--to', join(dir, 'x.db'), '--batch-size', 'lots'],
        /--batch-size must be a whole number/,
      ],
      [
        ['db', 'copy', '--from', src, '--to', join(dir, 'x.db'), '--batch-size', '99999999'],
        /from 1 to 5000/,
      ],
      [['db', 'copy', '--from', src, '--to', `${dir}/./src.db`], /name the same database/],
      [
        ['db', 'copy', '--from', 'postgres://a@h/db', '--to', 'postgres://b:pw@h:5432/db'],
        /name the same database/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runNavi(args, {}, dir);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(run.code, args.join(' ')).toBe(2);
    }
  });

  it('a source that is missing, not a database, not a Navi database, or open in a running Navi', async () => {
    await ready;
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'this is not a database, just text that is long enough to have a header'.repeat(20));
    const other = join(dir, 'other.db');
    const o = new BetterSqlite3(other);
    o.exec('CREATE TABLE recipes (name TEXT)');
    o.close();
    const to = join(dir, 'never.db');
    const cases: [string, RegExp][] = [
      [join(dir, 'absent.db'), /there is no file .*absent\.db/],
      [junk, /cannot be read as a SQLite database/],
      [other, /is not a Navi database/],
    ];
    for (const [from, message] of cases) {
      const run = await copy(from, to, dir);
      expect(run.stderr).toMatch(message);
      expect(run.code).toBe(1);
    }
    const held = new BetterSqlite3(src);
    held.pragma('journal_mode = WAL');
    held.prepare('SELECT count(*) FROM sessions').get();
    try {
      const run = await copy(src, to, dir);
      expect(run.stderr).toMatch(/open in another process, most likely a running Navi; stop it first/);
      expect(run.code).toBe(1);
    } finally {
      held.close();
    }
  });

  it("a target that is newer than this Navi, someone else's database, or holds other data (unless --merge)", async () => {
    await ready;
    const newer = join(dir, 'newer.db');
    await populate(newer);
    const n = new BetterSqlite3(newer);
    n.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')").run();
    n.close();
    const run = await copy(src, newer, dir);
    expect(run.stderr).toMatch(/schema version 99, but this version of Navi only knows up to/);
    expect(run.code).toBe(1);

    const other = join(dir, 'recipes.db');
    const o = new BetterSqlite3(other);
    o.exec('CREATE TABLE recipes (name TEXT)');
    o.close();
    expect((await copy(src, other, dir)).stderr).toMatch(/holds tables but is not a Navi database/);

    const mine = join(dir, 'mine.db');
    const stores = createSqliteStores(mine);
    await stores.sessions.create({ id: 'my-own', profile_id: 'plain' });
    // Ids 1 of the target's own: a fact and a paired browser that are not the source's ids 1.
    await new SqliteMemoryStore(stores.db).upsert({ category: 'fact', key: 'mine', value: 'my own fact' });
    await stores.consent.redeemPairingCode(await stores.consent.createPairingCode(600_000), 'my-browser');
    stores.close();
    const refused = await copy(src, mine, dir);
    expect(refused.stderr).toMatch(
      /already holds data of its own \(1 row of sessions that the source does not have\).*--merge/,
    );
    expect(refused.code).toBe(1);
    const merged = await copy(src, mine, dir, '--merge');
    expect(merged.code).toBe(0);
    const after = dump(mine);
    const sessions = after.sessions as { id: string }[];
    expect(sessions.map((s) => s.id).sort()).toEqual(['my-own', 's-big', 's-small']);
    // Every fact and browser of both ends, the source's renumbered by the target.
    const source = dump(src);
    const facts = (d: Dump) => (d.memory_facts as { key: string }[]).map((f) => f.key).sort();
    expect(facts(after)).toEqual([...facts(source), 'mine'].sort());
    const browsers = (d: Dump) =>
      (d.paired_clients as { user_agent: string }[]).map((c) => c.user_agent).sort();
    expect(browsers(after)).toEqual([...browsers(source), 'my-browser'].sort());
    // Merging again finds them all by their natural keys and writes nothing.
    const again = await copy(src, mine, dir, '--merge');
    expect(again.code).toBe(0);
    expect(newRows(again.stdout, 'memory_facts')).toBe(0);
    expect(newRows(again.stdout, 'paired_clients')).toBe(0);
    expect(dump(mine)).toEqual(after);
  });

  it('an unreachable PostgreSQL server, as a source and as a target', async () => {
    await ready;
    const url = 'postgres://navi:secret@127.0.0.1:1/navi';
    for (const run of [await copy(url, join(dir, 'y.db'), dir), await copy(src, url, dir)]) {
      expect(run.stderr).toMatch(/127\.0\.0\.1:1/);
      expect(run.stderr).toMatch(/ECONNREFUSED|connect/);
      expect(run.stderr).not.toContain('secret');
      expect(run.code).toBe(1);
    }
  });
});

/**
 * Runs `navi db copy` into `url` (migrated first) while another connection holds `heldTable`:
 * once the copy's insert waits for that table (every table before it copied), the copy is killed
 * with SIGKILL and its waiting statement ended before the table is let go, so none of it lands.
 */
async function killedCopy(src: string, url: string, heldTable: string): Promise<void> {
  await (await PgDatabase.open(url, { max: 1 })).close();
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  let child: ChildProcess | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${heldTable} IN EXCLUSIVE MODE`);
    child = spawn(
      process.execPath,
      [join(repoRoot, 'bin/navi.js'), 'db', 'copy', '--from', src, '--to', url, '--batch-size', '50'],
      {
        cwd: dirname(src),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          NAVI_DATA_DIR: dirname(src),
          LOG_LEVEL: 'ERROR',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const running = child;
    let seen = '';
    let ended: number | null | undefined;
    running.stderr?.on('data', (d: Buffer) => {
      seen += d.toString();
    });
    const exited = new Promise((resolve) =>
      running.once('exit', (code) => {
        ended = code;
        resolve(code);
      }),
    );
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    let waiting: number | undefined;
    try {
      while (waiting === undefined) {
        if (ended !== undefined) throw new Error(`the copy ended (${ended}) before it was killed: ${seen}`);
        const { rows } = await watcher.query<{ pid: number }>(
          'SELECT pid FROM pg_locks WHERE relation = $1::regclass AND NOT granted',
          [heldTable],
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 20));
      }
      running.kill('SIGKILL');
      await exited;
      // The server has not noticed the client is gone: let go of the table and it would insert.
      await watcher.query('SELECT pg_terminate_backend($1, 10000)', [waiting]);
    } finally {
      await watcher.end();
    }
  } finally {
    child?.kill('SIGKILL');
    await holder.query('ROLLBACK');
    await holder.end();
  }
}

describe.runIf(needsPostgres('navi db copy'))('navi db copy through PostgreSQL', () => {
  const dir = tempDir('navi-db-copy-pg-');
  const schemas: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  const schema = async () => {
    const s = await createTestSchema();
    schemas.push(s);
    return s.url;
  };

  it('SQLite → PostgreSQL → a new SQLite file keeps every row, twice over, and rebuilds what is derived', async () => {
    const src = join(dir, 'src.db');
    await populate(src);
    const url = await schema();
    const there = await copy(src, url, dir);
    expect(there.stderr).toContain('copied messages: 1001 rows read, 1001 new');
    expect(there.code).toBe(0);
    expect(countsOk(there.stdout)).toBe(true);
    const again = await copy(src, url, dir);
    expect(again.code).toBe(0);
    for (const t of COPIED_TABLES) expect(newRows(again.stdout, t.name)).toBe(0);

    const back = join(dir, 'back.db');
    const home = await copy(url, back, dir);
    expect(home.code).toBe(0);
    expect(dump(back)).toEqual(dump(src));
    expect(derived(back)).toEqual(derived(src));

    // The identity sequence was moved past the copied ids: a new fact gets a new id.
    const db = await PgDatabase.open(url, { max: 1 });
    try {
      const [max] = await db.rows<{ m: number }>('SELECT max(id) AS m FROM memory_facts');
      const [row] = await db.rows<{ id: number }>(
        `INSERT INTO memory_facts (category, key, value, created_at, updated_at) VALUES ('fact', 'new', 'v', 'now', 'now') RETURNING id`,
      );
      expect(row?.id).toBeGreaterThan(max?.m ?? 0);
      const [pinned] = await db.rows<{ pinned: boolean; model_override: unknown }>(
        "SELECT pinned, model_override FROM sessions WHERE id = 's-small'",
      );
      expect(pinned).toEqual({ pinned: true, model_override: { backend: 'ollama', model: 'm' } });
    } finally {
      await db.close();
    }
  });

  it('writes a NUL as U+FFFD, as the stores do, and leaves the planner statistics of what it copied', async () => {
    const src = join(dir, 'nul.db');
    const stores = createSqliteStores(src);
    try {
      await stores.sessions.create({ id: 's-nul', profile_id: 'plain', title: 'a\u0000b' });
      await stores.sessions.append('s-nul', [
        {
          message: {
            id: 'm1',
            role: 'tool',
            content: 'bin\u0000ary',
            tool_call_id: 'c\u00001',
            created_at: '2026-01-01T00:00:00.000Z',
          },
          display: true,
          context: true,
        },
      ]);
    } finally {
      stores.close();
    }
    const url = await schema();
    const run = await copy(src, url, dir);
    expect(run.code).toBe(0);
    const db = await PgDatabase.open(url, { max: 1 });
    try {
      const [session] = await db.rows<{ title: string }>("SELECT title FROM sessions WHERE id = 's-nul'");
      expect(session?.title).toBe('a\uFFFDb');
      const [message] = await db.rows<{ content: string; payload: { tool_call_id: string } }>(
        "SELECT content, payload FROM messages WHERE id = 'm1'",
      );
      expect(message).toEqual({
        content: 'bin\uFFFDary',
        payload: expect.objectContaining({ tool_call_id: 'c\uFFFD1' }),
      });
      const analysed = await db.rows<{ relname: string }>(
        "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND last_analyze IS NOT NULL AND relname IN ('messages', 'context_messages')",
      );
      expect(analysed.map((r) => r.relname).sort()).toEqual(['context_messages', 'messages']);
    } finally {
      await db.close();
    }
  });

  it('refuses a key with a NUL, naming the table and row, instead of making it another key', async () => {
    const src = join(dir, 'nul-key.db');
    const stores = createSqliteStores(src);
    try {
      await stores.sessions.create({ id: 's-keys', profile_id: 'plain', title: 'keys' });
      // Two keys that differ only by NUL against U+FFFD: rewriting the first would merge them.
      await stores.kv.set('s-keys', 'k\u0000x', 'nul');
      await stores.kv.set('s-keys', 'k\uFFFDx', 'replacement');
    } finally {
      stores.close();
    }
    const url = await schema();
    const refused = await copy(src, url, dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'the session_kv row (session_id "s-keys", key "k\\u0000x") has a NUL character in key',
    );
    expect(refused.stderr).toMatch(/Rename or delete that row in the source/);
    const db = await PgDatabase.open(url, { max: 1 });
    try {
      expect(await db.rows('SELECT key FROM session_kv')).toEqual([]);
    } finally {
      await db.close();
    }

    const fix = new BetterSqlite3(src);
    fix.prepare("DELETE FROM session_kv WHERE key = 'k' || char(0) || 'x'").run();
    fix.close();
    const done = await copy(src, url, dir);
    expect(done.code).toBe(0);
    expect(newRows(done.stdout, 'session_kv')).toBe(1);
    // A second run finds only the source's own rows in the target.
    const again = await copy(src, url, dir);
    expect(again.code).toBe(0);
    expect(newRows(again.stdout, 'session_kv')).toBe(0);
  });

  it('a copy killed half-way is finished by running it again', async () => {
    const src = join(dir, 'half.db');
    await populate(src);
    const url = await schema();
    // context_messages held: the copy gets through messages and is killed waiting there.
    await killedCopy(src, url, 'context_messages');
    const counts = async () => {
      const db = await PgDatabase.open(url, { max: 1 });
      try {
        const [r] = await db.rows<{ m: number; c: number }>(
          'SELECT (SELECT count(*) FROM messages) AS m, (SELECT count(*) FROM context_messages) AS c',
        );
        return r;
      } finally {
        await db.close();
      }
    };
    expect(await counts()).toEqual({ m: MESSAGES + 1, c: 0 });
    const finish = await copy(src, url, dir, '--batch-size', '50');
    expect(finish.code).toBe(0);
    expect(newRows(finish.stdout, 'messages')).toBe(0);
    expect(newRows(finish.stdout, 'context_messages')).toBe(MESSAGES / 2 + 1);
    const back = join(dir, 'half-back.db');
    expect((await copy(url, back, dir)).code).toBe(0);
    expect(dump(back)).toEqual(dump(src));
  });

  it('--merge after a copy killed before its end numbers the merged facts past the copied ones', async () => {
    const src = join(dir, 'merge-a.db');
    await populate(src);
    const url = await schema();
    // recalls held: memory_facts is copied, and the copy is killed before its end moved the sequences.
    await killedCopy(src, url, 'recalls');
    const other = join(dir, 'merge-b.db');
    const stores = createSqliteStores(other);
    const memory = new SqliteMemoryStore(stores.db);
    try {
      for (let i = 0; i < 5; i++)
        await memory.upsert({ category: 'fact', key: `other${i}`, value: `the other install knows ${i}` });
    } finally {
      stores.close();
    }
    const merged = await copy(other, url, dir, '--merge');
    expect(merged.code).toBe(0);
    expect(newRows(merged.stdout, 'memory_facts')).toBe(5);
    const db = await PgDatabase.open(url, { max: 1 });
    try {
      const keys = await db.rows<{ key: string }>(
        "SELECT key FROM memory_facts WHERE key LIKE 'other%' ORDER BY key",
      );
      expect(keys.map((k) => k.key)).toEqual(['other0', 'other1', 'other2', 'other3', 'other4']);
      const [{ n } = { n: 0 }] = await db.rows<{ n: number }>('SELECT count(*)::int AS n FROM memory_facts');
      expect(n).toBe(29 + 5);
    } finally {
      await db.close();
    }
  });

  it("refuses a PostgreSQL target that holds someone else's tables, or is newer, and a source with no Navi schema", async () => {
    const src = join(dir, 'refuse.db');
    await populate(src);
    const foreign = await schema();
    const client = new pg.Client({ connectionString: foreign });
    await client.connect();
    await client.query('CREATE TABLE recipes (name TEXT)');
    await client.end();
    const run = await copy(src, foreign, dir);
    expect(run.stderr).toMatch(/holds tables \(recipes…\) but no Navi database/);
    expect(run.code).toBe(1);
    const asSource = await copy(await schema(), join(dir, 'z.db'), dir);
    expect(asSource.stderr).toMatch(/holds no Navi database/);
    expect(asSource.code).toBe(1);

    const newer = await schema();
    const db = await PgDatabase.open(newer, { max: 1 });
    await db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')");
    await db.close();
    const refused = await copy(src, newer, dir);
    expect(refused.stderr).toMatch(/schema version 99, but this version of Navi only knows up to/);
    expect(refused.code).toBe(1);
  });
});
