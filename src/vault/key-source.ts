/**
 * Where the master key comes from: GNEXUS_MASTER_KEY when set, else the key file. A new vault
 * without either gets a key file of 32 random bytes, created so that two processes starting at
 * once end with one file that both read.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { replaceFile, syncFolder, tempName, writeNewFile } from './durable-file.js';

/** A key file is a line of base64; anything much bigger is some other file. */
const MAX_KEY_FILE_BYTES = 4096;

/**
 * Where a key file's replacement waits during a rotation (see `rotateVaultKey`); hidden from
 * the agent's file tools and sandbox like the key file itself.
 */
export function pendingKeyFile(keyFile: string): string {
  return `${keyFile}.new`;
}

export type KeyFileRead = { ok: true; key: string } | { ok: false; missing: boolean; reason: string };

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads the key file. A file readable by others still works, but is narrowed to 0600 when this
 * process owns it: the key is the whole vault.
 */
export function readKeyFile(path: string): KeyFileRead {
  try {
    const info = statSync(path);
    if (!info.isFile()) return { ok: false, missing: false, reason: `${path} is not a file` };
    if (info.size > MAX_KEY_FILE_BYTES)
      return { ok: false, missing: false, reason: `${path} is ${info.size} bytes, too big for a key file` };
    if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) {
      try {
        chmodSync(path, 0o600);
      } catch {
        // Reading still works; a file we cannot narrow is the person's to fix.
      }
    }
    const key = readFileSync(path, 'utf8').trim();
    if (key === '') return { ok: false, missing: false, reason: `the key file ${path} is empty` };
    return { ok: true, key };
  } catch (err) {
    // ENOTDIR: a path through a file; no key file there either, and creating one will say why not.
    const code = (err as NodeJS.ErrnoException).code;
    const missing = code === 'ENOENT' || code === 'ENOTDIR';
    return {
      ok: false,
      missing,
      reason: missing
        ? `the key file ${path} does not exist`
        : `cannot read the key file ${path} (${errorText(err)})`,
    };
  }
}

/**
 * Creates the key file with a fresh random key unless it exists, and returns the key the file
 * holds afterwards: ours, or that of a process that created it first. The key is written
 * whole to a temporary file and then hard-linked into place; the link fails when the name is
 * taken, so no process ever reads a half-written key. Throws when the file cannot be created.
 */
export function createKeyFile(path: string): string {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = newMasterKey();
  const temp = tempName(path);
  writeNewFile(temp, `${key}\n`);
  try {
    linkSync(temp, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      // A filesystem without hard links: an exclusive create is the next best thing.
      try {
        writeNewFile(path, `${key}\n`);
      } catch (inner) {
        if ((inner as NodeJS.ErrnoException).code !== 'EEXIST') throw inner;
      }
    }
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Already gone.
    }
  }
  syncFolder(path);
  const read = readKeyFile(path);
  if (!read.ok) throw new Error(read.reason);
  return read.key;
}

/** Replaces (or creates) `path` with `key` through a temporary file and a rename: all or nothing. */
export function writeKeyFileAtomically(path: string, key: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  replaceFile(path, `${key}\n`);
}

/** Renames a file into place and makes the rename durable. */
export function moveKeyFile(from: string, to: string): void {
  renameSync(from, to);
  syncFolder(to);
}

export function newMasterKey(): string {
  return randomBytes(32).toString('base64');
}
