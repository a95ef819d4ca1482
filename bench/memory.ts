/**
 * Memory and compression figures for `npm run bench`: search latency at 1 000, 10 000 and
 * 100 000 facts (full-text, vectors through sqlite-vec and through the JavaScript scan, and the
 * whole hybrid search with the query embedded by the fake LLM server), and the time to compress a
 * 1 000-message context. Run alone with `node --import tsx bench/memory.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { compressContext, formatForSummary, partitionTurns } from '../src/agent/compression.js';
import { OllamaBackend } from '../src/llm/ollama.js';
import { SqliteMemoryStore } from '../src/memory/memory-store.js';
import { HybridMemorySearch } from '../src/memory/search.js';
import { createSqliteStores } from '../src/store/sqlite/index.js';
import type { StoredMessage } from '../src/store/types.js';
import { startFakeLlm } from '../test/fake-llm/index.js';
import type { BenchRow } from './types.js';

const DIMENSION = 384; // the size of small sentence-embedding models
const QUERIES = 40;
const WORDS = (
  'server backup python rust editor neovim proxmox debian fedora laptop coffee tea garden cat dog music ' +
  'piano guitar running cycling project deadline invoice family birthday travel paris tokyo kitchen recipe ' +
  'docker kubernetes router wifi printer camera photo budget bank doctor dentist school language german'
).split(' ');

/** Deterministic pseudo-random numbers, so runs compare. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function unitVector(next: () => number): Float32Array {
  const v = new Float32Array(DIMENSION);
  let norm = 0;
  for (let i = 0; i < DIMENSION; i++) {
    v[i] = next() * 2 - 1;
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMENSION; i++) v[i] = v[i]! / norm;
  return v;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

async function timed(
  runs: number,
  fn: (i: number) => Promise<unknown>,
): Promise<{ p50: number; p95: number }> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

/** Search latency (ms) at 1 000, 10 000 and 100 000 facts with synthetic text and vectors. */
export async function benchMemorySearch(sizes: number[] = [1_000, 10_000, 100_000]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const fake = await startFakeLlm({ embeddingDimension: DIMENSION });
  const backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: false,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 60_000,
  });
  try {
    for (const size of sizes) {
      const dir = mkdtempSync(join(tmpdir(), 'navi-bench-memory-'));
      const stores = createSqliteStores(join(dir, 'navi.db'));
      try {
        const next = rng(size);
        const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
        const insert = stores.db.prepare(
          `INSERT INTO memory_facts (category, key, value, created_at, updated_at, embedding, embedding_model)
           VALUES (?, ?, ?, ?, ?, ?, 'test-model')`,
        );
        const at = new Date().toISOString();
        const load = performance.now();
        stores.db.transaction(() => {
          for (let i = 0; i < size; i++) {
            const v = unitVector(next);
            const text = `${word()} ${word()} ${word()} ${word()} ${word()} number ${i}`;
            insert.run(word(), `fact_${i}`, text, at, at, Buffer.from(v.buffer));
          }
        })();
        rows.push({ name: `memory: load ${size} facts`, value: performance.now() - load, unit: 'ms' });
        const queries = Array.from({ length: QUERIES }, () => `${word()} ${word()} ${word()}`);
        const vectors = queries.map(() => unitVector(next));
        const vec = new SqliteMemoryStore(stores.db, { vectorEngine: 'sqlite-vec' });
        const scan = new SqliteMemoryStore(stores.db, { vectorEngine: 'scan' });
        const warnings: string[] = [];
        const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
        // retryAfterMs 0: a stale keep-alive connection failing once must not turn the rest into FTS-only runs.
        const hybrid = new HybridMemorySearch({ store: vec, backend, logger, retryAfterMs: 0 });
        let hybridRuns = 0;
        const cases: [string, (i: number) => Promise<unknown>][] = [
          ['full-text', (i) => vec.search(queries[i]!, 40)],
          ['vectors (sqlite-vec)', (i) => vec.nearest(vectors[i]!, 'test-model', 40)],
          ['vectors (JS scan)', (i) => scan.nearest(vectors[i]!, 'test-model', 40)],
          [
            'hybrid incl. embed call',
            async (i) => {
              if ((await hybrid.search(queries[i]!, { limit: 10 })).mode === 'hybrid') hybridRuns++;
            },
          ],
        ];
        for (const [label, fn] of cases) {
          // Fewer samples at 100 000 facts keep `npm run bench` near a minute on a small machine.
          const runs = size >= 100_000 ? 10 : QUERIES;
          const { p50, p95 } = await timed(runs, fn);
          const fellBack =
            label.startsWith('hybrid') && hybridRuns < runs
              ? `; only ${hybridRuns}/${runs} used vectors: ${warnings[0] ?? ''}`
              : '';
          rows.push({
            name: `memory search ${label} @ ${size}`,
            value: p50,
            unit: 'ms p50',
            note: `p95 ${p95.toFixed(2)} ms${fellBack}`,
          });
        }
      } finally {
        stores.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await fake.close();
  }
  return rows;
}

function longContext(messages: number): StoredMessage[] {
  const out: StoredMessage[] = [];
  const at = new Date().toISOString();
  for (let t = 0; out.length < messages; t++) {
    out.push({
      id: `u${t}`,
      role: 'user',
      content: `Question ${t}: please check the logs of service ${t}.`,
      created_at: at,
    });
    out.push({
      id: `a${t}`,
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `c${t}`,
          name: 'terminal',
          arguments: { command: `journalctl -u svc${t} -n 200`, pad: 'x'.repeat(300) },
        },
      ],
      created_at: at,
    });
    out.push({
      id: `t${t}`,
      role: 'tool',
      content: 'log line\n'.repeat(200),
      tool_call_id: `c${t}`,
      name: 'terminal',
      created_at: at,
    });
    out.push({ id: `f${t}`, role: 'assistant', content: `Service ${t} looks healthy.`, created_at: at });
  }
  return out.slice(0, messages);
}

/** Time to compress a 1 000-message context: our own work, and end to end against the fake LLM. */
export async function benchCompression(messages = 1_000): Promise<BenchRow[]> {
  const context = longContext(messages);
  const rows: BenchRow[] = [];
  const own = await timed(20, async () => {
    const { leading, turns } = partitionTurns(context);
    return formatForSummary([...leading, ...turns.slice(0, -10).flat()]);
  });
  rows.push({ name: `compression: partition + format ${messages} messages`, value: own.p50, unit: 'ms p50' });

  const fake = await startFakeLlm({
    defaultReply: { text: '- The user checked the logs of many services.', chunkSize: 1000 },
  });
  const backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: false,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 60_000,
  });
  const dir = mkdtempSync(join(tmpdir(), 'navi-bench-compress-'));
  const stores = createSqliteStores(join(dir, 'navi.db'));
  try {
    const signal = new AbortController().signal;
    const request = { context, keepRecent: 10, backend, model: 'test-model', temperature: 0.3, signal };
    const whole = await timed(10, () => compressContext(request));
    rows.push({
      name: `compression: ${messages} messages vs fake LLM`,
      value: whole.p50,
      unit: 'ms p50',
      note: 'includes the HTTP round trip',
    });

    await stores.sessions.create({ id: 's', profile_id: 'secretary' });
    await stores.sessions.append(
      's',
      context.map((message) => ({ message, display: true, context: true })),
    );
    const result = await compressContext({ ...request, context: await stores.sessions.getContext('s') });
    const start = performance.now();
    await stores.sessions.replaceContextPrefix('s', result!.firstKeptId, result!.summary);
    rows.push({
      name: `compression: apply to SQLite (${result!.removedCount} rows replaced)`,
      value: performance.now() - start,
      unit: 'ms',
    });
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
    await fake.close();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv[2] ? process.argv[2].split(',').map(Number) : undefined;
  const rows = [...(await benchMemorySearch(sizes)), ...(await benchCompression())];
  for (const r of rows)
    console.log(
      `${r.name.padEnd(60)} ${r.value.toFixed(2).padStart(10)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
}
