/**
 * The session store on SQLite and on PostgreSQL, side by side: the same rows, the same calls, the
 * same machine (docs/postgres.md#speed). Each figure is one store call as Navi makes it:
 *
 * - a turn appended: the user message with `last_active`, then the answer with the token count,
 *   two appends to both buffers, as a run writes them;
 * - the streaming saver's once-a-second `updateMessage` of an answer that grows;
 * - the newest page (100) of a 10 000-message session, what opening a session reads;
 * - `getContext` of a 1 000-message context, what each LLM call of a run reads;
 * - creating a session, and listing 500 of them (the sidebar).
 *
 * Each is timed call by call: p50 and p99, and calls a second from the median. PostgreSQL is
 * measured on an empty schema of its own (dropped at the end) of `--database-url` or else
 * NAVI_TEST_DATABASE_URL; without either its rows say why they are empty. The stores are opened
 * with `openStores`, so PostgreSQL goes through the same pool a `navi serve` has, over the
 * loopback or whatever network the URL names.
 *
 * Flags: `--database-url postgres://…`, `--samples 500` (timed calls per figure).
 * Run alone with `node --import tsx bench/stores.ts`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type OpenedStores, openStores, type StoreEngine } from '../src/store/open-stores.js';
import { hidePassword } from '../src/store/postgres/index.js';
import { createTestSchema } from '../src/store/test-engines.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../src/store/types.js';
import { percentile } from './measure.js';
import type { BenchOptions, BenchRow } from './types.js';

const LONG_SESSION = 10_000;
const CONTEXT = 1_000;
const PAGE = 100;
const LISTED = 500;
const PAGE_GOAL_MS = 5;
const PROFILE = 'plain';
/** The saver writes at most once a second; a write must end well within that. */
const SAVE_GOAL_MS = 50;

const TEXT = 'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(4);

function message(id: string, i: number, role: StoredMessage['role']): StoredMessage {
  return {
    id,
    role,
    content: `${role} ${i}: ${TEXT}`,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  };
}

const both = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });

/** One figure's samples, in milliseconds. */
interface Timing {
  p50: number;
  p99: number;
  perSecond: number;
}

async function timed(samples: number, call: (n: number) => Promise<unknown>): Promise<Timing> {
  // A few calls first, so JIT, prepared statements and the pool's connections are warm.
  for (let n = 0; n < 5; n++) await call(-1 - n);
  const times: number[] = [];
  for (let n = 0; n < samples; n++) {
    const started = performance.now();
    await call(n);
    times.push(performance.now() - started);
  }
  const p50 = percentile(times, 50);
  return { p50, p99: percentile(times, 99), perSecond: p50 > 0 ? 1000 / p50 : 0 };
}

async function fill(sessions: SessionStore, id: string, size: number): Promise<void> {
  await sessions.create({ id, profile_id: PROFILE });
  for (let start = 0; start < size; start += 1_000) {
    const batch: BufferedMessage[] = [];
    for (let i = start; i < Math.min(size, start + 1_000); i++)
      batch.push(both(message(`${id}-m${i}`, i, i % 2 ? 'assistant' : 'user')));
    await sessions.append(id, batch);
  }
}

interface Figure {
  name: string;
  timing: Timing;
  what: string;
  goalMs?: number;
}

/** Every figure on one engine's stores; `samples` calls each. */
async function measure(stores: OpenedStores, samples: number): Promise<Figure[]> {
  const { sessions } = stores;
  const long = randomUUID();
  const short = randomUUID();
  await fill(sessions, long, LONG_SESSION);
  await fill(sessions, short, CONTEXT);
  // A server that has run a while has statistics of its tables (autovacuum gathers them within
  // a minute of a large change). Without them, right after the fill, the planner may read a
  // whole session to sort out its newest page: that is a figure of the first minute, not of use.
  // Only the bench's own tables: a bare ANALYZE would go through every table of the database
  // the URL names (other schemas, another installation's Navi).
  if (stores.engine === 'postgres') await stores.pg.query('ANALYZE sessions, messages, context_messages');
  const figures: Figure[] = [];

  let turn = LONG_SESSION;
  const append = await timed(samples, async () => {
    const i = turn;
    turn += 2;
    const at = message(`${long}-m${i}`, i, 'user').created_at;
    await sessions.append(long, [both(message(`${long}-m${i}`, i, 'user'))], { last_active: at });
    await sessions.append(long, [both(message(`${long}-m${i + 1}`, i + 1, 'assistant'))], {
      context_token_count: 1_000 + i,
    });
  });
  figures.push({
    name: `append a turn to ${LONG_SESSION} messages`,
    timing: append,
    what: 'user message with last_active, then the answer with its token count: two appends to both buffers',
  });

  const answer = message(`${long}-streamed`, turn, 'assistant');
  await sessions.append(long, [both({ ...answer, content: '', interrupted: true })]);
  let grown = '';
  const save = await timed(samples, async () => {
    grown += 'another second of streamed text. ';
    await sessions.updateMessage(long, answer.id, { content: grown });
  });
  figures.push({
    name: 'updateMessage of a streaming answer',
    timing: save,
    what: `the saver's once-a-second write of the text so far, which grows by a sentence each time`,
    goalMs: SAVE_GOAL_MS,
  });

  const page = await timed(samples, () => sessions.getMessagePage(long, { limit: PAGE }));
  figures.push({
    name: `newest page of ${LONG_SESSION} messages`,
    timing: page,
    what: `getMessagePage, newest ${PAGE}: what opening a session reads`,
    goalMs: PAGE_GOAL_MS,
  });

  const context = await timed(samples, () => sessions.getContext(short));
  figures.push({
    name: `getContext of ${CONTEXT} messages`,
    timing: context,
    what: 'the whole context buffer, as each LLM call of a run reads it',
  });

  const create = await timed(LISTED, () => sessions.create({ id: randomUUID(), profile_id: PROFILE }));
  figures.push({ name: 'create a session', timing: create, what: `${LISTED} sessions, one by one` });

  const listed = (await sessions.list()).length;
  const list = await timed(samples, () => sessions.list());
  figures.push({
    name: `list ${listed} sessions`,
    timing: list,
    what: 'every session, pinned first, newest first: the sidebar',
  });
  return figures;
}

function row(engine: StoreEngine, figure: Figure): BenchRow {
  const { p50, p99, perSecond } = figure.timing;
  // One unit for every row, so the two engines' rows of a figure compare at a glance.
  return {
    name: `${engine}: ${figure.name}`,
    value: p50 * 1000,
    unit: 'µs p50',
    note: `p99 ${(p99 * 1000).toFixed(0)} µs, ${perSecond.toFixed(0)} calls/s one at a time; ${figure.what}`,
    ...(figure.goalMs !== undefined
      ? { goal: { value: figure.goalMs * 1000, direction: 'max' as const } }
      : {}),
  };
}

/** The figures of one engine, its stores closed and its file or schema removed after. */
async function onEngine(
  open: () => Promise<{ stores: OpenedStores; cleanup(): Promise<void> }>,
  samples: number,
): Promise<Figure[]> {
  const { stores, cleanup } = await open();
  try {
    return await measure(stores, samples);
  } finally {
    await stores.close();
    await cleanup();
  }
}

function samplesFlag(flags: Record<string, string>): number {
  const raw = flags.samples;
  if (raw === undefined) return 500;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 10 || value > 100_000) {
    throw new Error(`--samples wants a whole number from 10 to 100000; got "${raw}"`);
  }
  return value;
}

/** Why PostgreSQL was not measured, or undefined when it can be. */
function postgresUrl(flags: Record<string, string>): { url?: string; why?: string } {
  const flag = flags['database-url'];
  if (flag === 'true')
    throw new Error('--database-url wants a URL: --database-url postgres://user:pw@host/db');
  const url = (flag ?? process.env.NAVI_TEST_DATABASE_URL ?? '').trim();
  if (url === '') {
    return {
      why:
        'not measured: NAVI_TEST_DATABASE_URL is not set and no --database-url was given ' +
        '(npm run bench -- stores --database-url postgres://navi:navi@127.0.0.1:5432/navi_test)',
    };
  }
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new Error(
      `the PostgreSQL URL must start with postgres:// or postgresql://; got ${hidePassword(url)}`,
    );
  }
  return { url };
}

function cell(figure: Figure | undefined, why: string | undefined): string {
  if (!figure) return why ? 'not measured' : '';
  const t = figure.timing;
  return `${(t.p50 * 1000).toFixed(0)} / ${(t.p99 * 1000).toFixed(0)} µs, ${t.perSecond.toFixed(0)}/s`;
}

/** The two engines as columns, on stderr, for reading them side by side. */
function sideBySide(sqlite: Figure[], postgres: Figure[], why: string | undefined): void {
  const width = Math.max(...sqlite.map((f) => f.name.length));
  const lines = [`${'p50 / p99, calls/s'.padEnd(width)}  ${'sqlite'.padEnd(28)}  postgres`];
  for (const figure of sqlite) {
    const other = postgres.find((f) => f.name === figure.name);
    lines.push(`${figure.name.padEnd(width)}  ${cell(figure, undefined).padEnd(28)}  ${cell(other, why)}`);
  }
  if (why) lines.push(`postgres ${why}`);
  process.stderr.write(`${lines.join('\n')}\n`);
}

export async function benchStores(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  const samples = samplesFlag(options.flags);
  const { url } = postgresUrl(options.flags);
  let { why } = postgresUrl(options.flags);

  const sqlite = await onEngine(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'navi-bench-stores-'));
    const stores = await openStores({ DB_PATH: join(dir, 'navi.db'), DATABASE_URL: '' });
    return { stores, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }, samples);
  let postgres: Figure[] = [];
  if (url) {
    // A server that is down or refuses keeps the SQLite figures; its row says what went wrong.
    try {
      postgres = await onEngine(async () => {
        const schema = await createTestSchema(url, 'navi_bench');
        try {
          const stores = await openStores({ DB_PATH: '', DATABASE_URL: schema.url });
          return { stores, cleanup: () => schema.drop() };
        } catch (err) {
          await schema.drop();
          throw err;
        }
      }, samples);
    } catch (err) {
      why = `failed on ${hidePassword(url)}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  sideBySide(sqlite, postgres, why);

  const rows: BenchRow[] = [];
  for (const figure of sqlite) {
    rows.push(row('sqlite', figure));
    const other = postgres.find((f) => f.name === figure.name);
    if (other) rows.push(row('postgres', other));
  }
  if (why) rows.push({ name: 'postgres: every figure', value: 0, unit: '-', note: why });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flags: Record<string, string> = {};
  const args = process.argv.slice(2);
  for (let i = 0; i + 1 < args.length; i += 2) flags[args[i]!.replace(/^--/, '')] = args[i + 1]!;
  for (const row of await benchStores({ flags })) console.log(row);
}
