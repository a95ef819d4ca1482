/**
 * Navi's footprint, measured on a real `navi serve` child process as a person starts it, with
 * the MCP servers that ship with Navi on (the default) and a fake LLM server:
 * - start-up: spawn → `/health` answers, and spawn → every shipped MCP server `ready`;
 * - RSS of the server process once settled after start, and with 1 000 idle WebSockets open to
 *   sessions (every one of them opened, is still open, and the server counts it);
 * - RSS of the whole process tree at idle (the server, the shipped MCP servers and anything
 *   they started), as a sum of RSS and as a sum of PSS (shared pages counted once);
 * - the `npm start` wrapper's own RSS (npm and its shell stay as the server's parents).
 *
 * RSS is read from /proc, so this group runs on Linux only. Flags: `--sockets N` (default
 * 1000), `--runs N` start-ups for the median (default 3), `--settle-ms N` the wait before a
 * reading (default 4000; V8 gives back young-generation pages and finishes lazy compilation
 * of the start-up code meanwhile), `--v8 "max-semi-space-size=1 …"` Node flags for Navi's process
 * (experiments). Run alone with `node --import tsx bench/footprint.ts`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { McpServerInfo, ServerMetrics } from '../src/protocol/rest.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../test/fake-llm/index.js';
import { repoRoot, tempDir } from '../test/support/navi.js';
import { naviProcessEnv } from '../test/support/navi-process.js';
import type { BenchOptions, BenchRow } from './types.js';

const MB = 1024 * 1024;
const SHIPPED = ['navi-web', 'gnexus-creds', 'navi-ui', 'navi-3d'];

/** A `/proc/<pid>/status` or `smaps_rollup` field in MB; undefined once the process is gone. */
function procMb(pid: number, file: 'status' | 'smaps_rollup', field: string): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/${file}`, 'utf8');
    const match = text.match(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm'));
    return match?.[1] ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const rssMb = (pid: number) => procMb(pid, 'status', 'VmRSS') ?? Number.NaN;

/** Every descendant of `pid` (children of children too), read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // Exited while we looked.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '?';
  }
}

/** A short name for a process of the tree, for the note. */
function label(pid: number): string {
  const command = commandOf(pid);
  const server = command.match(/src\/servers\/([\w-]+)\//)?.[1];
  if (server) return server;
  if (command.includes('esbuild')) return 'esbuild';
  return command.split(' ')[0]?.split('/').pop() ?? '?';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

interface Started {
  child: ChildProcess;
  /** The `node … navi serve` process (the child itself, or npm's grandchild). */
  serverPid: number;
  healthMs: number;
  readyMs: number;
  base: string;
  port: number;
  dir: string;
}

async function waitFor<T>(what: string, deadlineMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + deadlineMs;
  while (performance.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(20);
  }
  throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
}

/** Starts Navi (directly, or through `npm start`) and waits until the shipped servers are ready. */
async function start(fake: FakeLlm, via: 'node' | 'npm', nodeOptions?: string): Promise<Started> {
  const dir = tempDir('navi-footprint-');
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  const env = naviProcessEnv({
    dir,
    port,
    ollamaUrl: fake.ollamaUrl,
    // As `npm start` in a fresh checkout runs: the shipped MCP servers on, and the user tools and
    // context providers that come with the checkout (read, never written).
    extra: {
      MCP_SHIPPED_SERVERS: 'true',
      GNEXUS_VAULT_PATH: join(dir, 'vault.db'),
      TOOLS_DIR: join(repoRoot, 'tools'),
      CONTEXT_PROVIDERS_DIR: join(repoRoot, 'context_providers'),
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    },
  });
  const began = performance.now();
  const child =
    via === 'node'
      ? spawn(process.execPath, [join(repoRoot, 'bin/navi.js'), 'serve'], {
          cwd: dir,
          env,
          stdio: ['ignore', 'ignore', 'inherit'],
        })
      : spawn('npm', ['start', '--silent', '--prefix', repoRoot], {
          cwd: dir,
          env,
          stdio: ['ignore', 'ignore', 'inherit'],
        });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`navi exited with ${code} before it was ready`))),
  );
  exited.catch(() => {});
  const race = <T>(p: Promise<T>) => Promise.race([p, exited]);
  try {
    await race(
      waitFor('/health', 60_000, async () => ((await fetch(`${base}/health`)).ok ? true : undefined)),
    );
    const healthMs = performance.now() - began;
    await race(
      waitFor('the shipped MCP servers', 60_000, async () => {
        const body = (await (await fetch(`${base}/agents/mcp`)).json()) as { servers: McpServerInfo[] };
        const shipped = body.servers.filter((s) => SHIPPED.includes(s.name));
        return shipped.length === SHIPPED.length && shipped.every((s) => s.state === 'ready')
          ? true
          : undefined;
      }),
    );
    const readyMs = performance.now() - began;
    const serverPid =
      via === 'node'
        ? child.pid!
        : [child.pid!, ...descendants(child.pid!)].find((pid) =>
            commandOf(pid).includes('bin/navi.js serve'),
          );
    if (serverPid === undefined) throw new Error('no navi serve process under npm start');
    return { child, serverPid, healthMs, readyMs, base, port, dir };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

async function stop(started: Started): Promise<void> {
  const tree = [started.child.pid!, ...descendants(started.child.pid!)];
  const gone = new Promise((r) => started.child.once('exit', r));
  // SIGTERM to the server itself: npm would not pass it on to its grandchild in time.
  process.kill(started.serverPid, 'SIGTERM');
  if (started.serverPid !== started.child.pid) started.child.kill('SIGTERM');
  await Promise.race([gone, sleep(10_000)]);
  for (const pid of tree) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  rmSync(started.dir, { recursive: true, force: true });
}

async function metrics(base: string): Promise<ServerMetrics> {
  return (await (await fetch(`${base}/internal/metrics`)).json()) as ServerMetrics;
}

/** Opens `count` sockets over `count / perSession` sessions; each must open (an idle session sends nothing). */
async function openSockets(started: Started, count: number): Promise<WebSocket[]> {
  const perSession = 10;
  const sessions: string[] = [];
  for (let i = 0; i < Math.ceil(count / perSession); i++) {
    const res = await fetch(`${started.base}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}`);
    sessions.push(((await res.json()) as { session_id: string }).session_id);
  }
  const sockets: WebSocket[] = [];
  const batch = 100;
  for (let i = 0; i < count; i += batch) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, (_, j) => {
        const id = sessions[Math.floor((i + j) / perSession)]!;
        return new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(`ws://127.0.0.1:${started.port}/ws/sessions/${id}`);
          socket.once('open', () => resolve(socket));
          socket.once('error', reject);
          socket.once('close', (code) => reject(new Error(`socket closed with ${code} before it opened`)));
        });
      }),
    );
    sockets.push(...opened);
  }
  return sockets;
}

export async function benchFootprint(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  if (!existsSync('/proc/self/status')) throw new Error('the footprint group reads /proc: Linux only');
  const socketCount = Number(options.flags.sockets ?? 1000);
  const runs = Number(options.flags.runs ?? 3);
  const settleMs = Number(options.flags['settle-ms'] ?? 4000);
  // For experiments with V8 settings: `--v8 max-semi-space-size=1` (dashes added, as the bench's
  // own flags take every `--word` for a flag name).
  const nodeOptions = options.flags.v8
    ?.split(/\s+/)
    .filter(Boolean)
    .map((flag) => `--${flag}`)
    .join(' ');
  const fake = await startFakeLlm();
  const health: number[] = [];
  const ready: number[] = [];
  const rssStart: number[] = [];
  const heapStart: number[] = [];
  const externalStart: number[] = [];
  const treeRss: number[] = [];
  const treePss: number[] = [];
  let treeNote = '';
  let sockets = { rss: Number.NaN, perSocketKb: Number.NaN, heap: Number.NaN, external: Number.NaN };
  let wrapper = Number.NaN;
  try {
    for (let run = 0; run < runs; run++) {
      const started = await start(fake, 'node', nodeOptions);
      try {
        health.push(started.healthMs);
        ready.push(started.readyMs);
        await sleep(settleMs);
        const m = await metrics(started.base);
        rssStart.push(rssMb(started.serverPid));
        heapStart.push(m.heap_used_bytes / MB);
        externalStart.push(m.external_bytes / MB);
        const tree = [started.serverPid, ...descendants(started.serverPid)];
        treeRss.push(tree.reduce((sum, pid) => sum + rssMb(pid), 0));
        treePss.push(tree.reduce((sum, pid) => sum + (procMb(pid, 'smaps_rollup', 'Pss') ?? 0), 0));
        treeNote = tree.map((pid) => `${label(pid)} ${rssMb(pid).toFixed(0)}`).join(', ');
        if (run === runs - 1 && socketCount > 0) {
          const before = rssMb(started.serverPid);
          const open = await openSockets(started, socketCount);
          await sleep(settleMs);
          const after = await metrics(started.base);
          const stillOpen = open.filter((s) => s.readyState === WebSocket.OPEN).length;
          if (stillOpen !== socketCount) throw new Error(`${stillOpen} of ${socketCount} sockets still open`);
          if (after.websockets < socketCount) {
            throw new Error(`the server counts ${after.websockets} sockets, ${socketCount} were opened`);
          }
          const rss = rssMb(started.serverPid);
          sockets = {
            rss,
            perSocketKb: ((rss - before) * 1024) / socketCount,
            heap: after.heap_used_bytes / MB,
            external: after.external_bytes / MB,
          };
          for (const socket of open) socket.terminate();
        }
      } finally {
        await stop(started);
      }
    }
    const viaNpm = await start(fake, 'npm', nodeOptions);
    try {
      await sleep(settleMs);
      const wrappers = [viaNpm.child.pid!, ...descendants(viaNpm.child.pid!)].filter(
        (pid) => pid !== viaNpm.serverPid && !descendants(viaNpm.serverPid).includes(pid),
      );
      wrapper = wrappers.reduce((sum, pid) => sum + rssMb(pid), 0);
    } finally {
      await stop(viaNpm);
    }
  } finally {
    await fake.close();
  }
  const startNote = `median of ${runs} starts; shipped MCP servers on; after ${settleMs} ms idle`;
  return [
    { name: 'start-up: spawn → /health answers', value: median(health), unit: 'ms', note: startNote },
    {
      name: 'start-up: spawn → shipped MCP servers ready',
      value: median(ready),
      unit: 'ms',
      note: startNote,
    },
    {
      name: 'server RSS after start',
      value: median(rssStart),
      unit: 'MB',
      goal: { value: 100, direction: 'max' },
      note: `${startNote}; JS heap used ${median(heapStart).toFixed(1)} MB, external ${median(externalStart).toFixed(1)} MB`,
    },
    {
      name: `server RSS with ${socketCount} idle WebSockets`,
      value: sockets.rss,
      unit: 'MB',
      goal: { value: 150, direction: 'max' },
      note: `${socketCount / 10} sessions × 10 sockets, all open and counted by the server; ${sockets.perSocketKb.toFixed(1)} KB per socket; heap used ${sockets.heap.toFixed(1)} MB, external ${sockets.external.toFixed(1)} MB`,
    },
    {
      name: 'all of Navi at idle (process tree RSS)',
      value: median(treeRss),
      unit: 'MB',
      goal: { value: 250, direction: 'max' },
      note: `sum of RSS (MB): ${treeNote}; PSS sum (shared pages once) ${median(treePss).toFixed(0)} MB`,
    },
    {
      name: 'npm start wrapper RSS (npm + sh)',
      value: wrapper,
      unit: 'MB',
      note: 'what `npm start` adds on top of `node bin/navi.js serve`',
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flags: Record<string, string> = {};
  const args = process.argv.slice(2);
  for (let i = 0; i + 1 < args.length; i += 2) flags[args[i]!.replace(/^--/, '')] = args[i + 1]!;
  for (const r of await benchFootprint({ flags })) {
    console.log(
      `${r.name.padEnd(48)} ${r.value.toFixed(1).padStart(8)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
  }
}
