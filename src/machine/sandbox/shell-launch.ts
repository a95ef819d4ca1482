/**
 * How a bash command line the agent wrote gets started: the TERMINAL_ALLOWED_COMMANDS check,
 * the working folder through the path guard, the NAVI_SANDBOX decision and, inside bubblewrap,
 * the mounts and network of `terminal`. `terminal` (which waits for the command) and `process`
 * (which leaves it running in the background) both plan through here, so a command is refused,
 * confined and fenced in the same way whichever of them starts it.
 */
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { type NaviPathSettings, naviControlFolders } from '../fs/navi-paths.js';
import { type PathGuard, PathRefusedError } from '../fs/path-guard.js';
import { SshHostsFile } from '../ssh/hosts-file.js';
import { BwrapSandbox, naviPrivatePaths, safeEnv } from './bwrap.js';
import { checkCommandLine } from './command-check.js';
import { homeFolders } from './credential-paths.js';
import { type SandboxLaunch, sandboxLaunch } from './sandbox-launch.js';
import type { NetworkHelpers } from './sandbox-network.js';

/** What the sandbox needs: Navi's own files and folders stay hidden or read-only inside it. */
export type SandboxSettings = NaviPathSettings &
  Pick<Settings, 'NAVI_SANDBOX' | 'SESSION_FILES_DIR' | 'HTTP_ALLOW_PRIVATE'>;

export type ShellSettings = SandboxSettings & Pick<Settings, 'TERMINAL_ALLOWED_COMMANDS'>;

export interface ShellLauncherDeps {
  settings: ShellSettings;
  /** The working folder goes through it; the composition root passes the guard all file tools share. */
  guard: PathGuard;
  /** Probe results and warnings, shared by every sandboxed tool; a fresh one when absent. */
  sandbox?: BwrapSandbox;
  /** SSH_HOSTS_FILE, whose key files are hidden inside the sandbox; a fresh reader when absent. */
  hosts?: SshHostsFile;
  /** Replaces the search for slirp4netns, unshare, nsenter and ip (tests of a machine without them). */
  networkHelpers?: NetworkHelpers | { missing: string[] };
  /** Extra files hidden inside the sandbox (SSH keys…). */
  hiddenPaths?: readonly string[];
  bwrapPath?: string;
  bashPath?: string;
  /** The environment the command's own is picked from (never its secrets); Navi's when absent. */
  env?: NodeJS.ProcessEnv;
}

export interface ShellRequest {
  command: string;
  /** Working folder as the agent wrote it; the guard's base folder when absent. */
  cwd?: string;
  /** The profile's `network_access`. */
  networkAllowed: boolean;
  log?: Logger;
}

/** A command ready for `runProcess`, or why it may not run. */
export type ShellPlan =
  | { ok: false; reason: string }
  | {
      ok: true;
      /** What to spawn, and its arguments (bwrap's, then `bash -c <command>`). */
      program: string;
      args: string[];
      cwd: string;
      env: Record<string, string>;
      sandboxed: boolean;
      /** The sandbox's launch (network set-up, notes) when it runs inside bubblewrap. */
      launch?: SandboxLaunch;
    };

/**
 * Plans bash command lines; one instance per tool, built from that tool's dependencies (a
 * tool's own deps object fits as it is).
 */
export class ShellLauncher {
  private readonly restricted: boolean;
  private readonly sandbox: BwrapSandbox;
  private readonly hosts: SshHostsFile;

  constructor(private readonly deps: ShellLauncherDeps) {
    this.restricted = !deps.settings.TERMINAL_ALLOWED_COMMANDS.includes('*');
    this.sandbox = deps.sandbox ?? new BwrapSandbox();
    this.hosts = deps.hosts ?? new SshHostsFile(deps.settings.SSH_HOSTS_FILE);
  }

  /** The allowed programs, when TERMINAL_ALLOWED_COMMANDS restricts them. */
  allowedPrograms(): readonly string[] | undefined {
    return this.restricted ? this.deps.settings.TERMINAL_ALLOWED_COMMANDS : undefined;
  }

  /**
   * Checks `request` and plans its launch; nothing is started. Refusals (an empty or disallowed
   * command line, a working folder outside the allowed ones, NAVI_SANDBOX=required without a
   * working bwrap) come back as `ok: false` with a sentence for the model.
   */
  async plan(request: ShellRequest): Promise<ShellPlan> {
    const { settings, guard } = this.deps;
    const { command } = request;
    if (command.trim() === '')
      return { ok: false, reason: 'Parameter "command" must be a non-empty command line.' };
    const check = checkCommandLine(command, settings.TERMINAL_ALLOWED_COMMANDS);
    if (!check.ok) return { ok: false, reason: check.reason };

    let cwd: string;
    try {
      cwd = await guard.resolve(request.cwd ?? guard.baseDir);
    } catch (err) {
      if (err instanceof PathRefusedError)
        return { ok: false, reason: `Working directory refused. ${err.message}` };
      throw err;
    }

    const sandbox = await this.sandbox.decide(settings.NAVI_SANDBOX, this.deps.bwrapPath, request.log);
    if (sandbox.use === 'refuse') return { ok: false, reason: sandbox.message };
    const hostEnv = this.deps.env ?? process.env;
    const env = safeEnv(hostEnv);
    const bash = this.deps.bashPath ?? 'bash';
    if (sandbox.use !== 'bwrap')
      return { ok: true, program: bash, args: ['-c', command], cwd, env, sandboxed: false };

    const launch = sandboxLaunch({
      bwrapPath: sandbox.path,
      mounts: {
        // The allowed roots are mounted writable below; `*` shows the rest read-only.
        visible: guard.unrestricted ? 'all' : [],
        writable: [cwd, ...guard.roots],
        readOnly: naviControlFolders(settings).map((folder) => folder.path),
        // The SSH keys ssh_exec uses are Navi's secrets too.
        hidden: naviPrivatePaths(settings, [
          ...(this.deps.hiddenPaths ?? []),
          ...(await this.hosts.keyPaths()),
        ]),
        homes: homeFolders([hostEnv.HOME]),
        programs: [process.execPath],
        path: env.PATH,
        tmpfsTmp: true,
      },
      cwd,
      env,
      networkAllowed: request.networkAllowed,
      privatePolicy: settings.HTTP_ALLOW_PRIVATE,
      ...(this.deps.networkHelpers ? { helpers: this.deps.networkHelpers } : {}),
    });
    return {
      ok: true,
      program: launch.program,
      args: [...launch.args, bash, '-c', command],
      cwd,
      env,
      sandboxed: true,
      launch,
    };
  }
}
