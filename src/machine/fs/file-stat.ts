/**
 * What `stat` tells about one entry: its type, size, permissions and times, in words a model
 * reads and in fields a client can use. Only the entry's own metadata; nothing it points to.
 */
import type { Stats } from 'node:fs';

export type EntryType =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'fifo'
  | 'socket'
  | 'block device'
  | 'character device';

export interface EntryInfo {
  path: string;
  type: EntryType;
  size: number;
  /** Permission bits in octal, e.g. `0644` (set-id and sticky bits included when set). */
  mode: string;
  /** The same as `ls -l` writes them, e.g. `rw-r--r--`. */
  permissions: string;
  modified: string;
  changed: string;
  accessed: string;
  /** For a symbolic link: its target, as written in the link. */
  link_target?: string;
}

/** The type of the entry `stats` describes (from an lstat, so a link is a link). */
export function entryType(stats: Stats): EntryType {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isBlockDevice()) return 'block device';
  return 'character device';
}

/** The entry's metadata as `stat` reports it. */
export function entryInfo(path: string, stats: Stats, linkTarget?: string): EntryInfo {
  return {
    path,
    type: entryType(stats),
    size: stats.size,
    mode: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
    permissions: permissionString(stats.mode),
    modified: stats.mtime.toISOString(),
    changed: stats.ctime.toISOString(),
    accessed: stats.atime.toISOString(),
    ...(linkTarget !== undefined ? { link_target: linkTarget } : {}),
  };
}

/** `rwxr-x---` from the mode bits, with `s`/`t` where set-id and sticky bits are set. */
export function permissionString(mode: number): string {
  const triple = (shift: number, special: boolean, letter: string) => {
    const bits = (mode >> shift) & 7;
    const exec = bits & 1;
    const x = special ? (exec ? letter : letter.toUpperCase()) : exec ? 'x' : '-';
    return `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${x}`;
  };
  return (
    triple(6, (mode & 0o4000) !== 0, 's') +
    triple(3, (mode & 0o2000) !== 0, 's') +
    triple(0, (mode & 0o1000) !== 0, 't')
  );
}
