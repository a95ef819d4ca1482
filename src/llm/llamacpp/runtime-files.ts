/** Where the llama.cpp runtime lives in LLAMACPP_RUNTIME_DIR, and which one Navi installs. */
import { type Dirent, readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isRecord } from '../../util/is-record.js';

export const RUNTIME_PACKAGE = 'node-llama-cpp';
/** The node-llama-cpp release Navi is written and tested against. */
export const RUNTIME_VERSION = '3.22.1';

export interface RuntimeEntry {
  /** The module to import: the package's ESM entry. */
  path: string;
  version: string;
}

/** The installed package's entry module and version, or undefined when it is not installed. */
export function runtimeEntry(dir: string): RuntimeEntry | undefined {
  const packageDir = join(dir, 'node_modules', RUNTIME_PACKAGE);
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(manifest)) return undefined;
  const { version, exports, main } = manifest;
  const entry = importEntry(exports) ?? (typeof main === 'string' ? main : undefined);
  if (typeof version !== 'string' || !entry) return undefined;
  return { path: resolve(packageDir, entry), version };
}

/** `exports["."]`'s import condition (or node, or default), or a plain string export. */
function importEntry(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (!isRecord(exports)) return undefined;
  const root = exports['.'] ?? exports;
  if (typeof root === 'string') return root;
  if (!isRecord(root)) return undefined;
  for (const key of ['import', 'node', 'default']) {
    const value = root[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Bytes of the files under `dir` (symbolic links not followed); 0 when it does not exist. */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}
