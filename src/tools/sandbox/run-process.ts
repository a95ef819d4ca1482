/**
 * Runs a program in its own process group with a time limit, an abort signal and capped
 * output. On timeout, abort or (optionally) output overflow the whole group is killed with
 * SIGKILL, so children that outlive their parent (`sleep 999 &`) go too.
 */
import { spawn } from 'node:child_process';

export interface RunProcessOptions {
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes kept per stream; what comes after is dropped (and counted). */
  maxOutputBytes: number;
  /** Kill the process as soon as a stream exceeds `maxOutputBytes`. */
  killOnOverflow?: boolean;
  stdin?: string;
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
}

/** Resolves when the process and every holder of its output pipes are gone; never rejects for the program's failure. */
export function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      // stdin must not be a socket: Debian's bash sources ~/.bashrc when it is (the rshd rule).
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out = {
      stdout: [] as Buffer[],
      stderr: [] as Buffer[],
      kept: { stdout: 0, stderr: 0 },
      dropped: { stdout: 0, stderr: 0 },
    };
    let timedOut = false;
    let aborted = false;
    let outputLimitHit = false;
    let killed = false;

    const killGroup = () => {
      if (killed || child.pid === undefined) return;
      killed = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }
    };

    const collect = (name: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = options.maxOutputBytes - out.kept[name];
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        out[name].push(part);
        out.kept[name] += part.length;
      }
      if (chunk.length > room) {
        out.dropped[name] += chunk.length - Math.max(0, room);
        outputLimitHit = true;
        if (options.killOnOverflow) killGroup();
      }
    };
    child.stdout?.on('data', collect('stdout'));
    child.stderr?.on('data', collect('stderr'));
    if (child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(options.stdin);
    }

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    child.on('error', (err) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    // 'close' waits for the pipes: a background child that kept them open is waited for too.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // The leader is gone; make sure nothing else of its group survives (detached grandchildren).
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // group already empty
        }
      }
      resolvePromise({
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
        exitCode: code,
        signal,
        timedOut,
        aborted,
        stdoutDropped: out.dropped.stdout,
        stderrDropped: out.dropped.stderr,
        outputLimitHit,
      });
    });
  });
}

/** Appends a note about dropped bytes to a captured stream. */
export function withDropNote(text: string, dropped: number): string {
  return dropped > 0 ? `${text}\n[… ${dropped} more bytes not shown]` : text;
}
