/**
 * Confines every file tool to FS_ALLOWED_PATHS, race-free. A path is never checked and then
 * handed to the kernel as a string: the walk opens the allowed root and then each component
 * below the previous opened folder without following links (beneath.ts). A symbolic link met on
 * the way is read and resolved here — its target substituted, the path normalised, checked
 * again and walked again from its root — so links inside the roots keep working while one
 * pointing out is refused. Operations act on a `Spot`: an opened folder and one name in it.
 *
 * Whatever FS_ALLOWED_PATHS says, process information under /proc (proc-rule.ts) and Navi's
 * private files are refused; folders that decide what Navi runs are read-only.
 */
import { constants, type Stats, statSync } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import {
  assertBeneathAvailable,
  closeQuietly,
  codeOf,
  fsTypeOf,
  lstatIfAny,
  mkdirAt,
  O_DIRECTORY,
  openDirAt,
  openFileAt,
  PathRefusedError,
  PROC_SUPER_MAGIC,
  readlinkAt,
} from './beneath.js';
import { realpathOfExistingPartSync } from './fixed-dir.js';
import { assertNotProcessEntry, assertNotProcessPath } from './proc-rule.js';

export { PathRefusedError } from './beneath.js';

export interface PathGuardOptions {
  /** FS_ALLOWED_PATHS; `*` anywhere in the list allows the whole tree from `/`. */
  roots: readonly string[];
  /** Base of relative paths; defaults to the first root, or the process's cwd with `*`. */
  baseDir?: string;
  home?: string;
  /** Navi's private data (database, `.env`, SSH hosts): neither read nor written, even under `*`. */
  hidden?: readonly string[];
  /**
   * Folders that change what Navi runs or may do (user tools, context providers, MCP configs,
   * profiles): readable, but written only through the tools that ask the user first.
   */
  readOnly?: readonly { path: string; why: string }[];
}

/** An opened folder and one name in it: what every file operation acts on. */
export interface Spot {
  dir: FileHandle;
  /** One component, or `.` when the spot is an allowed root (or `/`) itself. */
  name: string;
  /** Real absolute path of the entry, built by the walk from the components it opened. */
  path: string;
}

export interface WalkOptions {
  /** Follow a symbolic link in the last component (through the same checks). */
  follow: boolean;
  /** Create missing folders on the way. */
  createParents?: boolean;
  signal?: AbortSignal;
}

/** Links resolved in one walk before it is called a loop (the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/** What the walk knows about an opened folder, for the /proc rule. */
interface DirState {
  dev: number;
  /** The folder is the root of a procfs mount: its numeric entries are processes. */
  procRoot: boolean;
}

/** Thrown by an action to have the walk follow the link in the last component. */
export function followLink(): NodeJS.ErrnoException {
  return Object.assign(new Error('the last component is a symbolic link'), { code: 'ELOOP' });
}

type Step = { spot: Spot } | { redirect: string };

export class PathGuard {
  readonly unrestricted: boolean;
  /** Real paths of the roots (a root that does not exist yet is kept as resolved). */
  readonly roots: readonly string[];
  readonly baseDir: string;
  private readonly home: string;
  private readonly hidden: readonly string[];
  private readonly readOnly: readonly { path: string; why: string }[];

  constructor(options: PathGuardOptions) {
    this.home = options.home ?? homedir();
    this.unrestricted = options.roots.includes('*') || options.roots.length === 0;
    this.roots = this.unrestricted
      ? []
      : options.roots.map((r) => realpathOfExistingPartSync(resolve(this.expandHome(r))));
    this.baseDir = options.baseDir ?? this.roots[0] ?? process.cwd();
    this.hidden = (options.hidden ?? []).map((h) => realpathOfExistingPartSync(resolve(h)));
    this.readOnly = (options.readOnly ?? []).map((r) => ({
      path: realpathOfExistingPartSync(resolve(r.path)),
      why: r.why,
    }));
  }

  /** Human-readable list of the roots, for refusals and manuals. */
  describeRoots(): string {
    return this.unrestricted ? 'anywhere (*)' : this.roots.join(', ');
  }

  /** True when the absolute, normalised `path` is a root or lies below one. */
  contains(path: string): boolean {
    if (this.unrestricted) return true;
    return this.roots.some((root) => isWithin(root, path));
  }

  /** `input` made absolute (`~` expanded, relative to the base folder) and normalised; not checked. */
  absolute(input: string): string {
    if (typeof input !== 'string' || input.trim() === '') throw new PathRefusedError('A path is required.');
    if (input.includes('\0')) throw new PathRefusedError('Path contains a NUL byte.');
    return resolve(this.baseDir, this.expandHome(input.trim()));
  }

  /** Refuses a path outside the roots, under /proc's process entries, or in Navi's private data. */
  assertAllowed(path: string, shown: string = path): void {
    if (!this.contains(path)) {
      throw new PathRefusedError(
        `Access denied: "${shown}" resolves to ${path}, which is outside the allowed folders ` +
          `(${this.describeRoots()}). Use a path inside one of them.`,
      );
    }
    assertNotProcessPath(path, shown);
    if (this.hidden.some((h) => isWithin(h, path))) throw this.hiddenError(path);
  }

  /** Refuses a change to `path` when it lies in one of the read-only folders. */
  assertWritable(path: string): void {
    const hit = this.readOnly.find((r) => isWithin(r.path, path));
    if (hit) throw new PathRefusedError(`Refused: ${path} is in ${hit.path}, ${hit.why}`);
  }

  /** For delete and move: also refuses a folder holding private data or a read-only folder. */
  assertRemovable(path: string): void {
    this.assertWritable(path);
    if (this.roots.includes(path) || path === sep)
      throw new PathRefusedError(`${path} is an allowed root itself; refusing to delete or move it.`);
    const inside = [...this.hidden, ...this.readOnly.map((r) => r.path)].find((p) => isWithin(path, p));
    if (inside)
      throw new PathRefusedError(`Refused: ${path} holds ${inside}, which no file tool may change.`);
  }

  /**
   * Walks to `input` and runs `act` on its spot; the spot's folder is closed afterwards. With
   * `follow`, an `act` failing with ELOOP or ENOTDIR on a link (its O_NOFOLLOW open met one, or
   * it threw `followLink()`) makes the walk resolve that link and run `act` again there.
   */
  async at<T>(input: string, options: WalkOptions, act: (spot: Spot) => Promise<T>): Promise<T> {
    assertBeneathAvailable();
    let path = this.absolute(input);
    let hops = 0;
    const hop = (next: string) => {
      if (++hops > MAX_LINK_HOPS)
        throw new PathRefusedError(`Too many symbolic links (a loop?) while resolving "${input}".`);
      path = next;
    };
    for (;;) {
      options.signal?.throwIfAborted();
      const step = await this.walk(path, input, options);
      if ('redirect' in step) {
        hop(step.redirect);
        continue;
      }
      const { spot } = step;
      try {
        if (!options.follow || spot.name === '.') return await act(spot);
        try {
          return await act(spot);
        } catch (err) {
          const code = codeOf(err);
          if (code !== 'ELOOP' && code !== 'ENOTDIR') throw err;
          const target = await readlinkAt(spot.dir, spot.name).catch(() => undefined);
          if (target !== undefined) hop(resolve(join(spot.path, '..'), target));
          else if (code === 'ELOOP')
            hop(path); // the link is gone again: walk anew
          else throw err;
        }
      } finally {
        await spot.dir.close();
      }
    }
  }

  /** The real path `input` designates (links followed through the checks); nothing is opened for use. */
  resolve(input: string, signal?: AbortSignal): Promise<string> {
    return this.at(input, { follow: true, signal }, async (spot) => {
      if (spot.name !== '.' && (await lstatIfAny(spot.dir, spot.name))?.isSymbolicLink()) throw followLink();
      return spot.path;
    });
  }

  /**
   * Opens the file `input` designates with `flags` (never O_TRUNC: truncate through the handle).
   * Writing flags also need the path writable. The caller closes the handle.
   */
  openFile(
    input: string,
    flags: number,
    options: { createParents?: boolean; mode?: number; signal?: AbortSignal } = {},
  ): Promise<{ handle: FileHandle; path: string; stats: Stats }> {
    const writing = (flags & (constants.O_WRONLY | constants.O_RDWR | constants.O_CREAT)) !== 0;
    return this.at(input, { follow: true, ...options }, async (spot) => {
      if (writing) this.assertWritable(spot.path);
      const handle = await openFileAt(spot.dir, spot.name, flags, options.mode);
      try {
        const stats = await handle.stat();
        this.assertNotHiddenFile(stats, spot.path);
        return { handle, path: spot.path, stats };
      } catch (err) {
        await handle.close();
        throw err;
      }
    });
  }

  /** `openFile` returning the handle alone. */
  async open(input: string, flags: number, mode = 0o644): Promise<FileHandle> {
    return (await this.openFile(input, flags, { mode })).handle;
  }

  /** Refuses an opened file that is one of Navi's private files, whatever name reached it. */
  assertNotHiddenFile(stats: Stats, path: string): void {
    for (const h of this.hidden) {
      let known: Stats;
      try {
        known = statSync(h);
      } catch {
        continue;
      }
      if (known.ino === stats.ino && known.dev === stats.dev) throw this.hiddenError(path);
    }
  }

  /** One pass from the root towards `path`: a spot, or the path to walk instead (a link met). */
  private async walk(path: string, shown: string, options: WalkOptions): Promise<Step> {
    this.assertAllowed(path, shown);
    const root = this.rootOf(path);
    const names = path === root ? [] : path.slice(root === sep ? 1 : root.length + 1).split(sep);
    let dir = await this.openRoot(root, options.createParents === true);
    let current = root;
    try {
      let state = await this.stateOf(dir, undefined, root);
      if (names.length === 0) return { spot: { dir, name: '.', path: root } };
      for (let i = 0; i < names.length - 1; i++) {
        options.signal?.throwIfAborted();
        const name = names[i] as string;
        const next = join(current, name);
        if (state.procRoot) assertNotProcessEntry(name, next, shown);
        const opened = await this.step(dir, name, next, options.createParents === true);
        if (typeof opened === 'string') {
          await dir.close();
          return { redirect: resolve(current, opened, ...names.slice(i + 1)) };
        }
        if (opened === undefined) {
          await dir.close();
          return { redirect: path };
        }
        try {
          state = await this.stateOf(opened, state, next);
        } catch (err) {
          await opened.close();
          throw err;
        }
        await dir.close();
        dir = opened;
        current = next;
      }
      const name = names[names.length - 1] as string;
      const last = join(current, name);
      if (state.procRoot) assertNotProcessEntry(name, last, shown);
      return { spot: { dir, name, path: last } };
    } catch (err) {
      await closeQuietly(dir);
      throw err;
    }
  }

  /** Opens folder `name`: its handle, a link's target text, or undefined to walk again (it changed). */
  private async step(
    dir: FileHandle,
    name: string,
    next: string,
    create: boolean,
  ): Promise<FileHandle | string | undefined> {
    try {
      return await openDirAt(dir, name);
    } catch (err) {
      const code = codeOf(err);
      if (code === 'ENOENT' && create) {
        this.assertWritable(next);
        await mkdirAt(dir, name).catch((e: unknown) => {
          if (codeOf(e) !== 'EEXIST') throw e;
        });
        return undefined;
      }
      if (code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
      const target = await readlinkAt(dir, name).catch(() => undefined);
      if (target !== undefined) return target;
      // Not a link: a file on the way (a real error), or a folder again after a swap.
      if ((await lstatIfAny(dir, name))?.isDirectory()) return undefined;
      throw Object.assign(new Error(`A part of ${next} is not a folder.`), { code: 'ENOTDIR', path: next });
    }
  }

  private async openRoot(root: string, create: boolean): Promise<FileHandle> {
    const flags = constants.O_RDONLY | O_DIRECTORY;
    try {
      return await open(root, flags);
    } catch (err) {
      if (codeOf(err) !== 'ENOENT') throw err;
      if (!create) {
        throw new PathRefusedError(
          `The allowed folder ${root} does not exist yet; write a file into it to create it.`,
        );
      }
      await mkdir(root, { recursive: true });
      return await open(root, flags);
    }
  }

  /**
   * The /proc rule's view of an opened folder. A procfs mount is only entered at its own root
   * (inode 1), where its process entries are then refused by name: a single process's folder
   * mounted elsewhere is refused outright.
   */
  private async stateOf(dir: FileHandle, parent: DirState | undefined, path: string): Promise<DirState> {
    const stats = await dir.stat();
    if (parent && stats.dev === parent.dev) return { dev: stats.dev, procRoot: false };
    const onProc = (await fsTypeOf(dir)) === PROC_SUPER_MAGIC;
    if (onProc && parent && stats.ino !== 1) {
      throw new PathRefusedError(
        `Access denied: ${path} is a part of /proc mounted elsewhere; process information is not ` +
          'readable through file tools.',
      );
    }
    return { dev: stats.dev, procRoot: onProc && stats.ino === 1 };
  }

  private rootOf(path: string): string {
    if (this.unrestricted) return sep;
    let best = '';
    for (const root of this.roots) if (isWithin(root, path) && root.length > best.length) best = root;
    return best;
  }

  private hiddenError(path: string): PathRefusedError {
    return new PathRefusedError(
      `Access denied: ${path} is Navi's own private data (its database, settings or secrets); ` +
        'no tool may read or change it.',
    );
  }

  private expandHome(p: string): string {
    if (p === '~') return this.home;
    if (p.startsWith('~/')) return join(this.home, p.slice(2));
    return p;
  }
}

/** True when `child` is `parent` or inside it (both absolute and normalised). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}
