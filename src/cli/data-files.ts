/**
 * Navi's data as files, for the commands that copy or move it (`navi backup`, `navi restore`,
 * `navi data move`): which files make up the data, and copying and moving them whole.
 */
import {
  chmodSync,
  copyFileSync,
  cpSync,
  type Dirent,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DATA_FILE_NAMES, type DataFileSetting } from '../config/data-location.js';
import { ownedSettingsPath } from '../config/owned-settings.js';
import type { Settings } from '../config/settings.js';
import { hasTable } from '../store/sqlite/migrate.js';

/** One part of the data, as a backup names it. */
export type DataItemName =
  | 'database'
  | 'session_files'
  | 'vault_database'
  | 'vault_key'
  | 'vault_audit_log'
  | 'settings';

export const DATA_ITEM_NAMES: readonly DataItemName[] = [
  'database',
  'session_files',
  'vault_database',
  'vault_key',
  'vault_audit_log',
  'settings',
];

export interface DataItem {
  item: DataItemName;
  /** Where it is (or would be) for these settings, absolute. */
  path: string;
  /** Its file name inside a backup. */
  name: string;
  kind: 'sqlite' | 'file' | 'folder';
  /** The setting that places it, for messages. */
  setting: string;
}

export type DataSettings = Pick<
  Settings,
  | 'DB_PATH'
  | 'SESSION_FILES_DIR'
  | 'GNEXUS_VAULT_PATH'
  | 'GNEXUS_KEY_FILE'
  | 'GNEXUS_AUDIT_LOG'
  | 'NAVI_DATA_DIR'
>;

/** Whether the settings put the database in PostgreSQL (DATABASE_URL set) rather than the SQLite file DB_PATH. */
export function usesPostgres(settings: Pick<Settings, 'DATABASE_URL'>): boolean {
  return settings.DATABASE_URL.trim() !== '';
}

/** Every part of the data of `settings`, relative paths resolved against `cwd`. */
export function dataItems(settings: DataSettings, cwd = process.cwd()): DataItem[] {
  // Each part is named in a backup as in the data folder.
  const part = (item: DataItemName, setting: DataFileSetting, kind: DataItem['kind']): DataItem => ({
    item,
    path: resolve(cwd, settings[setting]),
    name: DATA_FILE_NAMES[setting],
    kind,
    setting,
  });
  return [
    part('database', 'DB_PATH', 'sqlite'),
    part('session_files', 'SESSION_FILES_DIR', 'folder'),
    part('vault_database', 'GNEXUS_VAULT_PATH', 'sqlite'),
    part('vault_key', 'GNEXUS_KEY_FILE', 'file'),
    part('vault_audit_log', 'GNEXUS_AUDIT_LOG', 'file'),
    {
      item: 'settings',
      path: ownedSettingsPath(resolve(cwd, settings.NAVI_DATA_DIR)),
      name: 'settings.json',
      kind: 'file',
      setting: 'NAVI_DATA_DIR',
    },
  ];
}

/** A time as a file name can hold it: `20260301T120501Z`. */
export function fileStamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** Bytes and regular files under `path` (a file or a folder); links are not followed. */
export function sizeOf(path: string): { bytes: number; files: number } {
  const stat = lstatSync(path);
  if (stat.isFile()) return { bytes: stat.size, files: 1 };
  if (!stat.isDirectory()) return { bytes: 0, files: 0 };
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(path)) {
    const inner = sizeOf(join(path, entry));
    bytes += inner.bytes;
    files += inner.files;
  }
  return { bytes, files };
}

const isMissing = (err: unknown) => (err as { code?: unknown }).code === 'ENOENT';

/**
 * Copies the folder `from` to `to` (created), readable by the owner only. Files that vanish
 * while it runs (an expired upload removed by the running server) are skipped; links are
 * skipped too, since Navi never stores one there. Returns what was copied.
 */
export function copyFolder(from: string, to: string): { bytes: number; files: number } {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  let entries: Dirent[];
  try {
    entries = readdirSync(from, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return { bytes: 0, files: 0 };
    throw err;
  }
  let bytes = 0;
  let files = 0;
  for (const entry of entries) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      const inner = copyFolder(source, target);
      bytes += inner.bytes;
      files += inner.files;
    } else if (entry.isFile()) {
      try {
        copyFileSync(source, target);
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      chmodSync(target, 0o600);
      bytes += statSync(target).size;
      files += 1;
    }
  }
  return { bytes, files };
}

/** Copies a file or a folder to `to`, creating its parent folder; private to the owner. */
export function copyPrivate(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  if (lstatSync(from).isDirectory()) {
    copyFolder(from, to);
    return;
  }
  copyFileSync(from, to);
  chmodSync(to, 0o600);
}

/**
 * Moves `from` to `to` (a file or a folder), creating `to`'s parent folder. Across file systems,
 * where a rename cannot go, it is copied and then removed. Throws when `to` exists.
 */
export function movePath(from: string, to: string): void {
  if (existsSync(to)) throw new Error(`${to} exists already`);
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EXDEV') throw err;
    cpSync(from, to, {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
      errorOnExist: true,
    });
    rmSync(from, { recursive: true, force: true });
  }
}

/**
 * Points the session files recorded in the Navi database `dbPath` at the folder `to` where they
 * were under `from`. The database records each file's absolute path, and the server serves only
 * a file inside SESSION_FILES_DIR, so files moved or restored elsewhere would otherwise be gone
 * for it. Returns how many records changed. Navi must not be running.
 */
export function rebaseSessionFiles(dbPath: string, from: string, to: string): number {
  if (from === to) return 0;
  const db = new BetterSqlite3(dbPath, { fileMustExist: true, timeout: 5000 });
  try {
    if (!hasTable(db, 'session_files')) return 0;
    const prefix = `${from}/`;
    return db
      .prepare('UPDATE session_files SET path = ? || substr(path, ?) WHERE substr(path, 1, ?) = ?')
      .run(`${to}/`, prefix.length + 1, prefix.length, prefix).changes;
  } finally {
    db.close();
  }
}
