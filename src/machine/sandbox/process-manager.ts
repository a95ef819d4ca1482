/**
 * Programs that run in the background, beyond the call that started them: a dev server, a long
 * build, a `tail -f`. Each belongs to one owner (a session), which alone sees it; each runs as the
 * leader of its own process group through `runProcess`, so stopping it takes everything it
 * started along. Its output goes to a ring of fixed size. A cap on how many run at once holds for
 * the whole of Navi. Nothing outlives its owner or Navi: `killOwner` and `close` end whole groups.
 */
import type { ChildProcess } from 'node:child_process';
import { OutputRing, type RingRead } from './output-ring.js';
import { runProcess } from './run-process.js';

export interface ProcessManagerOptions {
  /** PROCESS_MAX_RUNNING: processes running at once, all owners together. */
  maxRunning: number;
  /** PROCESS_OUTPUT_MAX_BYTES: output kept per process (stdout and stderr together). */
  outputMaxBytes: number;
  /** Time between SIGTERM and SIGKILL when a process is killed. Default 2 s. */
  killGraceMs?: number;
  /** Exited processes remembered per owner; the oldest are forgotten first. Default 20. */
  keepFinished?: number;
  now?: () => number;
}

/** One program to start: what `ShellLauncher` planned, or any other launch. */
export interface ProcessLaunch {
  /** The command as the agent wrote it, for status and lists. */
  command: string;
  program: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  sandboxed: boolean;
  network: string;
  extraFds?: number;
  prepare?: (child: ChildProcess, signal: AbortSignal) => Promise<(() => void) | undefined>;
}

export interface ProcessInfo {
  id: string;
  command: string;
  cwd: string;
  /** The process group's id (the leader's pid). */
  pid: number;
  sandboxed: boolean;
  network: string;
  state: 'running' | 'exited';
  startedAt: number;
  endedAt?: number;
  /** Milliseconds from the start to now, or to the end once it exited. */
  runtimeMs: number;
  exitCode: number | null;
  signal: string | null;
  /** Ended by `kill`, `killOwner` or `close`. */
  killed: boolean;
  /** Why the sandbox's set-up failed (the program did not run). */
  setupError?: string;
  /** Output bytes so far, and those not read yet. */
  outputBytes: number;
  unreadBytes: number;
}

export type StartOutcome =
  | { ok: true; info: ProcessInfo }
  /** `setup`: the sandbox's set-up failed and the program never ran. */
  | { ok: false; reason: string; setup?: boolean };

export type KillOutcome =
  | { ok: true; info: ProcessInfo; alreadyExited: boolean }
  | { ok: false; reason: 'unknown' };

interface Entry {
  id: string;
  owner: string;
  launch: ProcessLaunch;
  pid: number;
  startedAt: number;
  endedAt?: number;
  exitCode: number | null;
  signal: string | null;
  killed: boolean;
  setupError?: string;
  ring: OutputRing;
  stop: AbortController;
  done: Promise<void>;
}

/** How long a kill waits for the group beyond its grace before it reports anyway. */
const KILL_WAIT_EXTRA_MS = 5000;

export class ProcessManager {
  private readonly entries = new Map<string, Entry>();
  private next = 1;
  private closed = false;
  private readonly grace: number;
  private readonly keepFinished: number;
  private readonly now: () => number;

  constructor(private readonly options: ProcessManagerOptions) {
    this.grace = options.killGraceMs ?? 2000;
    this.keepFinished = options.keepFinished ?? 20;
    this.now = options.now ?? Date.now;
  }

  /** PROCESS_MAX_RUNNING as given. */
  get maxRunning(): number {
    return this.options.maxRunning;
  }

  /** Output bytes kept per process. */
  get outputCapacity(): number {
    return this.options.outputMaxBytes;
  }

  /** Processes running now, all owners together. */
  running(): number {
    let n = 0;
    for (const entry of this.entries.values()) if (entry.endedAt === undefined) n++;
    return n;
  }

  /**
   * Starts `launch` for `owner`. Resolves once the program runs (inside the sandbox: once its
   * network is fenced in), or with the reason it may not or could not: the running cap, Navi
   * shutting down, a program that cannot be spawned, a sandbox whose set-up failed.
   */
  async start(owner: string, launch: ProcessLaunch): Promise<StartOutcome> {
    if (this.closed) return { ok: false, reason: 'Navi is shutting down; no new process is started.' };
    const running = this.running();
    if (running >= this.options.maxRunning) {
      const mine = this.list(owner).filter((p) => p.state === 'running').length;
      return {
        ok: false,
        reason:
          `Refused: ${running} background processes are already running, the most Navi allows at once ` +
          `(PROCESS_MAX_RUNNING=${this.options.maxRunning}); ${mine} of them belong to this conversation. ` +
          'Free a slot by killing one you no longer need (action "kill"; action "list" shows yours), or wait until one exits.',
      };
    }
    const id = `p${this.next++}`;
    const ring = new OutputRing(this.options.outputMaxBytes);
    const stop = new AbortController();
    let ready: () => void = () => {};
    const readyNow = new Promise<void>((resolve) => {
      ready = resolve;
    });
    let pid: number | undefined;
    let setupFailed = false;
    const prepare = launch.prepare;
    const run = runProcess({
      command: launch.program,
      args: launch.args,
      cwd: launch.cwd,
      env: launch.env,
      signal: stop.signal,
      killGraceMs: this.grace,
      // The ring keeps the output; runProcess keeps none of it.
      maxOutputBytes: 0,
      onOutput: (chunk) => ring.write(chunk),
      extraFds: launch.extraFds ?? 0,
      onSpawn: (spawned) => {
        pid = spawned;
      },
      ...(prepare
        ? {
            prepare: (child: ChildProcess, signal: AbortSignal) =>
              prepare(child, signal).then(
                (cleanup) => {
                  ready();
                  return cleanup;
                },
                (err: unknown) => {
                  setupFailed = true;
                  ready();
                  throw err;
                },
              ),
          }
        : {}),
    });
    if (!prepare) ready();
    if (pid === undefined) {
      // No pid: the spawn failed (a missing program, a bad folder); runProcess rejects with why.
      const reason = await run.then(
        () => 'it ended before it started',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      return { ok: false, reason: `Could not start ${launch.program}: ${reason}` };
    }
    const entry: Entry = {
      id,
      owner,
      launch,
      pid,
      startedAt: this.now(),
      exitCode: null,
      signal: null,
      killed: false,
      ring,
      stop,
      done: Promise.resolve(),
    };
    entry.done = run.then(
      (result) => {
        entry.exitCode = result.exitCode;
        entry.signal = result.signal;
        if (result.setupError !== undefined) entry.setupError = result.setupError;
        entry.endedAt = this.now();
        this.forgetOldFinished(owner);
      },
      (err: unknown) => {
        entry.setupError = err instanceof Error ? err.message : String(err);
        entry.endedAt = this.now();
      },
    );
    this.entries.set(id, entry);
    // The sandbox's set-up either releases the program or fails and ends it.
    await Promise.race([readyNow, entry.done]);
    if (setupFailed || entry.setupError !== undefined) {
      await entry.done;
      this.entries.delete(id);
      return { ok: false, reason: entry.setupError ?? 'the sandbox could not be set up', setup: true };
    }
    return { ok: true, info: this.info(entry) };
  }

  /** The owner's process `id`; undefined for an unknown id or another owner's process. */
  get(owner: string, id: string): ProcessInfo | undefined {
    const entry = this.entryOf(owner, id);
    return entry && this.info(entry);
  }

  /** The owner's processes, oldest first. */
  list(owner: string): ProcessInfo[] {
    return [...this.entries.values()].filter((e) => e.owner === owner).map((e) => this.info(e));
  }

  /** Output of `id` since the last read, at most `maxBytes`; undefined when the owner has no such process. */
  read(owner: string, id: string, maxBytes: number): (RingRead & { info: ProcessInfo }) | undefined {
    const entry = this.entryOf(owner, id);
    if (!entry) return undefined;
    const taken = entry.ring.read(maxBytes);
    return { ...taken, info: this.info(entry) };
  }

  /**
   * Ends the whole process group of `id` (SIGTERM, then SIGKILL after the grace) and resolves
   * once it is gone. A process that had already exited is reported as such.
   */
  async kill(owner: string, id: string): Promise<KillOutcome> {
    const entry = this.entryOf(owner, id);
    if (!entry) return { ok: false, reason: 'unknown' };
    if (entry.endedAt !== undefined) return { ok: true, info: this.info(entry), alreadyExited: true };
    await this.end(entry);
    return { ok: true, info: this.info(entry), alreadyExited: false };
  }

  /** Ends every process of `owner` (its session was deleted) and forgets them. */
  async killOwner(owner: string): Promise<void> {
    const mine = [...this.entries.values()].filter((e) => e.owner === owner);
    await Promise.all(mine.map((entry) => this.end(entry)));
    for (const entry of mine) this.entries.delete(entry.id);
  }

  /** Refuses new processes and ends every running one; resolves once all their groups are gone. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((entry) => this.end(entry)));
  }

  private async end(entry: Entry): Promise<void> {
    if (entry.endedAt === undefined) {
      entry.killed = true;
      entry.stop.abort();
    }
    // runProcess settles once the leader is gone and the group got its SIGKILL; a group that
    // does not even then is not waited for forever.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      entry.done,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.grace + KILL_WAIT_EXTRA_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  private entryOf(owner: string, id: string): Entry | undefined {
    const entry = this.entries.get(id);
    return entry && entry.owner === owner ? entry : undefined;
  }

  private forgetOldFinished(owner: string): void {
    const finished = [...this.entries.values()].filter((e) => e.owner === owner && e.endedAt !== undefined);
    for (const entry of finished.slice(0, Math.max(0, finished.length - this.keepFinished)))
      this.entries.delete(entry.id);
  }

  private info(entry: Entry): ProcessInfo {
    return {
      id: entry.id,
      command: entry.launch.command,
      cwd: entry.launch.cwd,
      pid: entry.pid,
      sandboxed: entry.launch.sandboxed,
      network: entry.launch.network,
      state: entry.endedAt === undefined ? 'running' : 'exited',
      startedAt: entry.startedAt,
      ...(entry.endedAt !== undefined ? { endedAt: entry.endedAt } : {}),
      runtimeMs: (entry.endedAt ?? this.now()) - entry.startedAt,
      exitCode: entry.exitCode,
      signal: entry.signal,
      killed: entry.killed,
      ...(entry.setupError !== undefined ? { setupError: entry.setupError } : {}),
      outputBytes: entry.ring.total,
      unreadBytes: entry.ring.unread,
    };
  }
}
