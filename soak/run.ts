/**
 * `npm run soak`: Navi left running under mixed traffic, watched for leaks. A real `navi serve`
 * child (a real port, a data folder in a temp dir) answers a fake LLM, while traffic.ts plays a
 * few people using it. Every few seconds it reads `GET /internal/metrics`; every sample period
 * (a minute by default) it prints one line. At the end it prints the summary (report.ts) and
 * exits 1 when the heap grows more than 5 MB an hour after warm-up, open files grow, or anything
 * unexpected happened.
 *
 *   npm run soak                      one hour
 *   npm run soak -- --quick           three minutes, a sample every 15 s
 *   npm run soak -- --minutes 10      --seconds 20, --sample-seconds 5, --warmup-minutes 2,
 *                                     --users 4, --sessions 6, --json <file> (the summary),
 *                                     --profile <dir> (the server's CPU profile),
 *                                     --heap-snapshots <dir> (one at each idle point)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { webBuildStatus } from '../src/cli/web-build.js';
import type { ServerMetrics } from '../src/protocol/rest.js';
import { closedPortUrl, startFakeLlm } from '../test/fake-llm/index.js';
import { repoRoot, tempDir } from '../test/support/navi.js';
import { naviProcessEnv, spawnNavi } from '../test/support/navi-process.js';
import { soakReply } from './fake-model.js';
import { fdKinds } from './fds.js';
import { formatSample, formatSummary, type IdlePoint, type Sample, sampleOf, summarize } from './report.js';
import { Tally } from './tally.js';
import { Traffic } from './traffic.js';

interface Options {
  seconds: number;
  sampleSeconds: number;
  warmupSeconds: number;
  users: number;
  sessions: number;
  json?: string;
  /** Folder for a CPU profile of the server (`node --cpu-prof`), written when it stops. */
  profile?: string;
  /** Folder for a heap snapshot of the server at each idle point. */
  heapSnapshots?: string;
}

const READ_EVERY_MS = 5_000;

function usage(problem: string): never {
  console.error(
    `soak: ${problem}\nusage: npm run soak -- [--quick | --minutes N | --seconds N] [--sample-seconds N] ` +
      '[--warmup-minutes N] [--users N] [--sessions N] [--json FILE] [--profile DIR] [--heap-snapshots DIR]',
  );
  process.exit(2);
}

function parseOptions(args: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) usage(`unexpected argument "${arg}"`);
    const next = args[i + 1];
    if (arg === '--quick') flags.set('quick', 'true');
    else if (next === undefined || next.startsWith('--')) usage(`${arg} needs a value`);
    else {
      flags.set(arg.slice(2), next);
      i++;
    }
  }
  const number = (name: string, fallback: number, min: number): number => {
    const raw = flags.get(name);
    flags.delete(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) usage(`--${name} must be a number of at least ${min}, not "${raw}"`);
    return n;
  };
  const quick = flags.delete('quick');
  const json = flags.get('json');
  const profile = flags.get('profile');
  const heapSnapshots = flags.get('heap-snapshots');
  flags.delete('heap-snapshots');
  flags.delete('json');
  flags.delete('profile');
  let seconds = quick ? 180 : 3600;
  if (flags.has('minutes')) seconds = number('minutes', 60, 0.1) * 60;
  if (flags.has('seconds')) seconds = number('seconds', 60, 5);
  const sampleSeconds = number('sample-seconds', quick ? 15 : seconds < 600 ? 10 : 60, 1);
  const warmupSeconds = number('warmup-minutes', Math.min(5, seconds / 60 / 5), 0) * 60;
  const users = number('users', 4, 1);
  const sessions = number('sessions', 6, 1);
  if (flags.size > 0) usage(`unknown option(s): ${[...flags.keys()].map((k) => `--${k}`).join(', ')}`);
  if (sessions < users) usage('--sessions must be at least --users: each user needs a session of its own');
  // Absolute: the server runs in the soak's temp folder (removed at the end), not in this one.
  return {
    seconds,
    sampleSeconds,
    warmupSeconds,
    users,
    sessions,
    ...(json ? { json: resolve(json) } : {}),
    ...(profile ? { profile: resolve(profile) } : {}),
    ...(heapSnapshots ? { heapSnapshots: resolve(heapSnapshots) } : {}),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Has node write a heap snapshot of `pid` into `dir` and waits until the file is complete. Taking
 * it collects all garbage first, so the heap read right after is the live heap.
 */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    // The file is written in one pass and closed at the end; two equal sizes in a row mean done.
    const size = statSync(join(dir, file)).size;
    await sleep(1000);
    if (size > 0 && statSync(join(dir, file)).size === size) {
      console.log(`soak: heap snapshot ${join(dir, file)}`);
      return;
    }
  }
  throw new Error(`no heap snapshot appeared in ${dir} within 5 minutes`);
}

/** Whether bubblewrap works here, so the sandboxed `terminal` runs `echo` without asking. */
function sandboxWorks(): boolean {
  return (
    spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', 'true'], { stdio: 'ignore' }).status === 0
  );
}

/**
 * `navi serve` builds a missing or stale web client in its own process before it listens, and
 * the build's modules stay in its heap for good; built here first, in a process of its own, the
 * soak measures the server as a deployment with a built client runs it.
 */
async function buildWebClient(): Promise<void> {
  const status = await webBuildStatus(repoRoot);
  if (!status.stale) return;
  console.log(`soak: building the web client first (${status.reason})`);
  const built = spawnSync('npm', ['run', 'build:web'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) throw new Error('npm run build:web failed; run it to see why');
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  // Made now, not found missing at the first idle point after the warm-up's minutes of traffic.
  for (const folder of [options.profile, options.heapSnapshots])
    if (folder) mkdirSync(folder, { recursive: true });
  await buildWebClient();
  const tally = new Tally();
  const dir = tempDir('navi-soak-');
  const profiles = join(dir, 'profiles');
  const workDir = join(dir, 'work');
  mkdirSync(profiles, { recursive: true });
  mkdirSync(workDir, { recursive: true });
  // Autonomous, so the tool and recall turns never wait for an approval nobody gives.
  writeFileSync(
    join(profiles, 'soak.json'),
    JSON.stringify({
      id: 'soak',
      name: 'Soak',
      system_prompt: 'You are the soak profile.',
      enabled_tools: ['*'],
      planning_enabled: false,
      autonomy: 'autonomous',
      max_iterations: 5,
    }),
  );
  const fake = await startFakeLlm({ defaultReply: soakReply });
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  const env = naviProcessEnv({
    dir,
    port,
    ollamaUrl: fake.ollamaUrl,
    extra: {
      PROFILES_DIR: profiles,
      DEFAULT_PROFILE: 'soak',
      LOG_LEVEL: 'WARN',
    },
  });
  const child = await spawnNavi(
    {
      dir,
      port,
      ollamaUrl: fake.ollamaUrl,
      stdio: ['ignore', 'ignore', 'pipe'],
      nodeArgs: [
        ...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${options.profile}`] : []),
        // Written on a signal, by node itself: the server carries no switch of its own for it.
        ...(options.heapSnapshots
          ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${options.heapSnapshots}`]
          : []),
      ],
    },
    env,
  ).catch(async (err: unknown) => {
    // A server that does not start leaves nothing behind either.
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) tally.error(`navi exited by itself (${code ?? signal})`);
  });
  // The server logs warnings and errors as JSON lines; an error is an unexpected failure.
  createInterface({ input: child.stderr! }).on('line', (line) => {
    let entry: { level?: number | string; msg?: string; err?: { message?: string } } = {};
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      // not a log line: a stack trace of a crash, say
    }
    const level = typeof entry.level === 'number' ? entry.level : String(entry.level ?? '').toUpperCase();
    if (level === 'ERROR' || level === 'FATAL' || (typeof level === 'number' && level >= 50) || !entry.msg)
      tally.error(`server log: ${line.slice(0, 300)}`);
  });

  const metrics = async (reset = false): Promise<ServerMetrics> =>
    (await (await fetch(`${base}/internal/metrics${reset ? '?reset=1' : ''}`)).json()) as ServerMetrics;

  const shell = sandboxWorks();
  const recallDelaySeconds: [number, number] =
    options.seconds < 300 ? [2, Math.max(3, options.seconds / 4)] : [10, 180];
  const traffic = new Traffic({
    base,
    workDir,
    shell,
    recallDelaySeconds,
    sessions: options.sessions,
    users: options.users,
    tally,
  });
  console.log(
    `soak: navi pid ${child.pid} on ${base}, ${options.users} users on ${options.sessions} sessions, ` +
      `${(options.seconds / 60).toFixed(1)} minutes, warm-up ${(options.warmupSeconds / 60).toFixed(1)}, ` +
      `tool turns ${shell ? 'with' : 'without'} the sandboxed echo`,
  );

  const started = Date.now();
  const minute = () => (Date.now() - started) / 60_000;
  /** Traffic paused, runs ended, idle connections closed, one socket per session: the reading. */
  const idle = async (): Promise<IdlePoint> => {
    await traffic.pause();
    for (let i = 0; i < 60 && (await metrics()).active_runs > 0; i++) await sleep(1000);
    await sleep(5000);
    if (options.heapSnapshots) await heapSnapshot(child.pid!, options.heapSnapshots);
    const m = await metrics();
    return {
      minute: minute(),
      heapMb: m.heap_used_bytes / 2 ** 20,
      rssMb: m.rss_bytes / 2 ** 20,
      fds: m.open_fds,
      fdKinds: fdKinds(child.pid!, port, Number(new URL(fake.url).port)),
    };
  };

  await metrics(true);
  await traffic.start();
  const samples: Sample[] = [];
  let warm: IdlePoint | undefined;
  let heapLow = Number.POSITIVE_INFINITY;
  let nextSample = started + options.sampleSeconds * 1000;
  let counted = tally.snapshot();
  let end = started + options.seconds * 1000;
  try {
    while (Date.now() < end && child.exitCode === null) {
      await sleep(Math.max(0, Math.min(READ_EVERY_MS, nextSample - Date.now(), end - Date.now())));
      fake.requests.splice(0); // the fake records every request; an hour of them is the driver's leak
      // Warm once every kind of traffic ran once: what opens a file for good on first use has.
      if (!warm && Date.now() - started >= options.warmupSeconds * 1000 && traffic.toured) {
        const pausedAt = Date.now();
        warm = await idle();
        end += Date.now() - pausedAt; // the run is so long of traffic; the pause does not count
        console.log(`soak: idle after warm-up: heap ${warm.heapMb.toFixed(1)} MB, fds ${warm.fds}`);
        await traffic.resume();
        heapLow = Number.POSITIVE_INFINITY;
        nextSample = Date.now() + options.sampleSeconds * 1000;
        await metrics(true);
        continue;
      }
      const sampling = Date.now() >= nextSample;
      const m = await metrics(sampling);
      heapLow = Math.min(heapLow, m.heap_used_bytes);
      if (!sampling) continue;
      const sample = sampleOf(minute(), m, heapLow);
      samples.push(sample);
      const now = tally.snapshot();
      const done = Object.fromEntries(
        Object.entries(now).map(([k, n]) => [k, n - counted[k as keyof typeof now]]),
      );
      counted = now;
      console.log(formatSample(sample, done, tally.errors));
      heapLow = Number.POSITIVE_INFINITY;
      nextSample += options.sampleSeconds * 1000;
    }
    const last = await idle();
    const summary = summarize(samples, warm?.minute ?? 0, options.seconds / 60, warm ?? last, last, tally);
    console.log(formatSummary(summary));
    if (options.json) writeFileSync(options.json, JSON.stringify({ ...summary, shell }, null, 2));
    return summary.failures.length === 0 ? 0 : 1;
  } finally {
    stopping = true;
    await traffic.close().catch(() => {});
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
