/**
 * One OpenSCAD run in a private temporary folder: the sources are copies there, HOME points
 * there too (so no user configuration or library folder is read), OPENSCADPATH names the copy
 * of the session's files, it runs inside bubblewrap when the sandbox is used
 * (openscad-sandbox.ts), waits for one of the OPENSCAD_MAX_RUNNING slots, and is killed, with
 * everything it started, on timeout or when the call is cancelled. Its messages are turned into
 * what the model needs: the warnings and errors with their lines, file names as the session
 * knows them, no statistics.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type RunProcessResult, runProcess } from '../../machine/sandbox/run-process.js';
import { type Confinement, sandboxedOpenscad } from './openscad-sandbox.js';
import type { Slots } from './slots.js';

/** A temporary folder for one call: `src/` holds the sources, `out/` what OpenSCAD writes. */
export interface Workspace {
  root: string;
  src: string;
  out: string;
  /** Writes `files` (paths relative to the session folder) under `src/`. */
  stage(files: ReadonlyMap<string, Buffer | string>): Promise<void>;
  remove(): Promise<void>;
}

export async function createWorkspace(): Promise<Workspace> {
  // The real path: bubblewrap mounts it at the same place, so OpenSCAD's paths are ours.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'navi-3d-')));
  const src = join(root, 'src');
  const out = join(root, 'out');
  await Promise.all([mkdir(src), mkdir(out), mkdir(join(root, 'home'))]);
  return {
    root,
    src,
    out,
    async stage(files) {
      for (const [path, data] of files) {
        const target = join(src, path);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, data, { flag: 'wx' });
      }
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

/** The OpenSCAD executable and how it runs (in bubblewrap or directly). */
export interface Runner {
  program: string;
  confinement: Confinement;
}

/** What a call says when `runOpenscad` rejects: the program could not be started at all. */
export function notStarted(program: string, err: unknown): string {
  return `OpenSCAD (${program}) could not be started: ${(err as Error).message}. Check OPENSCAD_PATH.`;
}

export interface OpenscadOptions {
  program: string;
  workspace: Workspace;
  args: readonly string[];
  /** The whole time the run may take, the wait for a slot included. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Inside bubblewrap, or directly (see OpenscadSandbox). */
  confinement: Confinement;
  /** The server's OPENSCAD_MAX_RUNNING slots; no limit without them. */
  slots?: Slots;
  /** DISPLAY and XAUTHORITY, for runs that render an image. */
  display?: { display: string; xauthority: string };
  /** Told the process id once it runs (bwrap's, when sandboxed; tests watch it). */
  onSpawn?: (pid: number) => void;
}

/** Runs OpenSCAD; rejects only when the program cannot be started at all. */
export async function runOpenscad(options: OpenscadOptions): Promise<RunProcessResult> {
  const { workspace, confinement } = options;
  const started = Date.now();
  const slot = options.slots ? await options.slots.take(options.signal, options.timeoutMs) : () => {};
  if (slot === 'aborted' || slot === 'timedOut') return notRun(slot);
  try {
    const left = options.timeoutMs - (Date.now() - started);
    if (left <= 0) return notRun('timedOut');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: join(workspace.root, 'home'),
      OPENSCADPATH: workspace.src,
      LANG: 'C.UTF-8',
    };
    if (options.display) {
      env.DISPLAY = options.display.display;
      env.XAUTHORITY = options.display.xauthority;
    }
    const launch =
      confinement.use === 'bwrap'
        ? sandboxedOpenscad(confinement.bwrapPath, {
            program: options.program,
            workspace: workspace.root,
            cwd: workspace.src,
            env,
            ...(options.display ? { display: options.display } : {}),
          })
        : { command: options.program, args: [] };
    return await runProcess({
      command: launch.command,
      args: [...launch.args, ...options.args],
      cwd: workspace.src,
      env,
      timeoutMs: left,
      signal: options.signal,
      maxOutputBytes: 256 * 1024,
      ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
    });
  } finally {
    slot();
  }
}

/** The result of a run that never started: cancelled, or out of time, while waiting for a slot. */
function notRun(why: 'aborted' | 'timedOut'): RunProcessResult {
  return {
    stdout: '',
    stderr: '',
    exitCode: null,
    signal: null,
    timedOut: why === 'timedOut',
    aborted: why === 'aborted',
    stdoutDropped: 0,
    stderrDropped: 0,
    outputLimitHit: false,
    pid: undefined,
  };
}

/** Lines OpenSCAD writes about the model (rather than about its caches and timings). */
const MESSAGE =
  /^(ERROR|WARNING|DEPRECATED|ECHO|TRACE|FONT-WARNING|EXPORT-WARNING|EXPORT-ERROR|UI-WARNING|UI-ERROR):|^Can't parse file/;
const MAX_MESSAGE_LINES = 60;
const MAX_MESSAGE_CHARS = 8000;

/**
 * OpenSCAD's warnings and errors, verbatim but for paths: the temporary folder disappears, so
 * a file reads as the session knows it (`code.scad`, `parts.scad`).
 */
export function openscadMessages(output: string, workspace: Workspace): string[] {
  const lines: string[] = [];
  let chars = 0;
  let dropped = 0;
  for (const raw of output.split(/\r?\n/)) {
    if (!MESSAGE.test(raw)) continue;
    const line = raw
      .split(`${workspace.src}/`)
      .join('')
      .split(`${workspace.out}/`)
      .join('')
      .split(workspace.root)
      .join('(temporary folder)');
    if (lines.length >= MAX_MESSAGE_LINES || chars + line.length > MAX_MESSAGE_CHARS) {
      dropped++;
      continue;
    }
    lines.push(line);
    chars += line.length;
  }
  if (dropped > 0) lines.push(`(${dropped} more message line${dropped === 1 ? '' : 's'} left out)`);
  return lines;
}

/** Whether OpenSCAD said the model has no geometry, or only 2D geometry. */
export function emptiness(output: string): 'empty' | 'not-3d' | undefined {
  if (/Current top level object is empty/.test(output)) return 'empty';
  if (/Current top level object is not a 3D object/.test(output)) return 'not-3d';
  return undefined;
}

export const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;
