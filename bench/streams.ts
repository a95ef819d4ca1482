/**
 * Many sessions streaming at once at reading speed, measured end to end: a real `navi serve`
 * child, a fake LLM in a child process of its own sending one token per chunk at `--rate`
 * tokens/s to each of `--streams` sessions, and one WebSocket client per session in this
 * process. `npm run bench -- streams` runs 20 and then 200 streams at 50 tokens/s;
 * `--streams 500 --rate 20 --seconds 30` picks one size. `--profile <dir>` makes the Navi child
 * write a CPU profile there (node --cpu-prof) when it exits.
 *
 * Figures, over a steady window (from every client having seen its answer start to the first
 * answer ending): Navi CPU per relayed token (read from /proc of the child, so neither the fake
 * LLM nor the clients count), the event-loop delay p99 of the child (`GET /internal/metrics`,
 * reset at the start of the window) and the latency p99 of `GET /health` polled meanwhile.
 * Every run is also checked: `seq` exactly 1, 2, 3…, the deltas joined equal the answer the
 * fake sent, and `stream_end` arrived carrying that same answer.
 *
 * The fake LLM runs in its own process because at 200 streams its 10 000 paced chunks a second
 * would otherwise share this process's event loop with the 200 clients and slow both.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { ServerEvent } from '../src/protocol/events.js';
import type { ServerMetrics } from '../src/protocol/rest.js';
import { closedPortUrl, startFakeLlm } from '../test/fake-llm/index.js';
import { tempDir } from '../test/support/navi.js';
import { spawnNavi } from '../test/support/navi-process.js';
import { cpuMs, percentile } from './measure.js';
import type { BenchOptions, BenchRow } from './types.js';

const TOKEN_CHARS = 4;
const CPU_GOAL_US = 30;
const DELAY_GOAL_MS = 50;
// Each poll costs Navi a request's CPU, counted in the figure: a few a second are enough.
const HEALTH_POLL_MS = 200;

/**
 * The answer of every run: `tokens` distinct four-character tokens, so a lost, doubled or
 * swapped delta changes the joined text.
 */
export function pacedAnswer(tokens: number): string {
  let text = '';
  for (let i = 0; i < tokens; i++) text += `${i.toString(36).padStart(TOKEN_CHARS - 1, '0')} `;
  return text;
}

interface Stream {
  socket: WebSocket;
  /** Characters of answer received so far. */
  chars: number;
  text: string;
  seqs: number[];
  end?: string;
  started: Promise<void>;
  done: Promise<void>;
}

function openStream(url: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    let onStart: () => void = () => {};
    let onDone: () => void = () => {};
    const stream: Stream = {
      socket,
      chars: 0,
      text: '',
      seqs: [],
      started: new Promise<void>((r) => {
        onStart = r;
      }),
      done: new Promise<void>((r) => {
        onDone = r;
      }),
    };
    socket.on('message', (data: Buffer) => {
      const event = JSON.parse(data.toString()) as ServerEvent;
      if (event.run_id === undefined) return;
      stream.seqs.push(event.seq ?? -1);
      if (event.type === 'stream_delta') {
        stream.text += event.delta;
        stream.chars += event.delta.length;
        onStart();
      } else if (event.type === 'stream_end' || event.type === 'stream_stopped' || event.type === 'error') {
        stream.end = event.type === 'stream_end' ? event.content : `(${event.type})`;
        onStart();
        onDone();
      }
    });
    socket.once('open', () => resolve(stream));
    socket.once('error', reject);
  });
}

/** Problems of one run's events, empty when it arrived whole and in order. */
function problems(stream: Stream, answer: string): string[] {
  const out: string[] = [];
  const badSeq = stream.seqs.findIndex((seq, i) => seq !== i + 1);
  if (badSeq >= 0) out.push(`seq ${stream.seqs[badSeq]} at position ${badSeq + 1}`);
  if (stream.text !== answer)
    out.push(`deltas joined differ from the answer (${stream.text.length}/${answer.length} chars)`);
  if (stream.end === undefined) out.push('no stream_end');
  else if (stream.end !== answer) out.push(`ended with ${stream.end.slice(0, 40)}`);
  return out;
}

/** The fake LLM in a child process; resolves with its URL. */
function startPacedLlm(answer: string, rate: number): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['paced-llm', String(rate), answer], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('message', (url) => resolve({ url: String(url), child }));
    child.once('exit', (code) => reject(new Error(`the fake LLM child exited with ${code}`)));
  });
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

interface RoundResult {
  cpuPerTokenUs: number;
  loopDelayP99Ms: number;
  healthP99Ms: number;
  tokens: number;
  windowS: number;
  broken: string[];
}

async function round(base: string, pid: number, streams: number, answer: string): Promise<RoundResult> {
  const ids = await Promise.all(
    Array.from({ length: streams }, () =>
      json<{ session_id: string }>(`${base}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
    ),
  );
  const wsBase = base.replace('http', 'ws');
  const clients = await Promise.all(ids.map((s) => openStream(`${wsBase}/ws/sessions/${s.session_id}`)));
  for (const c of clients) c.socket.send(JSON.stringify({ type: 'message', content: 'Tell me a story.' }));
  await Promise.all(clients.map((c) => c.started));

  // The steady window: every answer is streaming; it closes when the first one ends.
  await json<ServerMetrics>(`${base}/internal/metrics?reset=1`);
  const charsBefore = clients.reduce((n, c) => n + c.chars, 0);
  const cpuBefore = cpuMs(pid);
  const t0 = performance.now();
  let windowOpen = true;
  let charsAfter = 0;
  let cpuAfter = 0;
  let t1 = 0;
  const firstEnd = Promise.race(clients.map((c) => c.done)).then(() => {
    cpuAfter = cpuMs(pid);
    t1 = performance.now();
    charsAfter = clients.reduce((n, c) => n + c.chars, 0);
    windowOpen = false;
  });
  const health: number[] = [];
  const poll = (async () => {
    while (windowOpen) {
      const start = performance.now();
      await fetch(`${base}/health`).then((r) => r.arrayBuffer());
      if (windowOpen) health.push(performance.now() - start);
      await new Promise((r) => setTimeout(r, HEALTH_POLL_MS));
    }
  })();
  await firstEnd;
  const metrics = await json<ServerMetrics>(`${base}/internal/metrics`);
  await poll;
  await Promise.all(clients.map((c) => c.done));
  const broken = clients.flatMap((c, i) => problems(c, answer).map((p) => `stream ${i + 1}: ${p}`));
  for (const c of clients) c.socket.close();
  const tokens = (charsAfter - charsBefore) / TOKEN_CHARS;
  return {
    cpuPerTokenUs: tokens > 0 ? ((cpuAfter - cpuBefore) * 1000) / tokens : Number.NaN,
    loopDelayP99Ms: metrics.event_loop_delay_ms.p99,
    healthP99Ms: percentile(health, 99),
    tokens,
    windowS: (t1 - t0) / 1000,
    broken,
  };
}

function positive(flags: Record<string, string>, name: string, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} wants a positive number, got "${raw}"`);
  return value;
}

export async function benchStreams(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  const { flags } = options;
  const rate = positive(flags, 'rate', 50);
  const seconds = positive(flags, 'seconds', 12);
  const sizes = flags.streams ? [Math.round(positive(flags, 'streams', 20))] : [20, 200];
  // Startup of many runs takes a few seconds; the answer outlasts it by `seconds`.
  const answer = pacedAnswer(Math.round(rate * (seconds + 3)));
  const llm = await startPacedLlm(answer, rate);
  const dir = tempDir('navi-bench-streams-');
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  // --cpu-prof goes on the command line: Node refuses it in NODE_OPTIONS. The profile is written
  // into the folder when the child exits on SIGTERM.
  const nodeArgs = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${flags.profile}`] : [];
  const child = await spawnNavi({
    dir,
    port,
    ollamaUrl: llm.url,
    nodeArgs,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const rows: BenchRow[] = [];
  try {
    const pid = child.pid!;
    await round(base, pid, 2, answer); // warm-up: JIT, SQLite pages, first-run costs
    for (const streams of sizes) {
      const r = await round(base, pid, streams, answer);
      const label = `${streams} streams at ${rate} tokens/s`;
      const note = `${r.tokens.toFixed(0)} tokens in a ${r.windowS.toFixed(1)} s window`;
      rows.push({
        name: `Navi CPU per token, ${label}`,
        value: r.cpuPerTokenUs,
        unit: 'µs/token',
        note: `${note}; Navi process CPU only`,
        goal: { value: CPU_GOAL_US, direction: 'max' },
      });
      rows.push({
        name: `event-loop delay p99, ${label}`,
        value: r.loopDelayP99Ms,
        unit: 'ms',
        ...(streams >= 200 ? { goal: { value: DELAY_GOAL_MS, direction: 'max' as const } } : {}),
      });
      rows.push({ name: `/health latency p99, ${label}`, value: r.healthP99Ms, unit: 'ms' });
      // Below the offered rate, Navi (or this machine) did not keep up: the answers stretched out.
      rows.push({
        name: `tokens relayed per second, ${label}`,
        value: r.tokens / r.windowS,
        unit: 'tokens/s',
        note: `offered ${streams * rate} tokens/s`,
      });
      rows.push({
        name: `runs lost, doubled or out of order, ${label}`,
        value: new Set(r.broken.map((b) => b.split(':')[0])).size,
        unit: 'runs',
        goal: { value: 0, direction: 'max' },
        ...(r.broken.length > 0 ? { note: r.broken.slice(0, 3).join('; ') } : {}),
      });
    }
    return rows;
  } finally {
    // A child that already died (a crash under load) would never emit 'exit' again.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited; // a CPU profile is written as the child exits
    }
    llm.child.kill('SIGTERM');
    // The database of every round, left in /tmp otherwise (as bench turn removes its own).
    rmSync(dir, { recursive: true, force: true });
  }
}

async function servePacedLlm(rate: number, answer: string): Promise<void> {
  const fake = await startFakeLlm({
    defaultReply: { text: answer, chunkSize: TOKEN_CHARS, delayMs: 1000 / rate },
  });
  process.send?.(fake.url);
  process.once('SIGTERM', () => void fake.close().then(() => process.exit(0)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === 'paced-llm') await servePacedLlm(Number(process.argv[3]), process.argv[4] ?? '');
  else for (const row of await benchStreams({ flags: {} })) console.log(row);
}
