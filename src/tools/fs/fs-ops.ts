/**
 * Bounded file operations used by the filesystem tool: text/binary detection, reading a line
 * window from a large file, walking a tree without following links, and grep.
 */
import type { Dirent } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { PathGuard } from './path-guard.js';

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

/** Breadth-first walk that never follows symbolic links; stops after `maxEntries`. */
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

export interface GrepOptions {
  regex: RegExp;
  maxResults: number;
  maxFileBytes: number;
  maxFiles: number;
  maxLineChars: number;
}

export interface GrepOutcome {
  matches: string[];
  filesSearched: number;
  skipped: { large: number; binary: number; outside: number };
  truncated: boolean;
}

/** Searches `target` (a file, or every file below a directory) for lines matching the regex. */
export async function grep(guard: PathGuard, target: string, options: GrepOptions): Promise<GrepOutcome> {
  const out: GrepOutcome = {
    matches: [],
    filesSearched: 0,
    skipped: { large: 0, binary: 0, outside: 0 },
    truncated: false,
  };
  const info = await lstat(target);
  let files: string[];
  if (info.isDirectory()) {
    const tree = await walk(target, {
      recursive: true,
      maxEntries: options.maxFiles * 4,
      maxDepth: 32,
      skip: new Set(['.git', 'node_modules']),
    });
    files = tree.entries.filter((e) => e.dirent.isFile()).map((e) => e.path);
    if (tree.truncated) out.truncated = true;
  } else files = [target];
  for (const file of files.slice(0, options.maxFiles)) {
    if (out.matches.length >= options.maxResults) {
      out.truncated = true;
      break;
    }
    let handle: FileHandle;
    try {
      handle = await guard.open(file, 0);
    } catch {
      out.skipped.outside++;
      continue;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) continue;
      if (stat.size > options.maxFileBytes) {
        out.skipped.large++;
        continue;
      }
      if (looksBinary(await sampleOf(handle))) {
        out.skipped.binary++;
        continue;
      }
      out.filesSearched++;
      const text = (await handle.readFile({ encoding: 'utf8' })).split(/\r?\n/);
      for (let i = 0; i < text.length; i++) {
        const line = text[i] as string;
        options.regex.lastIndex = 0;
        if (!options.regex.test(line)) continue;
        const shown = line.length > options.maxLineChars ? `${line.slice(0, options.maxLineChars)}…` : line;
        out.matches.push(`${file}:${i + 1}: ${shown}`);
        if (out.matches.length >= options.maxResults) break;
      }
    } finally {
      await handle.close();
    }
  }
  if (files.length > options.maxFiles) out.truncated = true;
  return out;
}
