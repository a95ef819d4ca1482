/**
 * `filesystem`: read, write, edit, append, list, stat, copy, move, delete, grep and diff local files,
 * confined to FS_ALLOWED_PATHS by a `PathGuard`. Every operation acts on what the guard's walk
 * opened (a folder and one name in it), never on a path string checked earlier, so swapping a
 * folder for a symbolic link during the call cannot make it reach outside the allowed folders.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { codeOf, lstatAt, lstatIfAny, openDirAt, readlinkAt, renameAt } from '../../machine/fs/beneath.js';
import { type EntryInfo, entryInfo } from '../../machine/fs/file-stat.js';
import { grep, looksBinary, readLineWindow, sampleOf, walkBeneath } from '../../machine/fs/fs-ops.js';
import { followLink, isWithin, type PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import { DiffTooLargeError, unifiedDiff } from '../../machine/fs/text-diff.js';
import { editText } from '../../machine/fs/text-edit.js';
import { copyTree, removeTree } from '../../machine/fs/tree-ops.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolResult } from '../types.js';

export interface FilesystemToolDeps {
  settings: Pick<Settings, 'FS_ALLOWED_PATHS'>;
  /** Every path goes through it; the composition root passes the one guard all file tools share. */
  guard: PathGuard;
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
  editBytes: 2 * 1024 * 1024,
};

const actions = [
  'read',
  'write',
  'edit',
  'append',
  'list',
  'stat',
  'copy',
  'move',
  'delete',
  'grep',
  'diff',
] as const;
type Action = (typeof actions)[number];

/** The parameters, with the read window this instance uses by default. */
function parametersFor(readLines: number) {
  return z.strictObject({
    action: z.enum(actions).describe('What to do.'),
    path: z.string().describe('File or folder (grep: file or folder to search).'),
    content: z.string().optional().describe('write/append: the text (or base64); diff: new text to compare.'),
    old_text: z
      .string()
      .optional()
      .describe('edit: the exact text to replace; it must occur once unless replace_all is true.'),
    new_text: z.string().optional().describe('edit: the replacement ("" deletes old_text).'),
    replace_all: z.boolean().optional().describe('edit: replace every occurrence of old_text.'),
    destination: z.string().optional().describe('copy/move: target path or existing folder.'),
    other_path: z.string().optional().describe('diff: the second file.'),
    offset: z.int().min(1).optional().describe('read: first line (1-based).'),
    limit: z.int().min(1).optional().describe(`read: number of lines (default ${readLines}).`),
    encoding: z.enum(['utf8', 'base64']).optional().describe('read/write: base64 for binary data.'),
    recursive: z.boolean().optional().describe('list: descend into folders; delete: remove a folder.'),
    pattern: z.string().optional().describe('grep: JavaScript regular expression.'),
    ignore_case: z.boolean().optional().describe('grep: case-insensitive match.'),
    max_results: z.int().min(1).optional().describe('grep: maximum matches (default 200).'),
    overwrite: z.boolean().optional().describe('copy/move: replace an existing destination.'),
  });
}

type Params = z.output<ReturnType<typeof parametersFor>>;

export function createFilesystemTool(deps: FilesystemToolDeps): TypedTool<ReturnType<typeof parametersFor>> {
  const { guard } = deps;
  const limits = { ...defaultLimits, ...deps.limits };

  const handlers: Record<Action, (p: Params, signal: AbortSignal) => Promise<ToolResult>> = {
    read: (p, signal) => read(p, signal),
    write: (p, signal) => write(p, false, signal),
    edit: (p, signal) => edit(p, signal),
    append: (p, signal) => write(p, true, signal),
    list: (p, signal) => list(p, signal),
    stat: (p, signal) => stat(p, signal),
    copy: (p, signal) => copyOrMove(p, false, signal),
    move: (p, signal) => copyOrMove(p, true, signal),
    delete: (p, signal) => remove(p, signal),
    grep: (p, signal) => search(p, signal),
    diff: (p, signal) => diff(p, signal),
  };

  async function read(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const {
      handle,
      path,
      stats: info,
    } = await guard.openFile(requirePath(p), constants.O_RDONLY, { signal });
    try {
      if (info.isDirectory()) return fail(`${path} is a directory; use action "list".`);
      if (!info.isFile())
        return fail(`${path} is not a regular file (a device, pipe or socket); not reading it.`);
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
      const offset = Math.max(1, p.offset ?? 1);
      const limit = Math.max(1, p.limit ?? limits.readLines);
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

  async function write(p: Params, append: boolean, signal: AbortSignal): Promise<ToolResult> {
    const content = p.content;
    if (content === undefined) return fail(`Action "${append ? 'append' : 'write'}" needs "content".`);
    const data = p.encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    const flags = constants.O_WRONLY | constants.O_CREAT | (append ? constants.O_APPEND : 0);
    const { handle, path, stats } = await guard.openFile(requirePath(p), flags, {
      createParents: true,
      signal,
    });
    try {
      if (!stats.isFile()) return fail(`${path} is not a regular file; not writing to it.`);
      // Truncation only once the open proved what the name leads to.
      if (!append) await handle.truncate(0);
      await handle.write(data);
    } finally {
      await handle.close();
    }
    return ok(`${append ? 'Appended' : 'Wrote'} ${data.length} bytes to ${path}.`, { path });
  }

  /** Search and replace in place, through the handle `write` would use, so the same guard applies. */
  async function edit(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const { old_text: oldText, new_text: newText } = p;
    if (oldText === undefined || newText === undefined)
      return fail(
        'Action "edit" needs "old_text" (the exact text to replace) and "new_text" (its replacement).',
      );
    const { handle, path, stats } = await guard.openFile(requirePath(p), constants.O_RDWR, { signal });
    try {
      if (!stats.isFile()) return fail(`${path} is not a regular file; not editing it.`);
      if (stats.size > limits.editBytes)
        return fail(
          `${path} is ${stats.size} bytes; edit works on files up to ${limits.editBytes} bytes. ` +
            'Write the file anew, or change it with a command.',
        );
      const bytes = await handle.readFile();
      if (looksBinary(bytes.subarray(0, 8192)))
        return fail(`${path} looks like a binary file; edit changes text only.`);
      const before = bytes.toString('utf8');
      const outcome = editText(before, { oldText, newText, replaceAll: p.replace_all === true });
      if (!outcome.ok)
        return fail(`Not edited: ${outcome.reason} (${path})`, {
          path,
          matches: outcome.matches,
          lines: outcome.lines,
        });
      const data = Buffer.from(outcome.text, 'utf8');
      // Truncated only through the handle the guard opened, as `write` does.
      await handle.truncate(0);
      await handle.write(data, 0, data.length, 0);
      let shown: string;
      try {
        shown =
          unifiedDiff(before, outcome.text, { fromName: path, toName: path }) ||
          '(only line endings changed)';
      } catch (err) {
        if (!(err instanceof DiffTooLargeError)) throw err;
        shown = `(the diff is too large to show: ${err.message})`;
      }
      const times = outcome.replaced === 1 ? 'one occurrence' : `${outcome.replaced} occurrences`;
      return ok(`Edited ${path}: replaced ${times}.\n${shown}`, { path, replaced: outcome.replaced });
    } finally {
      await handle.close();
    }
  }

  /** The entry itself (a link is described, not followed); where a link leads, through the guard. */
  async function stat(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const input = requirePath(p);
    const entry = await guard.at(input, { follow: false, signal }, async (spot): Promise<EntryInfo> => {
      const info = await lstatAt(spot.dir, spot.name);
      guard.assertNotHiddenFile(info, spot.path);
      const target = info.isSymbolicLink() ? await readlinkAt(spot.dir, spot.name) : undefined;
      return entryInfo(spot.path, info, target);
    });
    const lines = [
      `${entry.path}: ${entry.type}${entry.type === 'symlink' ? ` -> ${entry.link_target}` : `, ${entry.size} bytes`}`,
      `permissions: ${entry.permissions} (${entry.mode})`,
      `modified: ${entry.modified}`,
    ];
    if (entry.type !== 'symlink') return ok(lines.join('\n'), { ...entry });
    let leads: string;
    try {
      const end = await guard.at(input, { follow: true, signal }, async (spot) => {
        const info = await lstatAt(spot.dir, spot.name);
        if (info.isSymbolicLink()) throw followLink();
        guard.assertNotHiddenFile(info, spot.path);
        return entryInfo(spot.path, info);
      });
      leads = `leads to ${end.path}: ${end.type}, ${end.size} bytes`;
    } catch (err) {
      if (err instanceof PathRefusedError) leads = `where it leads is not examined: ${err.message}`;
      else if (codeOf(err) === 'ENOENT') leads = 'dangling: what it points to does not exist';
      else throw err;
    }
    return ok([...lines, leads].join('\n'), { ...entry });
  }

  async function list(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const recursive = p.recursive === true;
    return guard.at(requirePath(p), { follow: true, signal }, async (spot) => {
      let top: FileHandle;
      try {
        top = await openDirAt(spot.dir, spot.name);
      } catch (err) {
        if (codeOf(err) !== 'ENOTDIR') throw err;
        const info = await lstatAt(spot.dir, spot.name);
        if (info.isSymbolicLink()) throw followLink();
        return ok(`${spot.path} (file, ${info.size} bytes)`);
      }
      const lines: string[] = [];
      let outcome: { count: number; truncated: boolean };
      try {
        outcome = await walkBeneath(
          top,
          { recursive, maxEntries: limits.listEntries, maxDepth: recursive ? limits.listDepth : 1, signal },
          async (e) => {
            if (e.dirent.isSymbolicLink()) {
              const target = await readlinkAt(e.dir, e.dirent.name).catch(() => '?');
              lines.push(`${e.relative} -> ${target}`);
            } else if (e.dirent.isDirectory()) lines.push(`${e.relative}/`);
            else {
              const size = await lstatAt(e.dir, e.dirent.name).then(
                (s) => s.size,
                () => 0,
              );
              lines.push(`${e.relative} (${size} bytes)`);
            }
            return true;
          },
        );
      } finally {
        await top.close();
      }
      if (lines.length === 0) return ok(`${spot.path} is empty.`);
      if (outcome.truncated)
        lines.push(`[listing stopped after ${limits.listEntries} entries; list a subfolder to see more]`);
      return ok(`${spot.path}:\n${lines.join('\n')}`, {
        path: spot.path,
        count: outcome.count,
        truncated: outcome.truncated,
      });
    });
  }

  /** Copies or moves; both ends are spots (opened folder + name), so nothing is reached by path. */
  async function copyOrMove(p: Params, move: boolean, signal: AbortSignal): Promise<ToolResult> {
    const what = move ? 'move' : 'copy';
    const destInput = p.destination;
    if (!destInput) return fail(`Action "${what}" needs "destination".`);
    const overwrite = p.overwrite === true;
    // A move acts on a link itself; a copy copies what a link leads to.
    return guard.at(requirePath(p), { follow: !move, signal }, async (src) => {
      const srcInfo = await lstatIfAny(src.dir, src.name);
      if (!srcInfo) return fail(`${src.path} does not exist.`);
      if (!move && srcInfo.isSymbolicLink()) throw followLink();
      if (move) guard.assertRemovable(src.path);
      return guard.at(destInput, { follow: true, createParents: true, signal }, async (dst) => {
        // An existing folder as destination receives the source under its own name.
        const into = await openDirAt(dst.dir, dst.name).catch(async (err: unknown) => {
          if (codeOf(err) === 'ENOTDIR' && (await lstatIfAny(dst.dir, dst.name))?.isSymbolicLink())
            throw followLink();
          if (codeOf(err) === 'ENOENT' || codeOf(err) === 'ENOTDIR') return undefined;
          throw err;
        });
        try {
          const target = into
            ? { dir: into, name: basename(src.path), path: join(dst.path, basename(src.path)) }
            : dst;
          if (target.name === '.') return fail(`${target.path} is an allowed root; name a path inside it.`);
          guard.assertAllowed(target.path);
          guard.assertWritable(target.path);
          if (target.path === src.path) return fail('Source and destination are the same path.');
          if (srcInfo.isDirectory() && isWithin(src.path, target.path))
            return fail(`Cannot ${what} ${src.path} into itself (${target.path}).`);
          const existing = await lstatIfAny(target.dir, target.name);
          if (existing && !overwrite)
            return fail(`${target.path} already exists; pass "overwrite": true to replace it.`);
          if (move) {
            try {
              await renameAt(src.dir, src.name, target.dir, target.name);
              return ok(`Moved ${src.path} to ${target.path}.`);
            } catch (err) {
              if (codeOf(err) !== 'EXDEV') throw err;
            }
          }
          const done = await copyTree(src.dir, src.name, target.dir, target.name, { overwrite, signal });
          if (move) await removeTree(src.dir, src.name, signal);
          const skipped = done.skipped > 0 ? ` (${done.skipped} pipes, sockets or devices skipped)` : '';
          return ok(`${move ? 'Moved' : 'Copied'} ${src.path} to ${target.path}${skipped}.`);
        } finally {
          await into?.close();
        }
      });
    });
  }

  async function remove(p: Params, signal: AbortSignal): Promise<ToolResult> {
    return guard.at(requirePath(p), { follow: false, signal }, async (spot) => {
      guard.assertRemovable(spot.path);
      // lstat: deleting a link removes the link, never what it points to.
      const info = await lstatIfAny(spot.dir, spot.name);
      if (!info) return fail(`${spot.path} does not exist.`);
      if (info.isDirectory() && p.recursive !== true) {
        return fail(`${spot.path} is a directory; pass "recursive": true to delete it with its contents.`);
      }
      await removeTree(spot.dir, spot.name, signal);
      return ok(`Deleted ${spot.path}.`);
    });
  }

  async function search(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const pattern = p.pattern;
    if (!pattern) return fail('Action "grep" needs "pattern" (a regular expression).');
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, p.ignore_case === true ? 'i' : '');
    } catch (err) {
      return fail(`Invalid regular expression: ${(err as Error).message}`);
    }
    const path = requirePath(p);
    const maxResults = Math.min(Math.max(1, p.max_results ?? limits.grepResults), 2000);
    const res = await grep(guard, path, {
      regex,
      maxResults,
      maxFileBytes: limits.grepFileBytes,
      maxFiles: limits.grepFiles,
      maxLineChars: limits.maxLineChars,
      signal,
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
    if (res.skipped.unreadable) notes.push(`${res.skipped.unreadable} files that could not be read skipped`);
    const head =
      res.matches.length === 0
        ? `No match for /${pattern}/ in ${res.filesSearched} files under ${guard.absolute(path)}.`
        : `${res.matches.length} matches in ${res.filesSearched} files searched:`;
    const body = [head, ...res.matches, ...notes.map((n) => `[${n}]`)].join('\n');
    return ok(body, { matches: res.matches.length, truncated: res.truncated });
  }

  async function readText(input: string, signal: AbortSignal): Promise<{ path: string; text: string }> {
    const { handle, path, stats: info } = await guard.openFile(input, constants.O_RDONLY, { signal });
    try {
      if (!info.isFile()) throw new DiffTooLargeError(`${path} is not a regular file`);
      if (info.size > limits.diffBytes)
        throw new DiffTooLargeError(`${path} is larger than ${limits.diffBytes} bytes`);
      if (looksBinary(await sampleOf(handle))) throw new DiffTooLargeError(`${path} is a binary file`);
      return { path, text: await handle.readFile({ encoding: 'utf8' }) };
    } finally {
      await handle.close();
    }
  }

  async function diff(p: Params, signal: AbortSignal): Promise<ToolResult> {
    const input = requirePath(p);
    const otherInput = p.other_path;
    const content = p.content;
    if (otherInput === undefined && content === undefined) {
      return fail(
        'Action "diff" needs "other_path" (a second file) or "content" (new text to compare with).',
      );
    }
    try {
      const { path, text: before } = await readText(input, signal);
      let after: string;
      let toName: string;
      if (otherInput !== undefined) {
        ({ path: toName, text: after } = await readText(otherInput, signal));
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

  /**
   * The path an error names, for the model: operations go through `/proc/self/fd/<fd>/<name>`
   * (beneath.ts), a name that means nothing to the model, so the path it asked for is shown instead.
   */
  function shownPath(errorPath: string | undefined, input: string): string {
    if (errorPath !== undefined && !errorPath.startsWith('/proc/self/fd/')) return errorPath;
    try {
      return guard.absolute(input);
    } catch {
      return input;
    }
  }

  return defineTool({
    name: 'filesystem',
    group: 'fs',
    risk: { reads: true, writes: true },
    description:
      'Read, write, edit, append, list, stat, copy, move, delete, grep (regex) and diff local files. ' +
      'Paths must be inside the allowed folders; `~` and relative paths are resolved first. ' +
      'Large files: read a window with offset/limit (lines). Binary files: encoding "base64". ' +
      'edit replaces old_text, which must occur exactly once (or pass replace_all), and shows the diff.',
    parameters: parametersFor(limits.readLines),
    async execute(params, ctx) {
      const { action } = params;
      try {
        return await handlers[action](params, ctx.signal);
      } catch (err) {
        if (err instanceof PathRefusedError) return fail(err.message);
        const e = err as NodeJS.ErrnoException;
        const where = shownPath(e.path, params.path);
        if (e.code === 'ENOENT') return fail(`No such file or folder: ${where}.`);
        if (e.code === 'EACCES' || e.code === 'EPERM') return fail(`Permission denied: ${where}.`);
        if (e.code === 'EISDIR') return fail(`${where} is a directory.`);
        if (e.code === 'ENOTDIR') return fail(`A part of ${where} is not a folder.`);
        return fail(`filesystem ${action} failed: ${e.message}`);
      }
    },
  });
}

function requirePath(p: Params): string {
  const path = p.path;
  if (!path) throw new PathRefusedError('Parameter "path" is required.');
  return path;
}
