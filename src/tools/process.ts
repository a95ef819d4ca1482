/**
 * Subprocesses for tools. A tool that starts a program must not leave it running when the call
 * is stopped or times out, and a program may start children of its own (a shell pipeline, a
 * build tool). So every program runs detached, as the leader of its own process group, and
 * aborting kills the whole group: SIGTERM first, SIGKILL after a grace period.
 */
import { spawn } from 'node:child_process';

export interface RunProcessOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the program's stdin, which is then closed. */
  input?: string;
  /** Aborting kills the process group; the promise still resolves (with `aborted: true`). */
  signal?: AbortSignal;
  /** Own time limit, on top of `signal`; kills the group when it passes. */
  timeoutMs?: number;
  /** Bytes kept per stream; the rest is dropped and `truncated` is set. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL. Default 2000 ms. */
  killGraceMs?: number;
  /** Called once the program has a pid (lets callers and tests see the group leader). */
  onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  /** Exit code, or null when the program died of a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Set when `timeoutMs` passed. */
  timedOut: boolean;
  /** Set when `signal` was aborted. */
  aborted: boolean;
  truncated: boolean;
  pid: number | undefined;
  /** Set when the program could not be started at all (missing executable, bad cwd). */
  spawnError?: string;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const DEFAULT_GRACE_MS = 2000;

/** Sends `sig` to the whole group led by `pid`; a group that is already gone is not an error. */
export function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group has already exited.
  }
}

/**
 * Runs `command` with `args` (no shell) and resolves when it has exited. Never rejects: a
 * program that cannot start resolves with `spawnError`.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: RunProcessOptions = {},
): Promise<ProcessResult> {
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const grace = options.killGraceMs ?? DEFAULT_GRACE_MS;
  return new Promise<ProcessResult>((resolve) => {
    const out = new Capture(max);
    const err = new Capture(max);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let limitTimer: NodeJS.Timeout | undefined;

    if (options.signal?.aborted) {
      resolve(emptyResult({ aborted: true }));
      return;
    }
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });

    const finish = (result: ProcessResult) => {
      if (settled) return;
      settled = true;
      if (limitTimer) clearTimeout(limitTimer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };

    const terminate = () => {
      if (child.pid === undefined) return;
      const pid = child.pid;
      killGroup(pid, 'SIGTERM');
      // The SIGKILL follows even after the leader exited: a child that ignores SIGTERM may
      // still be alive in the group. Unref'd so it never holds the process open.
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), grace);
      killTimer.unref();
    };
    function onAbort() {
      aborted = true;
      terminate();
    }

    child.on('error', (e) => {
      finish({ ...emptyResult({ aborted, timedOut }), spawnError: e.message, pid: child.pid });
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined) {
      limitTimer = setTimeout(() => {
        timedOut = true;
        terminate();
      }, options.timeoutMs);
    }

    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    // EPIPE when the program exits without reading its input is expected, not a failure.
    child.stdin.on('error', () => {});
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();

    const result = (code: number | null, sig: NodeJS.Signals | null): ProcessResult => ({
      exitCode: code,
      signal: sig,
      stdout: out.text(),
      stderr: err.text(),
      timedOut,
      aborted,
      truncated: out.truncated || err.truncated,
      pid: child.pid,
    });
    child.on('exit', (code, sig) => {
      // After a kill, a grandchild that escaped the group could hold the pipes open forever;
      // do not wait for them to close.
      if (aborted || timedOut) {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(result(code, sig));
      }
    });
    child.on('close', (code, sig) => finish(result(code, sig)));
  });
}

function emptyResult(flags: { aborted?: boolean; timedOut?: boolean }): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: flags.timedOut ?? false,
    aborted: flags.aborted ?? false,
    truncated: false,
    pid: undefined,
  };
}

/** Keeps the first `max` bytes of a stream. */
class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    const room = this.max - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept !== chunk) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
