/**
 * Bubblewrap sandbox for `terminal` and `code_exec` (DESIGN §9, NAVI_SANDBOX).
 *
 * The root file system is mounted read-only, the listed folders writable, Navi's own data
 * (database and its -wal/-shm, `.env`, session files, SSH hosts and keys) hidden behind empty
 * mounts, the network removed unless allowed, and the sandbox dies with Navi. Whether bwrap
 * can actually create namespaces is probed once: in some containers it is installed but
 * user namespaces are unavailable.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { naviSecretFiles } from '../fs/navi-paths.js';

export type SandboxMode = 'auto' | 'required' | 'off';

export interface BwrapProbe {
  available: boolean;
  path?: string;
  /** Why bwrap cannot be used, when it cannot. */
  reason?: string;
}

const probes = new Map<string, Promise<BwrapProbe>>();

/** Finds `bwrap` and runs a trivial sandbox once per binary; cached. */
export function probeBwrap(bwrapPath = 'bwrap'): Promise<BwrapProbe> {
  let probe = probes.get(bwrapPath);
  if (!probe) {
    probe = new Promise((done) => {
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
    probes.set(bwrapPath, probe);
  }
  return probe;
}

export type SandboxDecision =
  | { use: 'bwrap'; path: string }
  | { use: 'direct' }
  | { use: 'refuse'; message: string };

/**
 * Applies NAVI_SANDBOX: `off` runs directly; `required` refuses without a working bwrap;
 * `auto` falls back to direct with a warning (logged once per probe result).
 */
export async function decideSandbox(
  mode: SandboxMode,
  bwrapPath: string | undefined,
  log?: Logger,
): Promise<SandboxDecision> {
  if (mode === 'off') return { use: 'direct' };
  const probe = await probeBwrap(bwrapPath ?? 'bwrap');
  if (probe.available && probe.path) return { use: 'bwrap', path: probe.path };
  if (mode === 'required') {
    return {
      use: 'refuse',
      message:
        `Refused: NAVI_SANDBOX=required but the bubblewrap sandbox is unavailable (${probe.reason}). ` +
        'Install bubblewrap (apt-get install bubblewrap) or set NAVI_SANDBOX=auto or off.',
    };
  }
  if (!warned.has(bwrapPath ?? 'bwrap')) {
    warned.add(bwrapPath ?? 'bwrap');
    log?.warn(
      { reason: probe.reason },
      'sandbox unavailable; running terminal and code_exec without bubblewrap',
    );
  }
  return { use: 'direct' };
}
const warned = new Set<string>();

export interface BwrapSpec {
  /** Folders the sandboxed program may write (created by the caller). */
  writable: readonly string[];
  /** Files and folders that must not be visible inside (missing ones are skipped). */
  hidden: readonly string[];
  network: boolean;
  cwd: string;
  /** A fresh, empty /tmp inside (skip for "nothing writable but its directory"). */
  tmpfsTmp: boolean;
  env: Record<string, string>;
}

/** Arguments for `bwrap` up to and including `--`; append the command after them. */
export function bwrapArgs(spec: BwrapSpec): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  if (spec.tmpfsTmp) args.push('--tmpfs', '/tmp');
  for (const dir of unique(spec.writable)) {
    if (existsSync(dir)) args.push('--bind', dir, dir);
  }
  // Hiding comes last so it also covers data inside a writable folder.
  for (const path of unique(spec.hidden)) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (isDir) args.push('--tmpfs', path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  args.push(
    '--unshare-user-try',
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
  );
  if (!spec.network) args.push('--unshare-net');
  for (const [k, v] of Object.entries(spec.env)) args.push('--setenv', k, v);
  args.push('--chdir', spec.cwd, '--');
  return args;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => resolve(p)))];
}

/** Navi's own files, hidden from sandboxed programs. */
export function naviPrivatePaths(input: {
  dbPath: string;
  sessionFilesDir: string;
  sshHostsFile: string;
  extra?: readonly string[];
  cwd?: string;
}): string[] {
  const cwd = input.cwd ?? process.cwd();
  return [
    ...naviSecretFiles({ dbPath: input.dbPath, sshHostsFile: input.sshHostsFile, cwd }),
    resolve(cwd, input.sessionFilesDir),
    ...(input.extra ?? []).map((p) => resolve(cwd, p)),
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
