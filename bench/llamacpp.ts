/**
 * The embedded llamacpp backend keeps Navi responsive: a real `navi serve` child process thinks
 * with the tiny GGUF fixture (a model that never ends on its own, so it generates until the
 * window is full), while this process asks `/health` again and again. Figures: `/health`
 * latency (p50, p99) idle and while the model generates, and the model's generation speed.
 *
 * Skips (no rows, one line saying why) when the llama.cpp runtime is not installed.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { closedPortUrl } from '../test/fake-llm/index.js';
import { writeTinyGguf } from '../test/fixtures/tiny-gguf.js';
import { tempDir } from '../test/support/navi.js';
import { spawnNavi } from '../test/support/navi-process.js';
import { llamacppRuntimeDir } from '../test/support/requirements.js';
import type { BenchRow } from './types.js';

const WINDOW = 32_768;
const IDLE_PROBES = 300;
const BUSY_PROBES = 2_000;
const PROBE_GAP_MS = 5;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function probe(base: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}/health`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`/health answered ${res.status}`);
  return performance.now() - started;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function probes(base: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    latencies.push(await probe(base));
    await pause(PROBE_GAP_MS);
  }
  return latencies;
}

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function newSession(base: string): Promise<string> {
  return ((await (await post(base, '/sessions', {})).json()) as { session_id: string }).session_id;
}

/** Starts an answer, runs `during` while the model works on it, then stops it. */
async function whileAnswering<T>(base: string, during: () => Promise<T>): Promise<T> {
  const session = await newSession(base);
  const answer = post(base, `/sessions/${session}/messages`, { content: 'Tell me a long story.' });
  let result: T;
  try {
    result = await during();
  } finally {
    await post(base, `/sessions/${session}/stop`, {});
  }
  const res = await answer;
  if (res.status !== 200) throw new Error(`the message answered ${res.status}: ${await res.text()}`);
  return result;
}

/** Resolves once the llamacpp backend reports its model loaded. */
async function modelLoaded(base: string): Promise<void> {
  for (;;) {
    const status = (await (await fetch(`${base}/llm/status`)).json()) as {
      backends: { id: string; detail: string }[];
    };
    if (status.backends.some((b) => b.id === 'llamacpp' && b.detail.includes('loaded,'))) return;
    await pause(50);
  }
}

export async function benchLlamacpp(): Promise<BenchRow[]> {
  const runtime = llamacppRuntimeDir();
  if (!existsSync(join(runtime, 'node_modules', 'node-llama-cpp', 'package.json'))) {
    process.stderr.write(
      `bench: llamacpp skipped: the llama.cpp runtime is not installed in ${runtime} ` +
        `(LLAMACPP_RUNTIME_DIR=${runtime} node bin/navi.js llamacpp install)\n`,
    );
    return [];
  }
  const dir = tempDir('navi-bench-llamacpp-');
  const models = join(dir, 'data', 'models');
  mkdirSync(models, { recursive: true });
  writeTinyGguf(join(models, 'endless.gguf'), { neverEnds: true, contextLength: WINDOW });
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  const child = await spawnNavi({
    dir,
    port,
    ollamaUrl: await closedPortUrl(),
    stdio: ['ignore', 'ignore', 'inherit'],
    extra: {
      DEFAULT_LLM_BACKEND: 'llamacpp',
      LLAMACPP_RUNTIME_DIR: runtime,
      LLAMACPP_NUM_CTX: String(WINDOW),
      // One thread for a model this small: more only wait on each other (see docs/local-models.md).
      LLAMACPP_THREADS: '1',
      LLAMACPP_GPU: 'off',
    },
  });
  try {
    // Warm-up: the first answer imports the runtime and loads the model.
    await whileAnswering(base, () => modelLoaded(base));
    const idle = await probes(base, IDLE_PROBES);
    const started = performance.now();
    const busy = await whileAnswering(base, () => probes(base, BUSY_PROBES));
    const seconds = (performance.now() - started) / 1000;
    return [
      { name: '/health p50, idle', value: percentile(idle, 50), unit: 'ms', note: `${IDLE_PROBES} probes` },
      { name: '/health p99, idle', value: percentile(idle, 99), unit: 'ms' },
      {
        name: '/health p50, model generating',
        value: percentile(busy, 50),
        unit: 'ms',
        note:
          `${BUSY_PROBES} probes over ${seconds.toFixed(1)} s of one answer (its prompt: Navi's system prompt and tools); ` +
          'the tiny test model on one llama.cpp thread, Navi in its own process',
      },
      { name: '/health p99, model generating', value: percentile(busy, 99), unit: 'ms' },
    ];
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
