/**
 * Bubblewrap sandbox for `terminal` and `code_exec` (NAVI_SANDBOX).
 *
 * The program sees only what sandbox-mounts.ts mounts (credentials and Navi's own data hidden),
 * always has a network namespace of its own, never the host's (outbound access, when allowed,
 * comes from sandbox-network.ts), holds no capabilities, and dies with Navi. Whether bwrap can actually
 * create namespaces is probed once per Navi (`BwrapSandbox`): in some containers it is installed
 * but user namespaces are unavailable.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { type NaviSecretFileSettings, naviSecretFiles } from '../fs/navi-paths.js';
import { type MountSpec, mountArgs } from './sandbox-mounts.js';

export type SandboxMode = 'auto' | 'required' | 'off';

export interface BwrapProbe {
  available: boolean;
  path?: string;
  /** Why bwrap cannot be used, when it cannot. */
  reason?: string;
}

/** Finds `bwrap` and runs a trivial sandbox with it; not cached (see `BwrapSandbox`). */
export function probeBwrap(bwrapPath = 'bwrap'): Promise<BwrapProbe> {
  return new Promise((done) => {
    execFile(
      bwrapPath,
      [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--unshare-all',
        '--die-with-parent',
        '--new-session',
        'true',
      ],
      { timeout: 10_000 },
      (err, _stdout, stderr) => {
        if (!err) return done({ available: true, path: bwrapPath });
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return done({ available: false, reason: `"${bwrapPath}" is not installed` });
        done({
          available: false,
          path: bwrapPath,
          reason: `bwrap cannot create a sandbox here: ${String(stderr).trim() || err.message}`,
        });
      },
    );
  });
}

export type SandboxDecision =
  | { use: 'bwrap'; path: string }
  | { use: 'direct' }
  | { use: 'refuse'; message: string };

/**
 * What this Navi knows of its bubblewrap: each binary is probed once (a probe starts a
 * sandbox) and an unavailable one is warned about once. One instance is shared by terminal and
 * code_exec, made by the composition root.
 */
export class BwrapSandbox {
  private readonly probes = new Map<string, Promise<BwrapProbe>>();
  private readonly warned = new Set<string>();

  /** The probe of `bwrapPath`, run on first use. */
  probe(bwrapPath = 'bwrap'): Promise<BwrapProbe> {
    let probe = this.probes.get(bwrapPath);
    if (!probe) {
      probe = probeBwrap(bwrapPath);
      this.probes.set(bwrapPath, probe);
    }
    return probe;
  }

  /**
   * Applies NAVI_SANDBOX: `off` runs directly; `required` refuses without a working bwrap;
   * `auto` falls back to direct with a warning (logged once per binary).
   */
  async decide(mode: SandboxMode, bwrapPath = 'bwrap', log?: Logger): Promise<SandboxDecision> {
    if (mode === 'off') return { use: 'direct' };
    const probe = await this.probe(bwrapPath);
    if (probe.available && probe.path) return { use: 'bwrap', path: probe.path };
    if (mode === 'required') {
      return {
        use: 'refuse',
        message:
          `Refused: NAVI_SANDBOX=required but the bubblewrap sandbox is unavailable (${probe.reason}). ` +
          'Install bubblewrap (apt-get install bubblewrap) or set NAVI_SANDBOX=auto or off.',
      };
    }
    if (!this.warned.has(bwrapPath)) {
      this.warned.add(bwrapPath);
      log?.warn(
        { reason: probe.reason },
        'sandbox unavailable; running terminal and code_exec without bubblewrap',
      );
    }
    return { use: 'direct' };
  }
}

export interface BwrapSpec {
  /** What the program sees of the file system (see sandbox-mounts.ts). */
  mounts: MountSpec;
  /**
   * `none`: bwrap gives the sandbox a network namespace with nothing but its own loopback.
   * `held`: bwrap runs inside a user and network namespace made for it (`unshare --user
   * --map-root-user --net`, see sandbox-launch.ts), writes to fd 3 once started and waits for a
   * byte on fd 4 before starting the program, so a user-mode network can be attached first.
   */
  network: 'none' | 'held';
  cwd: string;
  env: Record<string, string>;
  /**
   * Start the program in a session of its own (default), so it cannot push input into a
   * terminal. A caller whose program has no terminal anyway may keep it in bwrap's process
   * group instead, so that killing the group reaches it too, not only --die-with-parent.
   */
  newSession?: boolean;
}

/** Fds bwrap reads and writes in `held` network mode. */
export const INFO_FD = 3;
export const BLOCK_FD = 4;

/** Arguments for `bwrap` up to and including `--`; append the command after them. */
export function bwrapArgs(spec: BwrapSpec): string[] {
  const args = mountArgs(spec.mounts);
  if (spec.network === 'held') {
    // bwrap is "root" in the namespace made for it; the program runs as Navi's own user again,
    // one user namespace further in, where it has no power over the network namespace.
    const uid = String(process.getuid?.() ?? 0);
    const gid = String(process.getgid?.() ?? 0);
    args.push('--unshare-user', '--uid', uid, '--gid', gid);
  } else {
    // Never the host's network: not even its loopback, where Navi's own API listens.
    args.push('--unshare-user-try', '--unshare-net');
  }
  args.push(
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // Run as root, bwrap would keep every capability; the routes that fence the network in must
    // not be removable from inside.
    '--cap-drop',
    'ALL',
    '--die-with-parent',
  );
  if (spec.newSession !== false) args.push('--new-session');
  args.push('--clearenv');
  if (spec.network === 'held') args.push('--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD));
  for (const [k, v] of Object.entries(spec.env)) args.push('--setenv', k, v);
  args.push('--chdir', spec.cwd, '--');
  return args;
}

/** Navi's own files, hidden from sandboxed programs; `extra`: more, such as SSH keys. */
export function naviPrivatePaths(
  settings: NaviSecretFileSettings & Pick<Settings, 'SESSION_FILES_DIR'>,
  extra: readonly string[] = [],
  cwd = process.cwd(),
): string[] {
  return [
    ...naviSecretFiles(settings, cwd),
    resolve(cwd, settings.SESSION_FILES_DIR),
    ...extra.map((p) => resolve(cwd, p)),
  ];
}

/** Environment for sandboxed and direct runs: only harmless variables, never Navi's secrets. */
export function safeEnv(
  source: NodeJS.ProcessEnv,
  extra: Record<string, string> = {},
): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TERM'];
  const env: Record<string, string> = {};
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value !== undefined && (keep.includes(key) || key.startsWith('LC_'))) env[key] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TERM = 'dumb';
  // bash skips the rc files it would otherwise source when it believes sshd started it.
  env.SHLVL = '1';
  return { ...env, ...extra };
}
