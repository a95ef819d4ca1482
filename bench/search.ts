/**
 * Search figures for `npm run bench`: `GET /search`'s store over 2 000 sessions of 50 messages
 * (100 000 messages, a few years of daily use): latency of a common word, two words, a rare word
 * and a two-letter prefix being typed; what the index adds to appending messages; and how long
 * migration 007 takes to index a database that already holds them. Run alone with
 * `node --import tsx bench/search.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/store/sqlite/database.js';
import { migrations } from '../src/store/sqlite/migrations/index.js';
import { SqliteSearchStore } from '../src/store/sqlite/search-store.js';
import { SqliteSessionStore } from '../src/store/sqlite/session-store.js';
import type { BufferedMessage } from '../src/store/types.js';
import { percentile } from './measure.js';
import type { BenchRow } from './types.js';

const SESSIONS = 2_000;
const PER_SESSION = 50;
const RUNS = 40;

/** Deterministic pseudo-random numbers, so runs compare. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A vocabulary of made-up words with a few hundred common ones, as real text has. */
function vocabulary(next: () => number, size: number): string[] {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'ti',
    'vo',
    'de',
    'ba',
    'po',
    'gri',
    'tha',
    'ek',
    'an',
  ];
  const words = new Set<string>();
  while (words.size < size) {
    const n = 1 + Math.floor(next() * 4);
    let w = '';
    for (let i = 0; i < n; i++) w += syllables[Math.floor(next() * syllables.length)];
    words.add(w);
  }
  return [...words];
}

/** CPU time (ms) this process spent since `since` (a `process.cpuUsage()` reading). */
function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/**
 * Fills `sessions` with SESSIONS × PER_SESSION messages; resolves to the time it took (ms): wall
 * clock, and CPU, which a busy machine's disk and neighbours disturb less.
 */
async function load(
  sessions: SqliteSessionStore,
  words: string[],
  seed: number,
): Promise<{ wall: number; cpu: number }> {
  const next = rng(seed);
  // Zipf-like: low indices (common words) far more often than high ones.
  const word = () => words[Math.floor(words.length * next() ** 3)] as string;
  const start = performance.now();
  const cpu = process.cpuUsage();
  for (let s = 0; s < SESSIONS; s++) {
    const id = `session-${s}`;
    await sessions.create({ id, profile_id: 'secretary', title: `${word()} ${word()} ${word()}` });
    const entries: BufferedMessage[] = [];
    for (let m = 0; m < PER_SESSION; m++) {
      const length = 8 + Math.floor(next() * 40);
      const content = Array.from({ length }, word).join(' ');
      entries.push({
        message: {
          id: `m${m}`,
          role: m % 2 === 0 ? 'user' : 'assistant',
          content,
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, s * PER_SESSION + m)).toISOString(),
        },
        display: true,
        context: true,
      });
    }
    await sessions.append(id, entries);
  }
  return { wall: performance.now() - start, cpu: cpuMs(cpu) };
}

export async function benchSearch(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'navi-bench-search-'));
  const words = vocabulary(rng(7), 5_000);
  const total = SESSIONS * PER_SESSION;
  try {
    // The same messages into a database without the index and one with it: the difference is
    // what the triggers add to every append.
    const before = openDatabase(
      join(dir, 'plain.db'),
      migrations.filter((m) => m.version < 7),
    );
    const plain = await load(new SqliteSessionStore(before), words, 1);
    before.close();
    const db = openDatabase(join(dir, 'indexed.db'));
    const indexed = await load(new SqliteSessionStore(db), words, 1);
    rows.push({
      name: `search: append ${total} messages, without index`,
      value: plain.wall,
      unit: 'ms',
      note: `CPU ${plain.cpu.toFixed(0)} ms`,
    });
    rows.push({
      name: `search: append ${total} messages, with index`,
      value: indexed.wall,
      unit: 'ms',
      note: `CPU ${indexed.cpu.toFixed(0)} ms: the index adds ${(((indexed.cpu - plain.cpu) / total) * 1000).toFixed(0)} µs of CPU per message`,
    });

    const migrateStart = performance.now();
    const migrateCpu = process.cpuUsage();
    openDatabase(join(dir, 'plain.db')).close();
    rows.push({
      name: `search: migration 007 over ${total} messages`,
      value: performance.now() - migrateStart,
      unit: 'ms',
      note: `CPU ${cpuMs(migrateCpu).toFixed(0)} ms`,
    });

    const search = new SqliteSearchStore(db);
    const next = rng(99);
    const common = () => words[Math.floor(next() * 20)] as string;
    const rare = () => words[words.length - 1 - Math.floor(next() * 500)] as string;
    // A trailing space marks a finished word; without one the last word is a prefix being typed.
    const cases: [string, () => string][] = [
      ['common word', () => `${common()} `],
      ['two words', () => `${common()} ${words[20 + Math.floor(next() * 200)]} `],
      ['rare word', () => `${rare()} `],
      ['2-letter prefix typed', () => (words[Math.floor(next() * 50)] as string).slice(0, 2)],
      [
        'word and a prefix typed',
        () => `${common()} ${(words[Math.floor(next() * 500)] as string).slice(0, 4)}`,
      ],
    ];
    for (const [label, query] of cases) {
      const samples: number[] = [];
      let found = 0;
      const cpu = process.cpuUsage();
      for (let i = 0; i < RUNS; i++) {
        const q = query();
        const start = performance.now();
        found += (await search.search(q, 20)).length;
        samples.push(performance.now() - start);
      }
      rows.push({
        name: `search: ${label} @ ${total} messages`,
        value: percentile(samples, 50),
        unit: 'ms p50',
        note: `p95 ${percentile(samples, 95).toFixed(2)} ms, CPU ${(cpuMs(cpu) / RUNS).toFixed(2)} ms per search, ${(found / RUNS).toFixed(1)} hits of 20 on average`,
      });
    }
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchSearch()) console.log(row);
}
