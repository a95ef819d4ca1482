/**
 * Temporary working folders of `code_exec` runs. They are kept for a while after the run so
 * `share_file` can copy what the program wrote, then removed.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWithin } from '../fs/path-guard.js';

export class ScratchDirs {
  private readonly dirs = new Map<string, number>();

  constructor(private readonly options: { ttlMs?: number; parent?: string; now?: () => number } = {}) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Creates a fresh, empty folder (its real path) and forgets expired ones. */
  create(prefix: string): string {
    this.sweep();
    const dir = realpathSync(mkdtempSync(join(this.options.parent ?? tmpdir(), prefix)));
    this.dirs.set(dir, this.now());
    return dir;
  }

  /** True when `realPath` lies inside a live scratch folder. */
  contains(realPath: string): boolean {
    this.sweep();
    for (const dir of this.dirs.keys()) if (isWithin(dir, realPath)) return true;
    return false;
  }

  /** Removes folders older than the time to live. */
  sweep(): void {
    const ttl = this.options.ttlMs ?? 60 * 60 * 1000;
    for (const [dir, created] of this.dirs) {
      if (this.now() - created >= ttl) {
        rmSync(dir, { recursive: true, force: true });
        this.dirs.delete(dir);
      }
    }
  }

  /** Removes every folder (shutdown, tests). */
  clear(): void {
    for (const dir of this.dirs.keys()) rmSync(dir, { recursive: true, force: true });
    this.dirs.clear();
  }
}
