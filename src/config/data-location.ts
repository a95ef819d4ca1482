/**
 * Where Navi's data lives (docs/running.md#where-the-data-lives): the database, the session files
 * and the vault's three files. A new install keeps them in the data folder (NAVI_DATA_DIR);
 * an install from before the data folder kept them in the working folder, and keeps using them
 * there until they are moved, so an upgrade never starts on an empty database or a new vault
 * beside the old one. A setting that names a path always wins.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SettingOrigin, Settings } from './settings.js';

/** The settings naming data files, in the order they are listed to people. */
export const DATA_FILE_SETTINGS = [
  'DB_PATH',
  'SESSION_FILES_DIR',
  'GNEXUS_VAULT_PATH',
  'GNEXUS_KEY_FILE',
  'GNEXUS_AUDIT_LOG',
] as const;

export type DataFileSetting = (typeof DATA_FILE_SETTINGS)[number];

/**
 * The name each takes in the data folder, which is also its old default in the working folder
 * (and so the settings table's default).
 */
export const DATA_FILE_NAMES: Readonly<Record<DataFileSetting, string>> = {
  DB_PATH: 'navi.db',
  SESSION_FILES_DIR: 'session_files',
  GNEXUS_VAULT_PATH: 'vault.db',
  GNEXUS_KEY_FILE: 'vault.key',
  GNEXUS_AUDIT_LOG: 'vault-audit.jsonl',
};

/**
 * Gives each data setting left at its default (`isDefault`) an absolute path: in the working
 * folder `cwd` when that is where an older install kept it, else in `dataDir`. `./navi.db`
 * existing (with DB_PATH unset) keeps every one of them in the working folder, as before; with
 * DB_PATH set, a vault or session folder found there is still kept, since starting a new empty
 * vault beside the person's secrets would look like losing them.
 */
export function placeDataFiles(
  values: Record<string, unknown>,
  isDefault: (setting: DataFileSetting) => boolean,
  dataDir: string,
  cwd: string,
): void {
  const legacyDatabase = isDefault('DB_PATH') && existsSync(resolve(cwd, DATA_FILE_NAMES.DB_PATH));
  for (const setting of DATA_FILE_SETTINGS) {
    if (!isDefault(setting)) continue;
    const old = resolve(cwd, DATA_FILE_NAMES[setting]);
    values[setting] =
      legacyDatabase || existsSync(old) ? old : resolve(cwd, dataDir, DATA_FILE_NAMES[setting]);
  }
}

/**
 * The folder of `navi backup`'s backups and of the data `navi restore` moved aside, inside the
 * data folder. They hold copies of the database and the vault's key, so the file tools and the
 * sandbox hide it like the originals.
 */
export function backupsDir(dataDir: string): string {
  return join(dataDir, 'backups');
}

/** Where one data file is, and why there. */
export interface DataFileLocation {
  setting: DataFileSetting;
  /** Absolute. */
  path: string;
  /** `data`: the data folder; `working`: the working folder of an older install; `setting`: named by its setting. */
  where: 'data' | 'working' | 'setting';
}

export interface DataLocation {
  /** NAVI_DATA_DIR, absolute. */
  dataDir: string;
  files: DataFileLocation[];
  /** The files still in the working folder of an older install. */
  legacy: DataFileLocation[];
}

/** Where the data of `settings` is; relative paths are resolved against `cwd`. */
export function dataLocation(
  settings: Pick<Settings, DataFileSetting | 'NAVI_DATA_DIR'>,
  origins: Readonly<Partial<Record<string, SettingOrigin>>>,
  cwd = process.cwd(),
): DataLocation {
  const dataDir = resolve(cwd, settings.NAVI_DATA_DIR);
  const files = DATA_FILE_SETTINGS.map((setting): DataFileLocation => {
    const path = resolve(cwd, settings[setting]);
    const explicit = origins[setting] !== undefined && origins[setting] !== 'default';
    const where = explicit
      ? 'setting'
      : path === resolve(dataDir, DATA_FILE_NAMES[setting])
        ? 'data'
        : 'working';
    return { setting, path, where };
  });
  return { dataDir, files, legacy: files.filter((f) => f.where === 'working') };
}

/**
 * The start-up notice of an older install: where the data is, and the command that moves it
 * into the data folder. Undefined when nothing is left in the working folder.
 */
export function legacyDataNotice(location: DataLocation): string | undefined {
  if (location.legacy.length === 0) return undefined;
  const names = location.legacy.map((f) => f.path).join(', ');
  return (
    `Navi's data is in the working folder, where installs before the data folder kept it: ${names}. ` +
    `New installs keep it in ${location.dataDir}. To move it there, stop Navi and run npx navi data move ` +
    '(or set DB_PATH, SESSION_FILES_DIR and the GNEXUS_* paths to keep it where it is); see docs/running.md.'
  );
}
