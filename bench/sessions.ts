/**
 * Long sessions (docs/performance.md#long-sessions) at 10, 1 000 and 100 000 messages: opening
 * a session reads the newest page of its display buffer (`getMessagePage`, what
 * `GET /sessions/{id}` answers), paging back reads one page before a cursor in the middle, and
 * both should cost one page whatever the length. Reading the whole session (both buffers, as
 * the export does) is kept beside them for the contrast, and appending one turn should cost what
 * the turn adds.
 *
 * The largest size is also read over HTTP from a real `navi serve` child: the first page, a page
 * from the middle, and the JSON export, with the longest `GET /health` took while the export ran,
 * which is what every other session waits meanwhile. Before that its context is compressed to
 * the last 1 000 messages, as compression keeps a long session's context within the model's
 * window.
 *
 * Flags: `--sizes 10,1000,100000` (the last one is also read over HTTP), `--reads 200` (page
 * reads per figure). Run alone with `node --import tsx bench/sessions.ts`.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { MessagePage, SessionDetail } from '../src/protocol/rest.js';
import { maskingSessionStore } from '../src/store/masking-store.js';
import { createSqliteStores } from '../src/store/sqlite/index.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../src/store/types.js';
import { SecretMasker } from '../src/util/secret-masker.js';
import { closedPortUrl } from '../test/fake-llm/index.js';
import { tempDir } from '../test/support/navi.js';
import { naviProcessEnv, spawnNavi } from '../test/support/navi-process.js';
import { percentile } from './measure.js';
import type { BenchOptions, BenchRow } from './types.js';

const APPENDS = 200;
const PAGE = 100;
const PAGE_GOAL_MS = 5;
/** The profile of the `navi serve` child (naviProcessEnv), so its routes accept the sessions. */
const PROFILE = 'plain';

function message(i: number): StoredMessage {
  return {
    id: `m${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  };
}

const entry = (i: number): BufferedMessage => ({ message: message(i), display: true, context: true });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Times `reads` calls one by one; median and p95 in ms. */
async function timed(reads: number, call: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let n = 0; n < reads; n++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return { p50: median(times), p95: percentile(times, 95) };
}

function flagNumbers(flags: Record<string, string>, name: string, fallback: number[]): number[] {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const values = raw.split(',').map(Number);
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1)) {
    throw new Error(`--${name} wants whole numbers from 1 up, separated by commas; got "${raw}"`);
  }
  return values;
}

async function fill(sessions: SessionStore, id: string, size: number): Promise<void> {
  await sessions.create({ id, profile_id: PROFILE });
  for (let start = 0; start < size; start += 5_000) {
    const batch: BufferedMessage[] = [];
    for (let i = start; i < Math.min(size, start + 5_000); i++) batch.push(entry(i));
    await sessions.append(id, batch);
  }
}

/** Store figures for one session of `size` messages; appends to it at the end. */
async function storeRows(
  sessions: SessionStore,
  id: string,
  size: number,
  reads: number,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const first = await timed(reads, () => sessions.getMessagePage(id, { limit: PAGE }));
  rows.push({
    name: `first page of a session of ${size} messages`,
    value: first.p50,
    unit: 'ms',
    note: `getMessagePage, newest ${PAGE}, median of ${reads} (p95 ${first.p95.toFixed(2)} ms)`,
    goal: { value: PAGE_GOAL_MS, direction: 'max' },
  });
  const middle = `m${Math.floor(size / 2)}`;
  const back = await timed(reads, () => sessions.getMessagePage(id, { limit: PAGE, before: middle }));
  rows.push({
    name: `page back from the middle of ${size} messages`,
    value: back.p50,
    unit: 'ms',
    note: `getMessagePage before ${middle}, median of ${reads} (p95 ${back.p95.toFixed(2)} ms)`,
    goal: { value: PAGE_GOAL_MS, direction: 'max' },
  });
  const wholeReads = size >= 100_000 ? 3 : 50;
  const whole = await timed(wholeReads, async () => {
    await sessions.getMessages(id);
    await sessions.getContext(id);
  });
  rows.push({
    name: `read a whole session of ${size} messages`,
    value: whole.p50,
    unit: 'ms',
    note: `both buffers, as the export reads them; median of ${wholeReads}`,
  });
  const started = performance.now();
  for (let n = 0; n < APPENDS; n++) await sessions.append(id, [entry(size + 2 * n), entry(size + 2 * n + 1)]);
  rows.push({
    name: `append a turn to a session of ${size} messages`,
    value: ((performance.now() - started) * 1000) / APPENDS,
    unit: 'µs',
    note: 'two messages, both buffers, one transaction',
  });
  return rows;
}

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  return res;
}

/**
 * Polls `GET /health` until stopped; answers the longest wait. The server's own event-loop
 * histogram is read at its timer's ticks and can miss one long block, which this cannot.
 */
function pollHealth(base: string): { stop(): Promise<number> } {
  let running = true;
  let longest = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await (await fetchOk(`${base}/health`)).arrayBuffer();
      longest = Math.max(longest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return longest;
    },
  };
}

/** HTTP figures for the session `id` of `size` messages, read from a `navi serve` child. */
async function httpRows(base: string, id: string, size: number, reads: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // Warm-up: JIT and SQLite's page cache, as a server that has run a while has them.
  for (let n = 0; n < 20; n++) await (await fetchOk(`${base}/sessions/${id}`)).arrayBuffer();
  const detail = (await (await fetchOk(`${base}/sessions/${id}`)).json()) as SessionDetail;
  if (detail.messages.length !== Math.min(PAGE, size) || detail.messages.at(-1)?.id === undefined) {
    throw new Error(`GET /sessions/{id} answered ${detail.messages.length} messages, not the newest ${PAGE}`);
  }
  const first = await timed(reads, async () => (await fetchOk(`${base}/sessions/${id}`)).arrayBuffer());
  rows.push({
    name: `GET /sessions/{id} of ${size} messages`,
    value: first.p50,
    unit: 'ms',
    note: `HTTP to a navi serve child, newest ${PAGE} messages, median of ${reads} (p95 ${first.p95.toFixed(2)} ms)`,
    goal: { value: PAGE_GOAL_MS, direction: 'max' },
  });
  const middle = `m${Math.floor(size / 2)}`;
  const pageUrl = `${base}/sessions/${id}/messages?before=${middle}`;
  const page = (await (await fetchOk(pageUrl)).json()) as MessagePage;
  if (page.messages.length !== Math.min(PAGE, Math.floor(size / 2))) {
    throw new Error(`the page before ${middle} held ${page.messages.length} messages`);
  }
  const back = await timed(reads, async () => (await fetchOk(pageUrl)).arrayBuffer());
  rows.push({
    name: `GET …/messages?before= the middle of ${size}`,
    value: back.p50,
    unit: 'ms',
    note: `HTTP, ${PAGE} messages before ${middle}, median of ${reads} (p95 ${back.p95.toFixed(2)} ms)`,
    goal: { value: PAGE_GOAL_MS, direction: 'max' },
  });
  const exports: number[] = [];
  const stalls: number[] = [];
  let bytes = 0;
  for (let n = 0; n < 3; n++) {
    const health = pollHealth(base);
    const started = performance.now();
    bytes = (await (await fetchOk(`${base}/sessions/${id}/export`)).arrayBuffer()).byteLength;
    exports.push(performance.now() - started);
    stalls.push(await health.stop());
  }
  rows.push({
    name: `GET /sessions/{id}/export of ${size} messages`,
    value: median(exports),
    unit: 'ms',
    note: `HTTP, JSON, ${(bytes / 1e6).toFixed(1)} MB, median of 3`,
  });
  rows.push({
    name: `longest GET /health during that export`,
    value: median(stalls),
    unit: 'ms',
    note: 'polled every 5 ms from this process; what any other request or stream waits meanwhile; median of 3',
  });
  return rows;
}

export async function benchSessions(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  const { flags } = options;
  const sizes = flagNumbers(flags, 'sizes', [10, 1_000, 100_000]);
  const [reads] = flagNumbers(flags, 'reads', [200]);
  const dir = tempDir('navi-bench-sessions-');
  const stores = createSqliteStores(join(dir, 'navi.db'));
  const rows: BenchRow[] = [];
  const ids = new Map<number, string>();
  let child: ChildProcess | undefined;
  let open = true;
  try {
    for (const size of sizes) {
      const id = randomUUID();
      ids.set(size, id);
      await fill(stores.sessions, id, size);
      rows.push(...(await storeRows(stores.sessions, id, size, reads!)));
    }
    // As Navi writes the transcript: through the masker, with three secrets known.
    const masked = maskingSessionStore(
      stores.sessions,
      new SecretMasker([
        { name: 'NAVI_API_TOKEN', value: 'navi-token-5f2b9c0e7a1d4e3f' },
        { name: 'OPENAI_API_KEY', value: 'sk-proj-0123456789abcdefghijklmnop/+=' },
        { name: 'GITHUB_TOKEN', value: 'ghp_abcdefghijklmnopqrstuvwxyz012345' },
      ]),
    );
    const size = sizes[1] ?? sizes[0]!;
    const started = performance.now();
    for (let n = 0; n < APPENDS; n++)
      await masked.append(ids.get(size)!, [entry(size * 3 + 2 * n), entry(size * 3 + 2 * n + 1)]);
    rows.push({
      name: `append a turn to a session of ${size} messages, masked`,
      value: ((performance.now() - started) * 1000) / APPENDS,
      unit: 'µs',
      note: 'as Navi writes: both messages checked for 3 secrets first',
    });
    const largest = sizes.at(-1)!;
    if (largest > 1_000) {
      const kept = `m${largest - 1_000}`;
      const summary = { ...message(-1), id: 'summary', role: 'system' as const, kind: 'summary' as const };
      await stores.sessions.replaceContextPrefix(ids.get(largest)!, kept, summary);
    }
    stores.close();
    open = false;

    const ollamaUrl = await closedPortUrl();
    const port = Number(new URL(await closedPortUrl()).port);
    const env = naviProcessEnv({ dir, port, ollamaUrl });
    child = await spawnNavi({ dir, port, ollamaUrl, stdio: ['ignore', 'ignore', 'inherit'] }, env);
    rows.push(...(await httpRows(`http://127.0.0.1:${port}`, ids.get(largest)!, largest, reads!)));
    return rows;
  } finally {
    if (open) stores.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flags: Record<string, string> = {};
  const args = process.argv.slice(2);
  for (let i = 0; i + 1 < args.length; i += 2) flags[args[i]!.replace(/^--/, '')] = args[i + 1]!;
  for (const row of await benchSessions({ flags })) console.log(row);
}
