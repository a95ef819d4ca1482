/**
 * The one way Navi runs a program: in its own process group, with an optional time limit, an
 * abort signal and capped output. On timeout, abort or (optionally) output overflow the whole
 * group is killed, so children that outlive their parent (`sleep 999 &`) go too; a program may
 * get a grace period after SIGTERM before the SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { CappedOutput } from './capped-output.js';
import { killGroup } from './process-group.js';

export { withDropNote } from './capped-output.js';

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
/** How long output still in the pipes is read after a killed leader is gone. */
const PIPE_DRAIN_MS = 200;

export interface RunProcessOptions {
  command: string;
  args: readonly string[];
  cwd?: string;
  /** The program's whole environment; Navi's own (already cleared of secrets) when absent. */
  env?: NodeJS.ProcessEnv;
  /** Kills the group when it passes; no limit when absent (then `signal` is the only stop). */
  timeoutMs?: number;
  /** Aborting kills the group; the promise still resolves, with `aborted: true`. */
  signal?: AbortSignal;
  /** Bytes kept per stream; what comes after is dropped (and counted). Default 1 MiB. */
  maxOutputBytes?: number;
  /**
   * Sees every chunk of output as it arrives, in arrival order across both streams (a caller
   * that keeps the output itself passes `maxOutputBytes: 0` so nothing is kept twice).
   */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  /** Kill the process as soon as a stream exceeds `maxOutputBytes`. */
  killOnOverflow?: boolean;
  /** Time between SIGTERM and SIGKILL when the group is stopped. Default 0: SIGKILL at once. */
  killGraceMs?: number;
  /** Written to the program's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Extra pipes handed to the program as fds 3, 4, …; the parent's ends are `child.stdio[3…]`. */
  extraFds?: number;
  /** Called once the program has a pid (the group's id; lets callers and tests watch it). */
  onSpawn?: (pid: number) => void;
  /**
   * Runs right after the spawn (bubblewrap's network set-up). It may return a cleanup, run once
   * the process is gone. When it rejects, the process group is killed and the message becomes
   * `setupError`. Its signal aborts when the process is killed or gone. The extra fds are
   * closed on Navi's side once it settles.
   */
  prepare?: (child: ChildProcess, signal: AbortSignal) => Promise<(() => void) | undefined>;
}

export interface RunProcessResult {
  stdout: string;
  stderr: string;
  /** null when the process was killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Bytes dropped from each stream beyond the cap (0 when nothing was cut). */
  stdoutDropped: number;
  stderrDropped: number;
  outputLimitHit: boolean;
  pid: number | undefined;
  /** Why `prepare` failed, when it did (the program was then killed before or as it started). */
  setupError?: string;
}

/**
 * Resolves when the process and every holder of its output pipes are gone (after a kill, once
 * the leader is gone). Rejects only when the program cannot be started at all (missing
 * executable, bad cwd), with the spawn error; a program that fails is a result.
 */
export function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  return new Promise((resolvePromise, reject) => {
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    const grace = options.killGraceMs ?? 0;
    if (options.signal?.aborted) {
      resolvePromise(notStarted());
      return;
    }
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      // stdin must not be a socket: Debian's bash sources ~/.bashrc when it is (the rshd rule).
      stdio: [
        options.stdin === undefined ? 'ignore' : 'pipe',
        'pipe',
        'pipe',
        ...Array.from({ length: options.extraFds ?? 0 }, () => 'pipe' as const),
      ],
    });
    const stdout = new CappedOutput(max);
    const stderr = new CappedOutput(max);
    let timedOut = false;
    let aborted = false;
    let outputLimitHit = false;
    let stopping = false;
    let exited = false;
    let setupError: string | undefined;
    let cleanup: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const setupStop = new AbortController();

    /** `now`: SIGKILL at once, whatever the grace (a program that must never start). */
    const stop = (now = false) => {
      setupStop.abort();
      if ((stopping && !now) || child.pid === undefined) return;
      stopping = true;
      const pid = child.pid;
      if (grace <= 0 || now) {
        if (!killGroup(pid, 'SIGKILL')) child.kill('SIGKILL');
        return;
      }
      killGroup(pid, 'SIGTERM');
      // The SIGKILL follows even after the leader exited: a child that ignores SIGTERM may
      // still be alive in the group. Unref'd so it never holds Navi open.
      setTimeout(() => killGroup(pid, 'SIGKILL'), grace).unref();
    };
    let dropTimer: NodeJS.Timeout | undefined;
    const dropPipesIfStopped = () => {
      // After a kill, a grandchild that left the group could hold the pipes open for ever. Once
      // the leader is gone, what is already in the pipes is read for a moment, then the pipes go.
      if (!stopping || !exited || dropTimer) return;
      dropTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_DRAIN_MS);
      dropTimer.unref();
    };

    const collect = (out: CappedOutput, stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      options.onOutput?.(chunk, stream);
      if (out.push(chunk)) return;
      outputLimitHit = true;
      if (options.killOnOverflow) {
        stop();
        dropPipesIfStopped();
      }
    };
    child.stdout?.on('data', collect(stdout, 'stdout'));
    child.stderr?.on('data', collect(stderr, 'stderr'));
    if (child.stdin) {
      // EPIPE when the program exits without reading its input is expected, not a failure.
      child.stdin.on('error', () => {});
      child.stdin.end(options.stdin);
    }
    if (child.pid !== undefined) options.onSpawn?.(child.pid);

    const prepared = (options.prepare ? options.prepare(child, setupStop.signal) : Promise.resolve(undefined))
      .then(
        (done) => {
          cleanup = done;
        },
        (err: unknown) => {
          setupError = err instanceof Error ? err.message : String(err);
          // Before the fds close below: bwrap takes the end of its block fd as the go-ahead,
          // so a program given a grace could start with its network not fenced in.
          stop(true);
        },
      )
      .finally(() => {
        for (const stream of child.stdio.slice(3)) stream?.destroy();
      });

    child.on('exit', () => {
      exited = true;
      // A set-up waiting on the process must not outlive it.
      setupStop.abort();
      dropPipesIfStopped();
    });

    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        stop();
        dropPipesIfStopped();
      }, options.timeoutMs);
    }
    const onAbort = () => {
      aborted = true;
      stop();
      dropPipesIfStopped();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.on('error', (err) => {
      clearTimeout(timer);
      setupStop.abort();
      options.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    // 'close' waits for the pipes: a background child that kept them open is waited for too.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(dropTimer);
      options.signal?.removeEventListener('abort', onAbort);
      setupStop.abort();
      // The leader is gone; nothing else of its group may survive it (detached grandchildren).
      killGroup(child.pid, 'SIGKILL');
      // A set-up still under way sees the abort above and settles at once.
      void prepared.then(() => {
        cleanup?.();
        resolvePromise({
          stdout: stdout.text(),
          stderr: stderr.text(),
          exitCode: code,
          signal,
          timedOut,
          aborted,
          stdoutDropped: stdout.dropped,
          stderrDropped: stderr.dropped,
          outputLimitHit,
          pid: child.pid,
          ...(setupError !== undefined ? { setupError } : {}),
        });
      });
    });
  });
}

/** The result for a run stopped before it started. */
function notStarted(): RunProcessResult {
  return {
    stdout: '',
    stderr: '',
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: true,
    stdoutDropped: 0,
    stderrDropped: 0,
    outputLimitHit: false,
    pid: undefined,
  };
}
