/**
 * Acting on one name inside an already opened directory, never on a path the kernel walks
 * again. A path checked and then used leaves a window in which a folder on the way can be
 * swapped for a symbolic link; acting beneath an opened directory closes it, because the
 * directory stays the same object whatever happens to the names above it.
 *
 * Node has no openat(2). On Linux, `/proc/self/fd/<fd>/<name>` is resolved by the kernel through
 * the descriptor's link to the very directory that was opened, then looks up `name` in it; so
 * every function here touches exactly one component below an opened directory. Where that is
 * not available (no /proc/self/fd, other systems) everything here refuses instead of racing.
 */

import type { Stats } from 'node:fs';
import { closeSync, constants, type Dirent, openSync, statSync } from 'node:fs';
import {
  type FileHandle,
  link,
  lstat,
  mkdir,
  open,
  opendir,
  readlink,
  rename,
  rmdir,
  statfs,
  symlink,
  unlink,
} from 'node:fs/promises';

/** A path was refused: outside the allowed folders, protected, or not safely reachable. */
export class PathRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefusedError';
  }
}

export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
/** statfs type of procfs. */
export const PROC_SUPER_MAGIC = 0x9fa0;

let available: boolean | undefined;

/** True when this system can act beneath an opened directory (Linux with /proc mounted). */
export function beneathAvailable(): boolean {
  if (available !== undefined) return available;
  available = false;
  if (process.platform !== 'linux' || O_NOFOLLOW === 0 || O_DIRECTORY === 0) return available;
  try {
    const fd = openSync('/', constants.O_RDONLY | O_DIRECTORY);
    try {
      available = statSync(`/proc/self/fd/${fd}/.`).ino === statSync('/').ino;
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /proc: stays unavailable.
  }
  return available;
}

/** Throws a clear refusal where file access cannot be made race-free. */
export function assertBeneathAvailable(): void {
  if (!beneathAvailable()) {
    throw new PathRefusedError(
      'File tools are disabled here: they need Linux with /proc mounted (/proc/self/fd) to act on ' +
        'files without a race that could reach outside the allowed folders. Use the terminal instead.',
    );
  }
}

/** The path naming `name` inside the opened directory `dir`; `name` is one component. */
export function at(dir: FileHandle, name: string): string {
  if (name === '' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new PathRefusedError(`"${name}" is not a single file name.`);
  }
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** The opened directory itself, as a path the kernel resolves to that very directory. */
export function self(dir: FileHandle): string {
  return `/proc/self/fd/${dir.fd}`;
}

/** Opens a directory entry as a directory; a symbolic link fails (ENOTDIR), never followed. */
export function openDirAt(dir: FileHandle, name: string): Promise<FileHandle> {
  return open(at(dir, name), constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

/**
 * Opens a file entry; a symbolic link fails (ELOOP, or EEXIST with O_EXCL). O_NONBLOCK keeps a
 * named pipe from hanging the open; it changes nothing for regular files.
 */
export function openFileAt(dir: FileHandle, name: string, flags: number, mode = 0o644): Promise<FileHandle> {
  return open(at(dir, name), flags | O_NOFOLLOW | O_NONBLOCK, mode);
}

export function lstatAt(dir: FileHandle, name: string): Promise<Stats> {
  return lstat(at(dir, name));
}

/** lstat, or undefined when the entry does not exist. */
export async function lstatIfAny(dir: FileHandle, name: string): Promise<Stats | undefined> {
  try {
    return await lstat(at(dir, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The target of a symbolic link entry; throws EINVAL when the entry is not a link. */
export function readlinkAt(dir: FileHandle, name: string): Promise<string> {
  return readlink(at(dir, name));
}

export async function mkdirAt(dir: FileHandle, name: string, mode = 0o755): Promise<void> {
  await mkdir(at(dir, name), mode);
}

export function unlinkAt(dir: FileHandle, name: string): Promise<void> {
  return unlink(at(dir, name));
}

export function rmdirAt(dir: FileHandle, name: string): Promise<void> {
  return rmdir(at(dir, name));
}

/** Creates a symbolic link entry (its target is stored as text, never followed here). */
export function symlinkAt(target: string, dir: FileHandle, name: string): Promise<void> {
  return symlink(target, at(dir, name));
}

/** rename(2) of one entry between two opened directories; the entries themselves, never links' targets. */
export function renameAt(fromDir: FileHandle, from: string, toDir: FileHandle, to: string): Promise<void> {
  return rename(at(fromDir, from), at(toDir, to));
}

/** A second name for a file entry; fails with EEXIST when `to` is taken (link(2) never follows). */
export function linkAt(fromDir: FileHandle, from: string, toDir: FileHandle, to: string): Promise<void> {
  return link(at(fromDir, from), at(toDir, to));
}

/** The entries of an opened directory, sorted by name, read until `max` (then `truncated`). */
export async function listDir(
  dir: FileHandle,
  max = Number.POSITIVE_INFINITY,
): Promise<{ entries: Dirent[]; truncated: boolean }> {
  const entries: Dirent[] = [];
  let truncated = false;
  const handle = await opendir(self(dir));
  try {
    for (let e = await handle.read(); e !== null; e = await handle.read()) {
      if (entries.length >= max) {
        truncated = true;
        break;
      }
      entries.push(e);
    }
  } finally {
    await handle.close();
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, truncated };
}

/** statfs type of the opened directory's file system. */
export async function fsTypeOf(dir: FileHandle): Promise<number> {
  return Number((await statfs(self(dir))).type);
}

/** The error code of a failed system call, if any. */
export function codeOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** Closes a handle, ignoring a failure (the handle is finished with either way). */
export async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  await handle?.close().catch(() => {});
}
