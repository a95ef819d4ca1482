/**
 * The calling session's files, as navi-3d may read them: SESSION_FILES_DIR/<session id>/, the
 * session named by the id Navi sends in each call's `_meta`. Every read walks down from the
 * opened folder one name at a time without following a symbolic link (src/machine/fs), so a
 * link placed among the session's files cannot lead a compile to a file elsewhere.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  closeQuietly,
  codeOf,
  lstatIfAny,
  openDirAt,
  openFileAt,
  PathRefusedError,
} from '../../machine/fs/beneath.js';
import type { FixedDir } from '../../machine/fs/fixed-dir.js';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';

/** A file navi-3d will not read, with the reason in words the model can act on. */
export class FileRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileRefused';
  }
}

/** Navi's session ids are UUIDs; anything that is not one plain folder name is refused. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const MAX_PATH_CHARS = 1024;
const MAX_NAME_CHARS = 255;

/**
 * The names of a relative path inside the session folder (`lib/parts.scad` → [lib, parts.scad]).
 * Throws FileRefused for an absolute path, a `..`, control characters, a backslash or a path
 * too long to be a file name.
 */
export function splitRelative(raw: string, what?: string): string[] {
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
  const subject = what ?? `the path ${shown}`;
  if (raw.trim() === '')
    throw new FileRefused(
      `${what ?? 'the path'} is empty: name a file among the session's files, like parts.scad.`,
    );
  if (raw.length > MAX_PATH_CHARS)
    throw new FileRefused(
      `${what ?? 'the path'} is ${raw.length} characters long; a path has at most ${MAX_PATH_CHARS}.`,
    );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw))
    throw new FileRefused(`${subject} contains control characters; name the file plainly.`);
  if (raw.includes('\\'))
    throw new FileRefused(
      `${subject} contains a backslash; separate folders with / and name the file plainly.`,
    );
  if (raw.startsWith('/') || raw.startsWith('~'))
    throw new FileRefused(
      `${subject} is outside the session's files: navi-3d reads only files in the session's folder, named relative to it (like parts.scad). Share or upload the file to the session first.`,
    );
  const names = raw.split('/').filter((n) => n !== '' && n !== '.');
  if (names.includes('..'))
    throw new FileRefused(
      `${subject} uses "..", which leaves the session's folder: navi-3d reads only the session's own files. Name the file relative to the session's folder, like parts.scad.`,
    );
  if (names.length === 0) throw new FileRefused(`${subject} names the session's folder itself, not a file.`);
  const long = names.find((n) => n.length > MAX_NAME_CHARS);
  if (long)
    throw new FileRefused(`${subject} has a name of ${long.length} characters; at most ${MAX_NAME_CHARS}.`);
  return names;
}

export type SessionLookup =
  | { kind: 'none' }
  | { kind: 'refused'; reason: string }
  | { kind: 'session'; folder: SessionFolder };

/** The session a call comes from, read from its `_meta`, with its folder below `root`. */
export function sessionOf(
  meta: Readonly<Record<string, unknown>> | undefined,
  root: FixedDir,
): SessionLookup {
  const id = meta?.[SESSION_META_KEY];
  if (id === undefined) return { kind: 'none' };
  if (typeof id !== 'string' || !SESSION_ID.test(id))
    return {
      kind: 'refused',
      reason: `The call's session id (${SESSION_META_KEY} = ${JSON.stringify(id).slice(0, 80)}) is not a plain folder name, so navi-3d cannot tell whose files to use. Navi sends a valid one; a client of its own must send a session id made of letters, digits, - and _.`,
    };
  return { kind: 'session', folder: new SessionFolder(root, id) };
}

/** Why a call without a session id cannot use session files; each tool adds what to do instead. */
export const NO_SESSION =
  "This call came without a session id (Navi sends one as _meta['navi/session_id']), so navi-3d does not know whose files to use: a path, an include or an import of a session file cannot be read.";

export class SessionFolder {
  constructor(
    private readonly root: FixedDir,
    readonly id: string,
  ) {}

  /**
   * The file at `path` (relative to the session folder), or undefined when there is none.
   * Throws FileRefused for a link, something that is not a plain file, or a file over `maxBytes`.
   */
  async read(path: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer | undefined> {
    const names = splitRelative(path);
    const file = names.pop()!;
    let dir: FileHandle | undefined;
    try {
      dir = await this.openFolder(signal);
      if (!dir) return undefined;
      for (const name of names) {
        const child: FileHandle | undefined = await openDirAt(dir, name).catch((err: unknown) =>
          this.refuseOrMissing(err, dir!, name, path, 'folder'),
        );
        await dir.close();
        dir = child;
        if (!dir) return undefined;
      }
      const handle: FileHandle | undefined = await openFileAt(dir, file, constants.O_RDONLY).catch(
        (err: unknown) => this.refuseOrMissing(err, dir!, file, path, 'file'),
      );
      if (!handle) return undefined;
      try {
        const stats = await handle.stat();
        if (!stats.isFile())
          throw new FileRefused(
            `${path} is ${stats.isDirectory() ? 'a folder' : 'not a plain file'}; name a file.`,
          );
        if (stats.size > maxBytes)
          throw new FileRefused(
            `${path} is ${stats.size} bytes, more than the ${maxBytes} bytes navi-3d reads of such a file.`,
          );
        return await handle.readFile({ signal });
      } finally {
        await handle.close();
      }
    } finally {
      await closeQuietly(dir);
    }
  }

  /** The session's folder, or undefined when it does not exist (the session has no files). */
  private async openFolder(signal?: AbortSignal): Promise<FileHandle | undefined> {
    let root: FileHandle;
    try {
      root = await this.root.open({ create: false, signal });
    } catch (err) {
      if (codeOf(err) === 'ENOENT') return undefined;
      if (err instanceof PathRefusedError) throw new FileRefused(err.message);
      throw err;
    }
    try {
      return await openDirAt(root, this.id).catch((err: unknown) => {
        if (codeOf(err) === 'ENOENT') return undefined;
        if (codeOf(err) === 'ENOTDIR' || codeOf(err) === 'ELOOP')
          throw new FileRefused(
            "The session's folder is not a plain folder (it may be a link); navi-3d does not read it.",
          );
        throw err;
      });
    } finally {
      await root.close();
    }
  }

  private async refuseOrMissing(
    err: unknown,
    dir: FileHandle,
    name: string,
    path: string,
    wanted: 'file' | 'folder',
  ): Promise<undefined> {
    const code = codeOf(err);
    if (code === 'ENOENT') return undefined;
    const stats = await lstatIfAny(dir, name).catch(() => undefined);
    if (stats?.isSymbolicLink())
      throw new FileRefused(
        `${path}: ${name} is a symbolic link, and navi-3d does not follow links among the session's files (one could lead outside them). Use the file itself.`,
      );
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw new FileRefused(`${path}: ${name} is not a ${wanted === 'folder' ? 'folder' : 'plain file'}.`);
    throw err;
  }
}

/** What a tool says of the file its `path` argument names, when it is not the kind it takes or not there. */
export interface NamedFileWords {
  /** The extension the tool takes, lower case with its dot (`.scad`). */
  extension: string;
  wrongKind(file: string): string;
  missing(file: string): string;
}

/**
 * The file a tool's `path` argument names, as the session knows it (`lib/a.scad`), with its
 * data; or the sentence the call fails with (a refused path names `tool`).
 */
export async function readNamedFile(
  folder: SessionFolder,
  tool: string,
  path: string,
  words: NamedFileWords,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ file: string; data: Buffer } | { error: string }> {
  try {
    const file = splitRelative(path).join('/');
    if (!file.toLowerCase().endsWith(words.extension)) return { error: words.wrongKind(file) };
    const data = await folder.read(file, maxBytes, signal);
    return data ? { file, data } : { error: words.missing(file) };
  } catch (err) {
    if (err instanceof FileRefused) return { error: `${tool} cannot read it: ${err.message}` };
    throw err;
  }
}
