/**
 * Recursive delete and copy built only from single-component steps below opened directories
 * (see beneath.ts): a folder swapped for a symbolic link in the middle of the work is removed
 * or copied as the link it has become, never followed.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  closeQuietly,
  codeOf,
  fsTypeOf,
  listDir,
  lstatAt,
  lstatIfAny,
  mkdirAt,
  openDirAt,
  openFileAt,
  PathRefusedError,
  PROC_SUPER_MAGIC,
  readlinkAt,
  rmdirAt,
  symlinkAt,
  unlinkAt,
} from './beneath.js';

/** Deeper trees are refused: each level holds a descriptor open. */
const MAX_DEPTH = 128;

function tooDeep(): PathRefusedError {
  return new PathRefusedError(`The folder tree is more than ${MAX_DEPTH} levels deep; refusing to walk it.`);
}

/** Deletes `name` inside `dir`: a file or link is unlinked, a folder emptied and removed. */
export async function removeTree(
  dir: FileHandle,
  name: string,
  signal?: AbortSignal,
  depth = 0,
  attempt = 0,
): Promise<void> {
  signal?.throwIfAborted();
  if (depth > MAX_DEPTH) throw tooDeep();
  // The entry changes kind under our feet only while something else is changing it.
  if (attempt > 8) throw new PathRefusedError(`"${name}" kept changing while being deleted; try again.`);
  const again = () => removeTree(dir, name, signal, depth, attempt + 1);
  const info = await lstatIfAny(dir, name);
  if (!info) return;
  if (!info.isDirectory()) {
    try {
      await unlinkAt(dir, name);
    } catch (err) {
      if (codeOf(err) === 'EISDIR') return again();
      if (codeOf(err) !== 'ENOENT') throw err;
    }
    return;
  }
  let sub: FileHandle;
  try {
    sub = await openDirAt(dir, name);
  } catch (err) {
    // ENOTDIR: it became a link or file since the lstat; removing that removes only the entry.
    if (codeOf(err) === 'ENOTDIR') return again();
    if (codeOf(err) === 'ENOENT') return;
    throw err;
  }
  try {
    const { entries } = await listDir(sub);
    for (const entry of entries) await removeTree(sub, entry.name, signal, depth + 1);
  } finally {
    await sub.close();
  }
  try {
    await rmdirAt(dir, name);
  } catch (err) {
    if (codeOf(err) === 'ENOTDIR') return again();
    if (codeOf(err) !== 'ENOENT') throw err;
  }
}

/** Streams every byte of `from` into `to` from their current offsets. */
export async function copyHandle(from: FileHandle, to: FileHandle, signal?: AbortSignal): Promise<void> {
  const buf = Buffer.alloc(1 << 20);
  for (;;) {
    signal?.throwIfAborted();
    const { bytesRead } = await from.read(buf, 0, buf.length, null);
    if (bytesRead === 0) return;
    await to.write(buf, 0, bytesRead);
  }
}

export interface CopyOutcome {
  files: number;
  /** Entries that are neither file, folder nor link (pipes, sockets, devices): not copied. */
  skipped: number;
}

/**
 * Copies entry `from` of `fromDir` to entry `to` of `toDir`: files byte for byte, folders
 * recursively, links as links (their target text, not what they point to). Without
 * `overwrite`, an existing destination entry stops the copy with EEXIST.
 */
export async function copyTree(
  fromDir: FileHandle,
  from: string,
  toDir: FileHandle,
  to: string,
  options: { overwrite: boolean; signal?: AbortSignal },
  outcome: CopyOutcome = { files: 0, skipped: 0 },
  depth = 0,
): Promise<CopyOutcome> {
  options.signal?.throwIfAborted();
  if (depth > MAX_DEPTH) throw tooDeep();
  const info = await lstatAt(fromDir, from);
  if (info.isSymbolicLink()) {
    const target = await readlinkAt(fromDir, from);
    if (options.overwrite && (await lstatIfAny(toDir, to))?.isSymbolicLink()) await unlinkAt(toDir, to);
    await symlinkAt(target, toDir, to);
    outcome.files++;
  } else if (info.isFile()) {
    await copyFileAt(fromDir, from, toDir, to, options);
    outcome.files++;
  } else if (info.isDirectory()) {
    await copyDirAt(fromDir, from, toDir, to, options, outcome, depth);
  } else outcome.skipped++;
  return outcome;
}

async function copyFileAt(
  fromDir: FileHandle,
  from: string,
  toDir: FileHandle,
  to: string,
  options: { overwrite: boolean; signal?: AbortSignal },
): Promise<void> {
  const source = await openFileAt(fromDir, from, constants.O_RDONLY);
  try {
    if (!(await source.stat()).isFile()) throw new PathRefusedError(`"${from}" is no longer a regular file.`);
    const flags = constants.O_WRONLY | constants.O_CREAT | (options.overwrite ? 0 : constants.O_EXCL);
    const target = await openFileAt(toDir, to, flags);
    try {
      if (!(await target.stat()).isFile())
        throw new PathRefusedError(`"${to}" exists and is not a regular file.`);
      // Truncation only after the open proved the target is a plain file here.
      await target.truncate(0);
      await copyHandle(source, target, options.signal);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function copyDirAt(
  fromDir: FileHandle,
  from: string,
  toDir: FileHandle,
  to: string,
  options: { overwrite: boolean; signal?: AbortSignal },
  outcome: CopyOutcome,
  depth: number,
): Promise<void> {
  const source = await openDirAt(fromDir, from);
  let target: FileHandle | undefined;
  try {
    if ((await fsTypeOf(source)) === PROC_SUPER_MAGIC)
      throw new PathRefusedError(`"${from}" is a folder of /proc; file tools do not copy /proc folders.`);
    await mkdirAt(toDir, to).catch((err: unknown) => {
      if (codeOf(err) !== 'EEXIST' || !options.overwrite) throw err;
    });
    target = await openDirAt(toDir, to);
    const { entries } = await listDir(source);
    for (const entry of entries) {
      await copyTree(source, entry.name, target, entry.name, options, outcome, depth + 1);
    }
  } finally {
    await closeQuietly(target);
    await source.close();
  }
}
