/**
 * Bounded file operations used by the filesystem tool: text/binary detection, reading a line
 * window from a large file, and walking a tree without following links — by path for a folder
 * Navi made itself (`walk`), below an opened folder for anything the agent names (`walkBeneath`).
 */
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import {
  codeOf,
  fsTypeOf,
  listDir,
  lstatAt,
  openDirAt,
  openFileAt,
  PathRefusedError,
  PROC_SUPER_MAGIC,
} from './beneath.js';
import { followLink, type PathGuard } from './path-guard.js';

/** True when the sample looks binary: a NUL byte, or bytes that are not UTF-8. */
export function looksBinary(sample: Buffer): boolean {
  if (sample.includes(0)) return true;
  // A multi-byte character cut at the end of the sample is not evidence of binary data.
  let end = sample.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = sample[end - i] as number;
    if ((byte & 0xc0) === 0xc0) {
      end -= i;
      break;
    }
    if ((byte & 0x80) === 0) break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end));
    return false;
  } catch {
    return true;
  }
}

export async function sampleOf(handle: FileHandle, bytes = 8192): Promise<Buffer> {
  const buf = Buffer.alloc(bytes);
  const { bytesRead } = await handle.read(buf, 0, bytes, 0);
  return buf.subarray(0, bytesRead);
}

export interface LineWindow {
  lines: string[];
  totalLines: number;
  /** Lines longer than the cap, shortened. */
  clipped: number;
}

/** Lines `offset` (1-based) to `offset + limit - 1`, streaming so the file can be any size. */
export async function readLineWindow(
  handle: FileHandle,
  offset: number,
  limit: number,
  maxLineChars: number,
): Promise<LineWindow> {
  const stream = handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const lines: string[] = [];
  let n = 0;
  let clipped = 0;
  for await (const line of reader) {
    n++;
    if (n >= offset && n < offset + limit) {
      if (line.length > maxLineChars) {
        clipped++;
        lines.push(`${line.slice(0, maxLineChars)} …[line cut at ${maxLineChars} characters]`);
      } else lines.push(line);
    }
  }
  return { lines, totalLines: n, clipped };
}

export interface WalkEntry {
  path: string;
  relative: string;
  dirent: Dirent;
  depth: number;
}

/**
 * Breadth-first walk by path that never follows symbolic links; stops after `maxEntries`. Only
 * for folders Navi created itself (code_exec's working folder); agent-named folders use
 * `walkBeneath`.
 */
export async function walk(
  root: string,
  options: { recursive: boolean; maxEntries: number; maxDepth: number; skip?: ReadonlySet<string> },
): Promise<{ entries: WalkEntry[]; truncated: boolean }> {
  const entries: WalkEntry[] = [];
  const queue: Array<{ dir: string; depth: number }> = [{ dir: root, depth: 0 }];
  while (queue.length > 0) {
    const { dir, depth } = queue.shift() as { dir: string; depth: number };
    let items: Dirent[];
    try {
      items = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    items.sort((a, b) => a.name.localeCompare(b.name));
    for (const dirent of items) {
      if (entries.length >= options.maxEntries) return { entries, truncated: true };
      const path = join(dir, dirent.name);
      entries.push({ path, relative: relative(root, path), dirent, depth });
      if (
        options.recursive &&
        dirent.isDirectory() &&
        depth + 1 < options.maxDepth &&
        !(options.skip?.has(dirent.name) ?? false)
      ) {
        queue.push({ dir: path, depth: depth + 1 });
      }
    }
  }
  return { entries, truncated: false };
}

export interface TreeEntry {
  /** The opened folder holding the entry; valid only during the visit. */
  dir: FileHandle;
  dirent: Dirent;
  /** Path below the walked folder, `/`-separated. */
  relative: string;
  depth: number;
}

export interface TreeWalkOptions {
  recursive: boolean;
  maxEntries: number;
  maxDepth: number;
  skip?: ReadonlySet<string>;
  signal?: AbortSignal;
}

/**
 * Breadth-first walk below the opened folder `top`, visiting entries sorted by name while their
 * folder is open. Each queued folder is opened again from `top` one component at a time without
 * following links, so a folder swapped for a link meanwhile is skipped, never entered. Folders
 * on procfs are listed but never descended into (that is where processes' files are). `visit`
 * returns false to stop.
 */
export async function walkBeneath(
  top: FileHandle,
  options: TreeWalkOptions,
  visit: (entry: TreeEntry) => Promise<boolean | undefined>,
): Promise<{ count: number; truncated: boolean }> {
  const queue: string[][] = [[]];
  let count = 0;
  while (queue.length > 0) {
    options.signal?.throwIfAborted();
    const parts = queue.shift() as string[];
    const dir = await openBelow(top, parts);
    if (!dir) continue;
    try {
      const descend = options.recursive && (await fsTypeOf(dir)) !== PROC_SUPER_MAGIC;
      const { entries } = await listDir(dir);
      for (const dirent of entries) {
        if (count >= options.maxEntries) return { count, truncated: true };
        count++;
        const rel = [...parts, dirent.name];
        const goOn = await visit({ dir, dirent, relative: rel.join('/'), depth: parts.length });
        if (goOn === false) return { count, truncated: false };
        if (
          descend &&
          dirent.isDirectory() &&
          parts.length + 1 < options.maxDepth &&
          !(options.skip?.has(dirent.name) ?? false)
        ) {
          queue.push(rel);
        }
      }
    } finally {
      await dir.close();
    }
  }
  return { count, truncated: false };
}

/** Opens `parts` below `top` without following links; undefined when a part is no longer a folder. */
async function openBelow(top: FileHandle, parts: readonly string[]): Promise<FileHandle | undefined> {
  let dir = await openDirAt(top, '.');
  for (const name of parts) {
    const next = await openDirAt(dir, name).catch(() => undefined);
    await dir.close();
    if (!next) return undefined;
    dir = next;
  }
  return dir;
}

export interface GrepOptions {
  regex: RegExp;
  maxResults: number;
  maxFileBytes: number;
  maxFiles: number;
  maxLineChars: number;
  signal?: AbortSignal;
}

export interface GrepOutcome {
  matches: string[];
  filesSearched: number;
  skipped: { large: number; binary: number; outside: number; unreadable: number };
  truncated: boolean;
}

/**
 * Searches `input` (a file, or every file below a folder) for lines matching the regex. Files
 * are opened below their opened folder; private or refused files are counted as `outside`.
 */
export function grep(guard: PathGuard, input: string, options: GrepOptions): Promise<GrepOutcome> {
  const out: GrepOutcome = {
    matches: [],
    filesSearched: 0,
    skipped: { large: 0, binary: 0, outside: 0, unreadable: 0 },
    truncated: false,
  };
  const full = () => out.matches.length >= options.maxResults;

  async function searchFile(dir: FileHandle, name: string, path: string): Promise<void> {
    let handle: FileHandle;
    try {
      guard.assertAllowed(path);
      handle = await openFileAt(dir, name, constants.O_RDONLY);
    } catch {
      out.skipped.outside++;
      return;
    }
    try {
      await searchOpened(handle, path);
    } catch (err) {
      if (err instanceof PathRefusedError) out.skipped.outside++;
      // A file that fails to read (a device-like file, a vanished file) does not end the search.
      else out.skipped.unreadable++;
    } finally {
      await handle.close();
    }
  }

  async function searchOpened(handle: FileHandle, path: string): Promise<void> {
    const stat = await handle.stat();
    if (!stat.isFile()) return;
    guard.assertNotHiddenFile(stat, path);
    if (stat.size > options.maxFileBytes) {
      out.skipped.large++;
      return;
    }
    if (looksBinary(await sampleOf(handle))) {
      out.skipped.binary++;
      return;
    }
    out.filesSearched++;
    const text = (await handle.readFile({ encoding: 'utf8' })).split(/\r?\n/);
    for (let i = 0; i < text.length && !full(); i++) {
      const line = text[i] as string;
      options.regex.lastIndex = 0;
      if (!options.regex.test(line)) continue;
      const shown = line.length > options.maxLineChars ? `${line.slice(0, options.maxLineChars)}…` : line;
      out.matches.push(`${path}:${i + 1}: ${shown}`);
    }
  }

  return guard.at(input, { follow: true, signal: options.signal }, async (spot) => {
    let top: FileHandle;
    try {
      top = await openDirAt(spot.dir, spot.name);
    } catch (err) {
      if (codeOf(err) !== 'ENOTDIR') throw err;
      if ((await lstatAt(spot.dir, spot.name)).isSymbolicLink()) throw followLink();
      await searchFile(spot.dir, spot.name, spot.path);
      return out;
    }
    try {
      let files = 0;
      const tree = await walkBeneath(
        top,
        {
          recursive: true,
          maxEntries: options.maxFiles * 4,
          maxDepth: 32,
          skip: new Set(['.git', 'node_modules']),
          signal: options.signal,
        },
        async (e) => {
          if (!e.dirent.isFile()) return true;
          if (full() || files >= options.maxFiles) {
            out.truncated = true;
            return false;
          }
          files++;
          await searchFile(e.dir, e.dirent.name, join(spot.path, e.relative));
          return true;
        },
      );
      if (tree.truncated) out.truncated = true;
    } finally {
      await top.close();
    }
    return out;
  });
}
