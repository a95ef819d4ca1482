/**
 * A folder Navi writes into on its own account (session files, user tools). Its real path is
 * fixed when Navi starts; every later open walks that path from `/` one component at a time
 * without following a link, so a folder on the way swapped for a symbolic link afterwards (for
 * instance by the agent, when the folder lies inside its allowed folders) is refused instead of
 * redirecting Navi's writes elsewhere.
 */
import { constants, realpathSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  assertBeneathAvailable,
  closeQuietly,
  codeOf,
  mkdirAt,
  O_DIRECTORY,
  openDirAt,
  PathRefusedError,
} from './beneath.js';

/** realpath of the longest existing prefix of `absolute`, with the missing rest appended. */
export function realpathOfExistingPartSync(absolute: string): string {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

export class FixedDir {
  /** The real path, fixed at construction. */
  readonly path: string;

  constructor(path: string) {
    this.path = realpathOfExistingPartSync(resolve(path));
  }

  /**
   * Opens the folder (creating missing parts when `create`) and returns its handle; the caller
   * closes it. Refuses when a part of the path is now a symbolic link or not a folder.
   */
  async open(options: { create: boolean; signal?: AbortSignal }): Promise<FileHandle> {
    assertBeneathAvailable();
    let dir = await open('/', constants.O_RDONLY | O_DIRECTORY);
    let current = '/';
    try {
      for (const name of this.path.split('/').filter((n) => n !== '')) {
        options.signal?.throwIfAborted();
        current = join(current, name);
        let child: FileHandle;
        try {
          child = await openDirAt(dir, name);
        } catch (err) {
          if (codeOf(err) === 'ENOENT' && options.create) {
            await mkdirAt(dir, name).catch((e: unknown) => {
              if (codeOf(e) !== 'EEXIST') throw e;
            });
            child = await openDirAt(dir, name).catch((e: unknown) => this.refuse(e, current));
          } else child = await this.refuse(err, current);
        }
        await dir.close();
        dir = child;
      }
      return dir;
    } catch (err) {
      await closeQuietly(dir);
      throw err;
    }
  }

  private refuse(err: unknown, current: string): never {
    if (codeOf(err) === 'ENOTDIR' || codeOf(err) === 'ELOOP') {
      throw new PathRefusedError(
        `${current} (on the way to Navi's folder ${this.path}) is no longer a plain folder; ` +
          'it may have been replaced by a symbolic link. Restore it or restart Navi.',
      );
    }
    throw err;
  }
}
