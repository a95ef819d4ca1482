/**
 * What a sandboxed program sees of the file system. With FS_ALLOWED_PATHS restricted it sees
 * only the system's program folders, the allowed roots, its own working folders and the
 * folders holding Navi's runtimes; with `*` the whole file system read-only. Either way the
 * credentials of the system and of every home, and Navi's own private files, are hidden
 * behind empty mounts.
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isWithin } from '../fs/path-guard.js';
import { credentialPaths } from './credential-paths.js';

/** Folders programs need to run; symbolic links among them (merged /usr) are recreated as links. */
export const SYSTEM_FOLDERS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/lib32',
  '/libx32',
  '/etc',
];

export interface MountSpec {
  /**
   * The system folders mounted read-only when `visible` is a list (default SYSTEM_FOLDERS); a
   * program that must not see `/etc` as a whole names fewer and the files it needs in `visible`.
   */
  system?: readonly string[];
  /** `all` (FS_ALLOWED_PATHS=*): `/` read-only; otherwise these roots (real paths) read-only. */
  visible: 'all' | readonly string[];
  /** Folders mounted writable (created by the caller; missing ones are skipped). */
  writable: readonly string[];
  /**
   * Folders that stay read-only even inside a writable folder: those that decide what Navi runs
   * or may do (tools, MCP configs and code, profiles, Navi's own program folder).
   */
  readOnly?: readonly string[];
  /** Navi's private files and folders, hidden wherever they would be visible. */
  hidden: readonly string[];
  /** Home folders whose credential folders are hidden (see credential-paths.ts). */
  homes: readonly string[];
  /** Programs the sandbox must be able to run (node, python): their install folders are mounted read-only. */
  programs: readonly string[];
  /** PATH of the sandboxed program: its folders outside every home are mounted read-only. */
  path?: string;
  /** A fresh, empty, writable /tmp (otherwise nothing writable but `writable`). */
  tmpfsTmp: boolean;
  /** Read-only files whose content bwrap reads from an inherited fd (the sandbox's resolv.conf). */
  files?: readonly { fd: number; dest: string }[];
}

/** bwrap arguments building the sandbox's file system, in mount order. */
export function mountArgs(spec: MountSpec): string[] {
  const args: string[] = [];
  const areas: string[] = [];
  if (spec.visible === 'all') {
    args.push('--ro-bind', '/', '/');
    areas.push('/');
  } else {
    for (const folder of spec.system ?? SYSTEM_FOLDERS) {
      const link = symlinkTarget(folder);
      if (link !== undefined) args.push('--symlink', link, folder);
      else if (isDirectory(folder)) {
        args.push('--ro-bind', folder, folder);
        areas.push(folder);
      }
    }
    for (const folder of runtimeFolders(spec.programs, spec.path, spec.homes, areas)) {
      args.push('--ro-bind', folder, folder);
      areas.push(folder);
    }
  }
  args.push('--dev', '/dev', '--proc', '/proc');
  if (spec.tmpfsTmp) args.push('--tmpfs', '/tmp');
  if (spec.visible !== 'all') {
    for (const root of unique(spec.visible)) {
      if (!exists(root)) continue;
      args.push('--ro-bind', root, root);
      areas.push(root);
    }
  }
  for (const dir of unique(spec.writable)) {
    if (!exists(dir)) continue;
    args.push('--bind', dir, dir);
    areas.push(dir);
  }
  for (const path of unique(
    (spec.readOnly ?? []).map(realOrNone).filter((p): p is string => p !== undefined),
  )) {
    if (isDirectory(path) && areas.some((area) => isWithin(area, path))) args.push('--ro-bind', path, path);
  }
  for (const file of spec.files ?? []) args.push('--ro-bind-data', String(file.fd), file.dest);
  // Hiding comes last so it also covers data inside a writable or allowed folder.
  const secrets = [...spec.hidden, ...credentialPaths(spec.homes)];
  for (const path of unique(secrets.map(realOrNone).filter((p): p is string => p !== undefined))) {
    if (!areas.some((area) => isWithin(area, path))) continue;
    args.push(...(isDirectory(path) ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path]));
  }
  // The sandbox's own root is an in-memory folder; without this the program could write to it.
  if (spec.visible !== 'all') args.push('--remount-ro', '/');
  return args;
}

/**
 * Install folders of `programs` (`/opt/node` for `/opt/node/bin/node`) and the PATH folders,
 * except those already visible, `/` itself and anything holding or inside a home folder. A
 * runtime installed inside a home (nvm, pyenv) is mounted by its own folder only.
 */
function runtimeFolders(
  programs: readonly string[],
  path: string | undefined,
  homes: readonly string[],
  visible: readonly string[],
): string[] {
  const found: string[] = [];
  const covered = (p: string) => [...visible, ...found].some((area) => isWithin(area, p));
  const holdsHome = (p: string) => p === '/' || homes.some((home) => isWithin(p, home));
  for (const program of programs) {
    const real = realOrNone(program);
    if (!real || covered(real)) continue;
    const bin = dirname(real);
    const prefix = dirname(bin);
    const folder = [prefix, bin].find((f) => !holdsHome(f));
    if (folder) found.push(folder);
  }
  for (const entry of (path ?? '').split(':')) {
    if (!isAbsolute(entry)) continue;
    const real = realOrNone(entry);
    if (!real || covered(real) || holdsHome(real) || homes.some((home) => isWithin(home, real))) continue;
    if (isDirectory(real)) found.push(real);
  }
  return found;
}

function symlinkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function realOrNone(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => resolve(p)))];
}
