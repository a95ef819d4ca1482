/**
 * `filesystem` (DESIGN §9): read, write, append, list, copy, move, delete, grep and diff local
 * files, confined to FS_ALLOWED_PATHS by a `PathGuard`. Every path is resolved (`~`, `..`,
 * symbolic links) before the check, and files are opened through the guard so a file swapped
 * for a link between check and use is refused.
 */
import { constants } from 'node:fs';
import { cp, type FileHandle, lstat, mkdir, readlink, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Settings } from '../../config/settings.js';
import { grep, looksBinary, readLineWindow, sampleOf, walk } from '../fs/fs-ops.js';
import { PathGuard, PathRefusedError } from '../fs/path-guard.js';
import { DiffTooLargeError, unifiedDiff } from '../fs/text-diff.js';
import { fail, ok, type ToolDefinition, type ToolParams, type ToolResult } from '../types.js';

export interface FilesystemToolDeps {
  settings: Pick<Settings, 'FS_ALLOWED_PATHS'>;
  /** Overrides the guard built from the settings (tests, or a shared instance). */
  guard?: PathGuard;
  limits?: Partial<typeof defaultLimits>;
}

const defaultLimits = {
  readLines: 500,
  maxLineChars: 2000,
  base64Bytes: 5 * 1024 * 1024,
  listEntries: 1000,
  listDepth: 8,
  grepResults: 200,
  grepFileBytes: 2 * 1024 * 1024,
  grepFiles: 5000,
  diffBytes: 2 * 1024 * 1024,
};

const actions = ['read', 'write', 'append', 'list', 'copy', 'move', 'delete', 'grep', 'diff'] as const;
type Action = (typeof actions)[number];

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : undefined;

export function createFilesystemTool(deps: FilesystemToolDeps): ToolDefinition {
  const guard = deps.guard ?? new PathGuard({ roots: deps.settings.FS_ALLOWED_PATHS });
  const limits = { ...defaultLimits, ...deps.limits };

  const handlers: Record<Action, (p: ToolParams) => Promise<ToolResult>> = {
    read: (p) => read(p),
    write: (p) => write(p, false),
    append: (p) => write(p, true),
    list: (p) => list(p),
    copy: (p) => copyOrMove(p, false),
    move: (p) => copyOrMove(p, true),
    delete: (p) => remove(p),
    grep: (p) => search(p),
    diff: (p) => diff(p),
  };

  async function read(p: ToolParams): Promise<ToolResult> {
    const path = await guard.resolve(requirePath(p));
    const handle = await guard.open(path, constants.O_RDONLY);
    try {
      const info = await handle.stat();
      if (info.isDirectory()) return fail(`${path} is a directory; use action "list".`);
      if (p.encoding === 'base64') {
        if (info.size > limits.base64Bytes) {
          return fail(
            `${path} is ${info.size} bytes; base64 reads are limited to ${limits.base64Bytes} bytes.`,
          );
        }
        return ok((await handle.readFile()).toString('base64'), {
          path,
          size: info.size,
          encoding: 'base64',
        });
      }
      if (looksBinary(await sampleOf(handle))) {
        return fail(`${path} looks like a binary file (${info.size} bytes); read it with encoding "base64".`);
      }
      const offset = Math.max(1, int(p.offset) ?? 1);
      const limit = Math.max(1, int(p.limit) ?? limits.readLines);
      const window = await readLineWindow(handle, offset, limit, limits.maxLineChars);
      const last = offset + window.lines.length - 1;
      let text = window.lines.join('\n');
      if (offset > 1 || last < window.totalLines) {
        const more = last < window.totalLines ? `; continue with offset=${last + 1}` : '';
        text = `[lines ${offset}-${last} of ${window.totalLines}${more}]\n${text}`;
      }
      return ok(text, { path, total_lines: window.totalLines });
    } finally {
      await handle.close();
    }
  }

  async function write(p: ToolParams, append: boolean): Promise<ToolResult> {
    const content = str(p.content);
    if (content === undefined) return fail(`Action "${append ? 'append' : 'write'}" needs "content".`);
    const data = p.encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    const path = await guard.resolve(requirePath(p));
    guard.assertWritable(path);
    await mkdir(dirname(path), { recursive: true });
    const flags = constants.O_WRONLY | constants.O_CREAT | (append ? constants.O_APPEND : 0);
    const handle = await guard.open(path, flags);
    try {
      if ((await handle.stat()).isDirectory()) return fail(`${path} is a directory.`);
      // Truncation happens only after the guard has checked what was opened.
      if (!append) await handle.truncate(0);
      await handle.write(data);
    } finally {
      await handle.close();
    }
    return ok(`${append ? 'Appended' : 'Wrote'} ${data.length} bytes to ${path}.`, { path });
  }

  async function list(p: ToolParams): Promise<ToolResult> {
    const path = await guard.resolve(requirePath(p));
    const info = await stat(path);
    if (!info.isDirectory()) return ok(`${path} (file, ${info.size} bytes)`);
    const recursive = p.recursive === true;
    const { entries, truncated } = await walk(path, {
      recursive,
      maxEntries: limits.listEntries,
      maxDepth: recursive ? limits.listDepth : 1,
    });
    const lines: string[] = [];
    for (const e of entries) {
      if (e.dirent.isSymbolicLink())
        lines.push(`${e.relative} -> ${await readlink(e.path).catch(() => '?')}`);
      else if (e.dirent.isDirectory()) lines.push(`${e.relative}/`);
      else {
        const size = await lstat(e.path)
          .then((s) => s.size)
          .catch(() => 0);
        lines.push(`${e.relative} (${size} bytes)`);
      }
    }
    if (lines.length === 0) return ok(`${path} is empty.`);
    if (truncated)
      lines.push(`[listing stopped after ${limits.listEntries} entries; list a subfolder to see more]`);
    return ok(`${path}:\n${lines.join('\n')}`, { path, count: entries.length, truncated });
  }

  async function copyOrMove(p: ToolParams, move: boolean): Promise<ToolResult> {
    const source = move ? await guard.resolveNoFollow(requirePath(p)) : await guard.resolve(requirePath(p));
    const destInput = str(p.destination);
    if (!destInput) return fail(`Action "${move ? 'move' : 'copy'}" needs "destination".`);
    let dest = await guard.resolve(destInput);
    guard.assertWritable(dest);
    if (move) guard.assertWritable(source);
    const srcInfo = await lstat(source).catch(() => undefined);
    if (!srcInfo) return fail(`${source} does not exist.`);
    const destInfo = await stat(dest).catch(() => undefined);
    if (destInfo?.isDirectory()) {
      dest = join(dest, basename(source));
      guard.assertAllowed(dest);
      guard.assertWritable(dest);
    }
    if (dest === source) return fail('Source and destination are the same path.');
    if (p.overwrite !== true && (await lstat(dest).catch(() => undefined))) {
      return fail(`${dest} already exists; pass "overwrite": true to replace it.`);
    }
    await mkdir(dirname(dest), { recursive: true });
    if (move) {
      try {
        await rename(source, dest);
        return ok(`Moved ${source} to ${dest}.`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      }
    }
    if (srcInfo.isDirectory()) {
      await cp(source, dest, { recursive: true, verbatimSymlinks: true, force: p.overwrite === true });
    } else {
      const from = await guard.open(source, constants.O_RDONLY);
      try {
        const to = await guard.open(dest, constants.O_WRONLY | constants.O_CREAT);
        try {
          await to.truncate(0);
          await copyHandle(from, to);
        } finally {
          await to.close();
        }
      } finally {
        await from.close();
      }
    }
    if (move) await rm(source, { recursive: true });
    return ok(`${move ? 'Moved' : 'Copied'} ${source} to ${dest}.`);
  }

  async function remove(p: ToolParams): Promise<ToolResult> {
    const path = await guard.resolveNoFollow(requirePath(p));
    if (guard.roots.includes(path)) return fail(`${path} is an allowed root itself; refusing to delete it.`);
    guard.assertWritable(path);
    // lstat: deleting a link removes the link, never what it points to.
    const info = await lstat(path).catch(() => undefined);
    if (!info) return fail(`${path} does not exist.`);
    if (info.isDirectory() && p.recursive !== true) {
      return fail(`${path} is a directory; pass "recursive": true to delete it with its contents.`);
    }
    await rm(path, { recursive: info.isDirectory() });
    return ok(`Deleted ${path}.`);
  }

  async function search(p: ToolParams): Promise<ToolResult> {
    const pattern = str(p.pattern);
    if (!pattern) return fail('Action "grep" needs "pattern" (a regular expression).');
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, p.ignore_case === true ? 'i' : '');
    } catch (err) {
      return fail(`Invalid regular expression: ${(err as Error).message}`);
    }
    const path = await guard.resolve(requirePath(p));
    const maxResults = Math.min(Math.max(1, int(p.max_results) ?? limits.grepResults), 2000);
    const res = await grep(guard, path, {
      regex,
      maxResults,
      maxFileBytes: limits.grepFileBytes,
      maxFiles: limits.grepFiles,
      maxLineChars: limits.maxLineChars,
    });
    const notes: string[] = [];
    if (res.truncated)
      notes.push(
        `results cut at ${maxResults} matches or ${limits.grepFiles} files; narrow the path or pattern`,
      );
    if (res.skipped.large)
      notes.push(`${res.skipped.large} files over ${limits.grepFileBytes} bytes skipped`);
    if (res.skipped.binary) notes.push(`${res.skipped.binary} binary files skipped`);
    if (res.skipped.outside) notes.push(`${res.skipped.outside} files outside the allowed folders skipped`);
    const head =
      res.matches.length === 0
        ? `No match for /${pattern}/ in ${res.filesSearched} files under ${path}.`
        : `${res.matches.length} matches in ${res.filesSearched} files searched:`;
    const body = [head, ...res.matches, ...notes.map((n) => `[${n}]`)].join('\n');
    return ok(body, { matches: res.matches.length, truncated: res.truncated });
  }

  async function readText(path: string): Promise<string> {
    const handle = await guard.open(path, constants.O_RDONLY);
    try {
      const info = await handle.stat();
      if (info.size > limits.diffBytes)
        throw new DiffTooLargeError(`${path} is larger than ${limits.diffBytes} bytes`);
      if (looksBinary(await sampleOf(handle))) throw new DiffTooLargeError(`${path} is a binary file`);
      return await handle.readFile({ encoding: 'utf8' });
    } finally {
      await handle.close();
    }
  }

  async function diff(p: ToolParams): Promise<ToolResult> {
    const path = await guard.resolve(requirePath(p));
    const otherInput = str(p.other_path);
    const content = str(p.content);
    if (otherInput === undefined && content === undefined) {
      return fail(
        'Action "diff" needs "other_path" (a second file) or "content" (new text to compare with).',
      );
    }
    try {
      const before = await readText(path);
      let after: string;
      let toName: string;
      if (otherInput !== undefined) {
        toName = await guard.resolve(otherInput);
        after = await readText(toName);
      } else {
        after = content as string;
        toName = `${path} (proposed)`;
      }
      const text = unifiedDiff(before, after, { fromName: path, toName });
      return ok(text === '' ? 'No differences.' : text, { identical: text === '' });
    } catch (err) {
      if (err instanceof DiffTooLargeError) return fail(`Cannot diff: ${err.message}.`);
      throw err;
    }
  }

  return {
    name: 'filesystem',
    group: 'fs',
    description:
      'Read, write, append, list, copy, move, delete, grep (regex) and diff local files. ' +
      'Paths must be inside the allowed folders; `~` and relative paths are resolved first. ' +
      'Large files: read a window with offset/limit (lines). Binary files: encoding "base64".',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...actions], description: 'What to do.' },
        path: { type: 'string', description: 'File or folder (grep: file or folder to search).' },
        content: {
          type: 'string',
          description: 'write/append: the text (or base64); diff: new text to compare.',
        },
        destination: { type: 'string', description: 'copy/move: target path or existing folder.' },
        other_path: { type: 'string', description: 'diff: the second file.' },
        offset: { type: 'integer', minimum: 1, description: 'read: first line (1-based).' },
        limit: {
          type: 'integer',
          minimum: 1,
          description: `read: number of lines (default ${limits.readLines}).`,
        },
        encoding: {
          type: 'string',
          enum: ['utf8', 'base64'],
          description: 'read/write: base64 for binary data.',
        },
        recursive: { type: 'boolean', description: 'list: descend into folders; delete: remove a folder.' },
        pattern: { type: 'string', description: 'grep: JavaScript regular expression.' },
        ignore_case: { type: 'boolean', description: 'grep: case-insensitive match.' },
        max_results: { type: 'integer', minimum: 1, description: 'grep: maximum matches (default 200).' },
        overwrite: { type: 'boolean', description: 'copy/move: replace an existing destination.' },
      },
      required: ['action', 'path'],
      additionalProperties: false,
    },
    async execute(params) {
      const action = params.action as Action;
      const handler = handlers[action];
      if (!handler)
        return fail(`Unknown action "${String(params.action)}"; use one of ${actions.join(', ')}.`);
      try {
        return await handler(params);
      } catch (err) {
        if (err instanceof PathRefusedError) return fail(err.message);
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') return fail(`No such file or folder: ${e.path ?? str(params.path)}.`);
        if (e.code === 'EACCES' || e.code === 'EPERM')
          return fail(`Permission denied: ${e.path ?? str(params.path)}.`);
        if (e.code === 'EISDIR') return fail(`${e.path ?? str(params.path)} is a directory.`);
        if (e.code === 'ENOTDIR') return fail(`A part of ${e.path ?? str(params.path)} is not a folder.`);
        return fail(`filesystem ${action} failed: ${e.message}`);
      }
    },
  };
}

function requirePath(p: ToolParams): string {
  const path = str(p.path);
  if (!path) throw new PathRefusedError('Parameter "path" is required.');
  return path;
}

async function copyHandle(from: FileHandle, to: FileHandle): Promise<void> {
  const buf = Buffer.alloc(1 << 20);
  for (;;) {
    const { bytesRead } = await from.read(buf, 0, buf.length, null);
    if (bytesRead === 0) return;
    await to.write(buf, 0, bytesRead);
  }
}
