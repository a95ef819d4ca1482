/**
 * File writes the vault cannot afford to lose or to leave half done (its key file, backups): a
 * new file is flushed before it is closed, a replacement is written whole beside the target and
 * renamed over it, and the folder is flushed so the rename survives a power cut.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Writes `content` to a new file (mode 0600; fails if `path` exists) and flushes it to disk. */
export function writeNewFile(path: string, content: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes the folder of `path`, so a file created or renamed there stays after a crash. */
export function syncFolder(path: string): void {
  try {
    const fd = openSync(dirname(path), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a folder; the rename itself has happened.
  }
}

/** A name beside `path` that no other process or call picks. */
export function tempName(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Replaces (or creates) `path` with `content`, mode 0600, through a temporary file and a
 * rename: readers see the old content or the new, never part of it. Its folder must exist.
 */
export function replaceFile(path: string, content: string): void {
  const temp = tempName(path);
  try {
    writeNewFile(temp, content);
    renameSync(temp, path);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {
      // Never created.
    }
    throw err;
  }
  syncFolder(path);
}
