/**
 * `navi backup [DEST]`: a copy of Navi's data in a folder of its own, made while Navi runs. The
 * databases are copied with SQLite's online backup, which reads one consistent state however
 * busy the server is; the session files, the vault's key file and audit log and the settings
 * file are copied as files; `manifest.json`, written last, lists what the folder holds, so a
 * backup cut short has none and `navi restore` refuses it.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import packageJson from '../../package.json' with { type: 'json' };
import { backupsDir } from '../config/data-location.js';
import type { Settings } from '../config/settings.js';
import { checkIntegrity } from '../store/sqlite/database.js';
import { hasTable, recordedSchemaVersion } from '../store/sqlite/migrate.js';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type BackupManifest,
  MANIFEST_FILE,
  type ManifestItem,
} from './backup-manifest.js';
import { type CliIo, CliRefusal, exitOnRefusal, isHelp } from './cli-io.js';
import {
  copyFolder,
  copyPrivate,
  type DataItem,
  type DataItemName,
  dataItems,
  fileStamp,
  sizeOf,
  usesPostgres,
} from './data-files.js';

export const BACKUP_USAGE = `Usage: navi backup [DEST]

Copies Navi's data into the folder DEST (default: <NAVI_DATA_DIR>/backups/navi-<UTC time>): the
database, the session files, the vault's database, key file and audit log, and settings.json,
with a manifest.json saying what is there. Safe while Navi is running. Restore it with
navi restore DEST. The copy holds the vault's key file: keep it as private as the data.
With DATABASE_URL set the database is in PostgreSQL: back that up with pg_dump.`;

/** Pages per backup step: all of them, so the copy is one read of one consistent state. */
const ALL_PAGES = 0x7fffffff;

/** Runs `navi backup`; 0 when the backup is complete, 1 when refused or failed. */
export async function runBackup(settings: Settings, args: string[], io: CliIo): Promise<number> {
  if (isHelp(args[0])) {
    io.stdout.write(`${BACKUP_USAGE}\n`);
    return 0;
  }
  return exitOnRefusal('backup', io, async () => {
    if (args.length > 1 || args[0]?.startsWith('-'))
      throw new CliRefusal(
        `navi backup takes at most one argument, the folder to write; got ${args.map((a) => JSON.stringify(a)).join(' ')}`,
      );
    const dest = resolve(args[0] ?? join(backupsDir(settings.NAVI_DATA_DIR), `navi-${fileStamp()}`));
    const manifest = await backup(settings, dest);
    const db = manifest.items.find((i) => i.item === 'database');
    io.stdout.write(`Backed up Navi's data to ${dest}\n`);
    for (const item of manifest.items) io.stdout.write(`  ${describe(item)}\n`);
    if (manifest.absent.length > 0)
      io.stdout.write(`  not present, so not copied: ${manifest.absent.join(', ')}\n`);
    if (manifest.database.engine === 'postgres')
      io.stdout.write(
        `The database is in PostgreSQL (DATABASE_URL), so it is not in this folder: back it up with pg_dump, e.g. pg_dump --format=custom --file=${join(dest, 'navi.pgdump')} "$DATABASE_URL". Restore the rest with: npx navi restore ${dest}\n`,
      );
    else
      io.stdout.write(
        `The database holds ${manifest.database.sessions} sessions (${formatBytes(db?.bytes ?? 0)}). Restore with: npx navi restore ${dest}\n`,
      );
    return 0;
  });
}

function describe(item: ManifestItem): string {
  const files = item.item === 'session_files' ? `, ${item.files} files` : '';
  return `${item.item}: ${item.name} (${formatBytes(item.bytes)}${files}) from ${item.from}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Writes the backup of `settings`' data to `dest` and returns its manifest. Refuses (with
 * `CliRefusal`) a `dest` that is a file or a folder with anything in it, and a data folder with
 * no database. A failure half-way removes what it wrote.
 */
export async function backup(settings: Settings, dest: string): Promise<BackupManifest> {
  // With DATABASE_URL the database is PostgreSQL's to back up (pg_dump); the rest is files here.
  const postgres = usesPostgres(settings);
  const all = dataItems(settings);
  const items = all.filter((i) => !postgres || i.item !== 'database');
  const database = all.find((i) => i.item === 'database') as DataItem;
  if (!postgres && !existsSync(database.path))
    throw new CliRefusal(
      `there is no database at ${database.path} (DB_PATH), so nothing to back up; check DB_PATH and NAVI_DATA_DIR, or start Navi once to create it`,
    );
  for (const item of items)
    if (item.kind === 'folder' && (dest === item.path || dest.startsWith(`${item.path}/`)))
      throw new CliRefusal(
        `${dest} is inside ${item.path} (${item.setting}), which the backup copies; name a folder outside it`,
      );
  if (existsSync(dest)) {
    if (!statSync(dest).isDirectory())
      throw new CliRefusal(`${dest} is a file; name a new folder for the backup`);
    if (readdirSync(dest).length > 0)
      throw new CliRefusal(`${dest} is not empty; name a new folder for the backup, or empty this one`);
  }
  const created = !existsSync(dest);
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  chmodSync(dest, 0o700);
  try {
    const copied: ManifestItem[] = [];
    const absent: DataItemName[] = [];
    let schemaVersion = 0;
    let sessions = 0;
    for (const item of items) {
      if (!existsSync(item.path)) {
        absent.push(item.item);
        continue;
      }
      const target = join(dest, item.name);
      if (item.kind === 'sqlite') {
        await copyDatabase(item.path, target);
        if (item.item === 'database') ({ schemaVersion, sessions } = describeDatabase(target));
      } else if (item.kind === 'folder') {
        copyFolder(item.path, target);
      } else {
        copyPrivate(item.path, target);
      }
      copied.push({ item: item.item, name: item.name, ...sizeOf(target), from: item.path });
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      navi_version: packageJson.version,
      created_at: new Date().toISOString(),
      items: copied,
      absent,
      database: postgres
        ? { schema_version: 0, sessions: 0, engine: 'postgres' }
        : { schema_version: schemaVersion, sessions },
    };
    writeFileSync(join(dest, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    return manifest;
  } catch (err) {
    if (created) rmSync(dest, { recursive: true, force: true });
    else for (const name of readdirSync(dest)) rmSync(join(dest, name), { recursive: true, force: true });
    if (err instanceof CliRefusal) throw err;
    throw new CliRefusal(`the backup failed and was removed: ${(err as Error).message}`);
  }
}

/**
 * One consistent copy of the SQLite file `source`, however busy its writers are, as a single
 * file (rollback journal, not WAL) that opens read-only anywhere. A copy that fails SQLite's
 * integrity check is refused: the database itself needs looking at.
 */
async function copyDatabase(source: string, target: string): Promise<void> {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(source, { fileMustExist: true, timeout: 5000 });
    // The first step only learns the size; then everything in one step, under one read
    // transaction (a writer changing the file between steps would make SQLite start over).
    await db.backup(target, { progress: () => ALL_PAGES });
  } catch (err) {
    throw new Error(`cannot copy the database ${source}: ${(err as Error).message}`, { cause: err });
  } finally {
    db?.close();
  }
  chmodSync(target, 0o600);
  const copy = new BetterSqlite3(target);
  try {
    copy.pragma('journal_mode = DELETE');
    const problems = checkIntegrity(copy);
    if (problems.length > 0)
      throw new CliRefusal(
        `the copy of ${source} fails SQLite's integrity check (${problems[0]}); the database itself may be damaged: run npx navi doctor`,
      );
  } finally {
    copy.close();
  }
}

/** The schema version and session count of a copied Navi database. */
function describeDatabase(file: string): { schemaVersion: number; sessions: number } {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const schemaVersion = recordedSchemaVersion(db) ?? 0;
    const sessions = hasTable(db, 'sessions')
      ? (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n
      : 0;
    return { schemaVersion, sessions };
  } finally {
    db.close();
  }
}
