/**
 * What the three navi-3d tools share: the settings, the session files' root, the one Xvfb, the
 * sandbox decision, the OPENSCAD_MAX_RUNNING slots, and the checks every call starts with (is
 * the program there, may it run, whose files are these).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Settings } from '../../config/settings.js';
import { FixedDir } from '../../machine/fs/fixed-dir.js';
import { findOpenscad, findXvfb, type ProgramStatus } from '../../machine/system/find-3d-programs.js';
import { type ToolRequest, toolError } from '../common/tool.js';
import { type Confinement, OpenscadSandbox } from './openscad-sandbox.js';
import { type SessionLookup, sessionOf } from './session-folder.js';
import { Slots } from './slots.js';
import { XvfbDisplay } from './xvfb.js';

export type Navi3dSettings = Pick<
  Settings,
  | 'OPENSCAD_PATH'
  | 'XVFB_PATH'
  | 'OPENSCAD_TIMEOUT_MS'
  | 'OPENSCAD_MAX_RUNNING'
  | 'SESSION_FILES_DIR'
  | 'NAVI_SANDBOX'
>;

export interface Navi3dContext {
  settings: Navi3dSettings;
  /** SESSION_FILES_DIR, resolved against Navi's working folder. */
  sessionRoot: FixedDir;
  display: XvfbDisplay;
  /** NAVI_SANDBOX applied to OpenSCAD. */
  sandbox: OpenscadSandbox;
  /** OpenSCAD processes running or waiting, across every session. */
  slots: Slots;
  /** Told each OpenSCAD process id (bwrap's, when sandboxed; tests watch and cancel runs with it). */
  onSpawn?: (pid: number) => void;
  /** Where OpenSCAD and Xvfb are (see `foundOnce`). */
  openscad: () => ProgramStatus;
  xvfb: () => ProgramStatus;
}

export interface ContextOptions {
  /** The bubblewrap program (default `bwrap` on PATH; tests name a missing one). */
  bwrapPath?: string;
  /** Where the one warning about a missing sandbox goes (default stderr). */
  warn?: (line: string) => void;
}

export function createContext(
  settings: Navi3dSettings,
  sessionFilesDir: string,
  onSpawn?: (pid: number) => void,
  options: ContextOptions = {},
): Navi3dContext {
  const xvfb = foundOnce(() => findXvfb(settings));
  return {
    settings,
    sessionRoot: new FixedDir(sessionFilesDir),
    // The Xvfb found (a relative XVFB_PATH means Navi's working folder), read when it starts.
    display: new XvfbDisplay({
      get program() {
        return xvfb().path ?? settings.XVFB_PATH;
      },
    }),
    sandbox: new OpenscadSandbox(settings.NAVI_SANDBOX, options),
    slots: new Slots(settings.OPENSCAD_MAX_RUNNING),
    ...(onSpawn ? { onSpawn } : {}),
    openscad: foundOnce(() => findOpenscad(settings)),
    xvfb,
  };
}

/**
 * A program found stays found for the server's life, so a call does not walk PATH again; a
 * missing one is looked for on each call, so installing it needs no restart.
 */
function foundOnce(find: () => ProgramStatus): () => ProgramStatus {
  let found: ProgramStatus | undefined;
  return () => {
    if (found) return found;
    const status = find();
    if (status.path) found = status;
    return status;
  };
}

/** The OpenSCAD executable, or the error result saying it is missing and how to install it. */
export function openscadOrError(context: Navi3dContext, tool: string): string | CallToolResult {
  const found = context.openscad();
  if (found.path) return found.path;
  return toolError(`${tool} cannot run: ${found.reason} lint_scad still works without it.`);
}

/** The Xvfb executable, or the error result saying it is missing and how to install it. */
export function xvfbOrError(context: Navi3dContext, tool: string): string | CallToolResult {
  const found = context.xvfb();
  if (found.path) return found.path;
  return toolError(`${tool} cannot run: ${found.reason} compile_scad still works without it.`);
}

/** How OpenSCAD runs for this call, or the error result saying why it may not (NAVI_SANDBOX=required). */
export async function confinementOrError(
  context: Navi3dContext,
  tool: string,
): Promise<Confinement | { error: CallToolResult }> {
  const decided = await context.sandbox.decide();
  if ('refused' in decided) return { error: toolError(`${tool} did not run OpenSCAD. ${decided.refused}`) };
  return decided;
}

export function sessionFor(context: Navi3dContext, request: ToolRequest | undefined): SessionLookup {
  return sessionOf(request?.meta, context.sessionRoot);
}

/** A text block, the first of most results. */
export function text(value: string): { type: 'text'; text: string } {
  return { type: 'text', text: value };
}

/**
 * The handler, with a cancelled call answered as cancelled: what a cancellation interrupts
 * (a file read, a process) throws, and that is no failure to report as one.
 */
export function cancellable<Args>(
  tool: string,
  handler: (args: Args, signal: AbortSignal, request?: ToolRequest) => Promise<CallToolResult>,
): (args: Args, signal: AbortSignal, request?: ToolRequest) => Promise<CallToolResult> {
  return async (args, signal, request) => {
    try {
      return await handler(args, signal, request);
    } catch (err) {
      if (signal.aborted) return toolError(`${tool} was cancelled.`);
      throw err;
    }
  };
}
