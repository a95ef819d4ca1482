/**
 * OpenSCAD inside bubblewrap, following NAVI_SANDBOX as `terminal` and `code_exec` do. navi-3d
 * checks every file the code names before OpenSCAD runs, but that check rests on its reader
 * reading the code as OpenSCAD does; the sandbox is the wall behind it. Inside, OpenSCAD sees
 * the system's program folders, the fonts, the call's temporary folder (its only writable
 * place) and, to draw a picture, the virtual screen's socket and cookie: no home, no session
 * folder, no `/etc` beyond the fonts, no network, no other process.
 */
import { realpathSync } from 'node:fs';
import type { Settings } from '../../config/settings.js';
import { isWithin } from '../../machine/fs/path-guard.js';
import { BwrapSandbox, bwrapArgs } from '../../machine/sandbox/bwrap.js';
import type { Display } from './xvfb.js';

/** How one OpenSCAD run is started: inside the working bwrap, or directly. */
export type Confinement = { use: 'bwrap'; bwrapPath: string } | { use: 'direct' };

/**
 * Program and library folders, without `/etc`: it holds the machine's accounts, hosts and
 * configuration, none of which OpenSCAD needs.
 */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];
/** What OpenSCAD reads outside them: fonts for text() and their cache, the linker's cache. */
const SYSTEM_FILES = ['/etc/fonts', '/var/cache/fontconfig', '/etc/ld.so.cache', '/etc/alternatives'];

/** Applies NAVI_SANDBOX once per call; the probe of bwrap runs once per server. */
export class OpenscadSandbox {
  private readonly bwrap = new BwrapSandbox();
  private warned = false;

  constructor(
    private readonly mode: Settings['NAVI_SANDBOX'],
    private readonly options: { bwrapPath?: string; warn?: (line: string) => void } = {},
  ) {}

  /** The confinement to run under, or the sentence saying why OpenSCAD may not run. */
  async decide(): Promise<Confinement | { refused: string }> {
    const decision = await this.bwrap.decide(this.mode, this.options.bwrapPath ?? 'bwrap');
    if (decision.use === 'bwrap') return { use: 'bwrap', bwrapPath: decision.path };
    if (decision.use === 'refuse') return { refused: decision.message };
    if (this.mode === 'auto' && !this.warned) {
      this.warned = true;
      const probe = await this.bwrap.probe(this.options.bwrapPath ?? 'bwrap');
      (this.options.warn ?? ((line) => process.stderr.write(`${line}\n`)))(
        `navi-3d: the bubblewrap sandbox is unavailable (${probe.reason}); OpenSCAD runs without it. Install bubblewrap, or set NAVI_SANDBOX=off to silence this.`,
      );
    }
    return { use: 'direct' };
  }
}

export interface SandboxedRun {
  /** The OpenSCAD executable (its real path is what runs inside). */
  program: string;
  /** The call's temporary folder: the only place OpenSCAD may write. */
  workspace: string;
  cwd: string;
  env: Record<string, string>;
  display?: Display;
}

/** What to spawn for `run` inside bwrap: bwrap, its arguments, then OpenSCAD's path. */
export function sandboxedOpenscad(bwrapPath: string, run: SandboxedRun): { command: string; args: string[] } {
  const program = realpathSync(run.program);
  const visible = [...SYSTEM_FILES];
  // An OpenSCAD outside the system's folders (or a stand-in) is shown as its one file, never
  // its folder, which could be the session files' parent or a home.
  if (!SYSTEM.some((folder) => isWithin(folder, program))) visible.push(program);
  if (run.display) visible.push(...displayFiles(run.display));
  const args = bwrapArgs({
    mounts: {
      system: SYSTEM,
      visible,
      writable: [run.workspace],
      hidden: [],
      homes: [],
      programs: [],
      tmpfsTmp: true,
    },
    network: 'none',
    // No terminal to protect (runProcess starts bwrap in a session of its own), and in bwrap's
    // process group OpenSCAD dies with the group's kill as well as with bwrap.
    newSession: false,
    cwd: run.cwd,
    env: run.env,
  });
  return { command: bwrapPath, args: [...args, program] };
}

/**
 * The Xvfb display's unix socket and the cookie file. The socket Xvfb also keeps in the
 * abstract namespace belongs to the host's network namespace, out of the sandbox's reach, so
 * X clients fall back to the socket file.
 */
function displayFiles(display: Display): string[] {
  const number = /^:(\d+)(?:\.\d+)?$/.exec(display.display)?.[1];
  return [...(number === undefined ? [] : [`/tmp/.X11-unix/X${number}`]), display.xauthority];
}
