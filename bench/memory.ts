/**
 * Memory and compression figures for `npm run bench`: at 1 000, 10 000 and 100 000 facts, the time
 * to load them (text and vectors, each in one transaction), full-text search, vector search
 * (binary codes then exact re-ranking) with its recall@10 against the exact brute force, and the
 * whole hybrid search with the query embedded by the fake LLM server; then the time to compress a
 * 1 000-message context. Flags: `--sizes 1000,10000`, `--dimension 384`, `--queries 20`.
 * Run alone with `node --import tsx bench/memory.ts [sizes]`.
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
import { clusteredEmbeddings, seededRandom } from '../src/memory/test-support.js';
import { createSqliteStores } from '../src/store/sqlite/index.js';
import type { StoredMessage } from '../src/store/types.js';
import { startFakeLlm } from '../test/fake-llm/index.js';
import { percentile } from './measure.js';
import type { BenchOptions, BenchRow } from './types.js';

/** nomic-embed-text's size, the embedding model most often pulled with Ollama. */
const DIMENSION = 768;
const QUERIES = 20;
const LOAD_BATCH = 5000;
const WORDS = (
  'server backup python rust editor neovim proxmox debian fedora laptop coffee tea garden cat dog music ' +
  'piano guitar running cycling project deadline invoice family birthday travel paris tokyo kitchen recipe ' +
  'docker kubernetes router wifi printer camera photo budget bank doctor dentist school language german'
).split(' ');

const FTS_GOAL = { value: 5, direction: 'max' } as const;
const VECTOR_GOAL = { value: 25, direction: 'max' } as const;
const RECALL_GOAL = { value: 0.95, direction: 'min' } as const;
const HYBRID_GOAL = { value: 40, direction: 'max' } as const;

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

function numberFlag(options: BenchOptions, name: string, fallback: number): number {
  const raw = options.flags[name];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
}

/**
 * Memory search figures at each size: synthetic facts (five words of a 45-word vocabulary, so a
 * query word is in one fact of eight: a hard case for full text) with clustered embeddings
 * (`clusteredEmbeddings`, not uniform noise).
 */
export async function benchMemorySearch(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  const sizes = (options.flags.sizes ?? '1000,10000,100000')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  if (sizes.length === 0)
    throw new Error(`--sizes takes fact counts such as 1000,10000, not "${options.flags.sizes}"`);
  const dimension = numberFlag(options, 'dimension', DIMENSION);
  const queries = numberFlag(options, 'queries', QUERIES);
  const rows: BenchRow[] = [];
  const fake = await startFakeLlm({ embeddingDimension: dimension });
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
        const next = seededRandom(size);
        const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
        const embedding = clusteredEmbeddings(dimension, size);
        const store = new SqliteMemoryStore(stores.db, { vectorEngine: 'sqlite-vec' });
        // Each batch's vectors are made before the clock starts: an embedding model would make them.
        let loadMs = 0;
        for (let first = 0; first < size; first += LOAD_BATCH) {
          const batch = Array.from({ length: Math.min(LOAD_BATCH, size - first) }, (_, j) => ({
            fact: {
              category: word(),
              key: `fact_${first + j}`,
              value: `${word()} ${word()} ${word()} ${word()} ${word()} number ${first + j}`,
            },
            vector: embedding(),
          }));
          const start = performance.now();
          const saved = await store.upsertMany(batch.map((b) => b.fact));
          await store.setEmbeddings(
            saved.map((r, j) => ({ id: r.fact.id, model: 'test-model', vector: batch[j]!.vector })),
          );
          loadMs += performance.now() - start;
        }
        rows.push({
          name: `memory: load ${size} facts (text + vectors)`,
          value: loadMs,
          unit: 'ms',
          note: `upsertMany + setEmbeddings, ${LOAD_BATCH} facts per transaction`,
        });

        const words = Array.from({ length: queries }, () => `${word()} ${word()} ${word()}`);
        const vectors = Array.from({ length: queries }, () => embedding());
        const start = performance.now();
        await store.nearest(vectors[0]!, 'test-model', 10);
        rows.push({
          name: `memory: first vector search @ ${size} (reads the codes)`,
          value: performance.now() - start,
          unit: 'ms',
        });

        const fts = await timed(queries, (i) => store.search(words[i]!, 40));
        rows.push(p50Row(`memory search full-text @ ${size}`, fts, FTS_GOAL));
        const vec = await timed(queries, (i) => store.nearest(vectors[i]!, 'test-model', 10));
        rows.push(p50Row(`memory search vectors @ ${size}`, vec, VECTOR_GOAL));
        const exact: number[][] = [];
        const brute = await timed(queries, async (i) => {
          exact[i] = (await store.nearestExact(vectors[i]!, 'test-model', 10)).map((h) => h.id);
        });
        rows.push(p50Row(`memory search vectors, exact brute force @ ${size}`, brute));
        let found = 0;
        for (const [i, vector] of vectors.entries()) {
          const ids = (await store.nearest(vector, 'test-model', 10)).map((h) => h.id);
          found += ids.filter((id) => exact[i]!.includes(id)).length;
        }
        rows.push({
          name: `memory search vectors recall@10 @ ${size}`,
          value: found / (queries * 10),
          unit: 'ratio',
          note: `${queries} queries against the exact float result, ${dimension} dimensions, clustered`,
          goal: RECALL_GOAL,
        });

        const embed = await timed(queries, (i) => backend.embed!([words[i]!], { model: 'test-model' }));
        rows.push(p50Row(`memory: embed call to the fake LLM @ ${size}`, embed));
        const warnings: string[] = [];
        const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
        // retryAfterMs 0: a stale keep-alive connection failing once must not turn the rest into FTS-only runs.
        const hybrid = new HybridMemorySearch({ store, backend, logger, retryAfterMs: 0 });
        let hybridRuns = 0;
        const whole = await timed(queries, async (i) => {
          if ((await hybrid.search(words[i]!, { limit: 10 })).mode === 'hybrid') hybridRuns++;
        });
        const fellBack =
          hybridRuns < queries ? `; only ${hybridRuns}/${queries} used vectors: ${warnings[0] ?? ''}` : '';
        rows.push(p50Row(`memory search hybrid incl. embed call @ ${size}`, whole, HYBRID_GOAL, fellBack));
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

function p50Row(
  name: string,
  { p50, p95 }: { p50: number; p95: number },
  goal?: BenchRow['goal'],
  extra = '',
): BenchRow {
  return {
    name,
    value: p50,
    unit: 'ms p50',
    note: `p95 ${p95.toFixed(2)} ms${extra}`,
    ...(goal ? { goal } : {}),
  };
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
  const flags: Record<string, string> = process.argv[2] ? { sizes: process.argv[2] } : {};
  const rows = [...(await benchMemorySearch({ flags })), ...(await benchCompression())];
  for (const r of rows)
    console.log(
      `${r.name.padEnd(60)} ${r.value.toFixed(2).padStart(10)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
}
