/**
 * Confines file access to FS_ALLOWED_PATHS (DESIGN §9). A path is resolved the way the kernel
 * will see it — `~` expanded, `..` collapsed, symbolic links of its existing part followed —
 * and refused unless the result lies inside one of the roots (`*` = anywhere).
 *
 * Checking a path and then opening it leaves a window in which a file can be swapped for a
 * symbolic link. `open()` closes it: the last component is opened with O_NOFOLLOW, and the path
 * the kernel actually opened (read back from /proc/self/fd) is checked again before any byte is
 * read or written.
 */
import { constants, realpathSync } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

export class PathRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefusedError';
  }
}

export interface PathGuardOptions {
  /** FS_ALLOWED_PATHS; `*` anywhere in the list allows every path. */
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

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

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
      : options.roots.map((r) => {
          const abs = resolve(this.expandHome(r));
          try {
            return realpathSync(abs);
          } catch {
            return abs;
          }
        });
    this.baseDir = options.baseDir ?? this.roots[0] ?? process.cwd();
    this.hidden = (options.hidden ?? []).map(realOrResolved);
    this.readOnly = (options.readOnly ?? []).map((r) => ({ path: realOrResolved(r.path), why: r.why }));
  }

  /** Human-readable list of the roots, for refusals and manuals. */
  describeRoots(): string {
    return this.unrestricted ? 'anywhere (*)' : this.roots.join(', ');
  }

  /** True when `realPath` (already resolved) is a root or lies below one. */
  contains(realPath: string): boolean {
    if (this.unrestricted) return true;
    return this.roots.some((root) => isWithin(root, realPath));
  }

  /**
   * Resolves `input` to the real path it designates (symbolic links of the existing part
   * followed, the missing rest appended) and throws `PathRefusedError` when it lies outside
   * the roots.
   */
  async resolve(input: string): Promise<string> {
    if (typeof input !== 'string' || input.trim() === '') throw new PathRefusedError('A path is required.');
    if (input.includes('\0')) throw new PathRefusedError('Path contains a NUL byte.');
    const absolute = resolve(this.baseDir, this.expandHome(input.trim()));
    const real = await realpathOfExistingPart(absolute);
    this.assertAllowed(real, input);
    return real;
  }

  /**
   * Like `resolve`, but the last component is not followed: for acting on a link itself
   * (delete, move, list). The folder holding it is resolved and checked.
   */
  async resolveNoFollow(input: string): Promise<string> {
    const parentReal = await this.resolve(dirname(resolve(this.baseDir, this.expandHome(input.trim()))));
    const name = basename(resolve(this.baseDir, this.expandHome(input.trim())));
    const real = parentReal === sep && name === '' ? sep : join(parentReal, name);
    this.assertAllowed(real, input);
    return real;
  }

  assertAllowed(realPath: string, shown: string = realPath): void {
    if (!this.contains(realPath)) {
      throw new PathRefusedError(
        `Access denied: "${shown}" resolves to ${realPath}, which is outside the allowed folders ` +
          `(${this.describeRoots()}). Use a path inside one of them.`,
      );
    }
    if (this.hidden.some((h) => isWithin(h, realPath))) {
      throw new PathRefusedError(
        `Access denied: ${realPath} is Navi's own private data (its database, settings or secrets); ` +
          'no tool may read or change it.',
      );
    }
  }

  /** Refuses a change to `realPath` when it lies in one of the read-only folders. */
  assertWritable(realPath: string): void {
    const hit = this.readOnly.find((r) => isWithin(r.path, realPath));
    if (hit) throw new PathRefusedError(`Refused: ${realPath} is in ${hit.path}, ${hit.why}`);
  }

  /**
   * Opens an already resolved path without following a symbolic link in its last component
   * and checks again where the descriptor really points. `flags` must not contain O_TRUNC:
   * truncate through the handle after the check.
   */
  async open(realPath: string, flags: number, mode = 0o644): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      handle = await open(realPath, flags | O_NOFOLLOW, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new PathRefusedError(
          `Access denied: ${realPath} was replaced by a symbolic link; not following it.`,
        );
      }
      throw err;
    }
    try {
      const opened = await openedPath(handle, realPath);
      if (!this.contains(opened)) {
        throw new PathRefusedError(
          `Access denied: ${realPath} now leads to ${opened}, outside the allowed folders (${this.describeRoots()}).`,
        );
      }
      this.assertAllowed(opened);
      if ((flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0) this.assertWritable(opened);
      return handle;
    } catch (err) {
      await handle.close();
      throw err;
    }
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

/** realpath of the longest existing prefix of `absolute`, with the missing rest appended. */
export async function realpathOfExistingPart(absolute: string): Promise<string> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      // A dangling symbolic link: follow its target textually so it cannot point outside.
      const link = await lstat(current).catch(() => undefined);
      if (link?.isSymbolicLink()) {
        const target = await readlink(current);
        const next = resolve(dirname(current), target);
        if (next === current) throw new PathRefusedError(`Symbolic link loop at ${current}.`);
        current = next;
        continue;
      }
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** The path the kernel opened for `handle`: /proc/self/fd where available, else realpath. */
async function openedPath(handle: FileHandle, fallback: string): Promise<string> {
  try {
    const target = await readlink(`/proc/self/fd/${handle.fd}`);
    if (isAbsolute(target)) return target.replace(/ \(deleted\)$/, '');
  } catch {
    // No /proc (macOS): compare the descriptor with what the path designates now.
  }
  const [byFd, real] = await Promise.all([handle.stat(), realpath(fallback)]);
  const byPath = await lstat(real);
  if (byFd.ino !== byPath.ino || byFd.dev !== byPath.dev) {
    throw new PathRefusedError(`Access denied: ${fallback} changed while it was being opened.`);
  }
  return real;
}
