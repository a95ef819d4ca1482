/**
 * `navi restore SRC`: puts a backup made by `navi backup` in place of the current data. Nothing
 * is deleted: the current files are moved to `<NAVI_DATA_DIR>/backups/before-restore-<time>/`.
 * The backup is checked whole first (its manifest, every part's size, the databases' integrity
 * and schema version), and Navi must not be running; each part is copied next to its place
 * before any current file moves, so a failure leaves the data as it was.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { backupsDir } from '../config/data-location.js';
import type { Settings } from '../config/settings.js';
import { journalsOf } from '../machine/fs/navi-paths.js';
import { checkIntegrity } from '../store/sqlite/database.js';
import { recordedSchemaVersion } from '../store/sqlite/migrate.js';
import { migrations } from '../store/sqlite/migrations/index.js';
import { type BackupManifest, MANIFEST_FILE, parseManifest } from './backup-manifest.js';
import { type CliIo, CliRefusal, exitOnRefusal, isHelp } from './cli-io.js';
import {
  copyPrivate,
  type DataItem,
  dataItems,
  fileStamp,
  movePath,
  rebaseSessionFiles,
  sizeOf,
  usesPostgres,
} from './data-files.js';
import { naviUsingData } from './navi-running.js';

export const RESTORE_USAGE = `Usage: navi restore SRC

Puts the backup in the folder SRC (written by navi backup) in place of Navi's current data,
at the places the settings name (DB_PATH, SESSION_FILES_DIR, the GNEXUS_* paths, NAVI_DATA_DIR).
Stop Navi first. The current files are moved to <NAVI_DATA_DIR>/backups/before-restore-<time>/;
parts the backup does not hold are left as they are.`;

/** Runs `navi restore`; 0 when restored, 1 when refused or failed. */
export async function runRestore(settings: Settings, args: string[], io: CliIo): Promise<number> {
  if (isHelp(args[0])) {
    io.stdout.write(`${RESTORE_USAGE}\n`);
    return 0;
  }
  return exitOnRefusal('restore', io, async () => {
    if (args.length !== 1 || args[0]?.startsWith('-'))
      throw new CliRefusal(
        'navi restore takes one argument, the backup folder navi backup wrote; run navi restore help',
      );
    const report = await restore(settings, resolve(args[0] as string));
    io.stdout.write(`Restored the backup of ${report.manifest.created_at} from ${report.src}\n`);
    for (const line of report.restored) io.stdout.write(`  restored ${line}\n`);
    for (const line of report.movedAside) io.stdout.write(`  kept the current one as ${line}\n`);
    for (const line of report.kept) io.stdout.write(`  left as it was: ${line}\n`);
    for (const line of report.notes) io.stdout.write(`  ${line}\n`);
    io.stdout.write(
      report.notes.length > 0
        ? 'Start Navi again once the database is back.\n'
        : `The database holds ${report.manifest.database.sessions} sessions. Start Navi again.\n`,
    );
    return 0;
  });
}

export interface RestoreReport {
  src: string;
  manifest: BackupManifest;
  restored: string[];
  movedAside: string[];
  kept: string[];
  /** What was not restored, and how to bring it back. */
  notes: string[];
}

/** Restores the backup folder `src` over the data of `settings`; refusals are `CliRefusal`s. */
export async function restore(settings: Settings, src: string): Promise<RestoreReport> {
  const checked = checkBackup(src);
  // With DATABASE_URL the database is PostgreSQL's: a backup's SQLite file would be put where
  // nothing reads it, so it stays in the backup, and the report says how to copy it in.
  const postgres = usesPostgres(settings);
  const leftOut = postgres ? checked.items.filter((i) => i.item === 'database') : [];
  const manifest = { ...checked, items: checked.items.filter((i) => !leftOut.includes(i)) };
  const busy = await naviUsingData(settings);
  if (busy) throw new CliRefusal(`${busy}, then run navi restore again`);

  const items = new Map(dataItems(settings).map((i) => [i.item, i]));
  const stamp = fileStamp();
  // Inside the backups folder, which the agent's file tools and sandbox never see: the data
  // moved aside holds the old database and vault key.
  const asideDir = join(backupsDir(resolve(settings.NAVI_DATA_DIR)), `before-restore-${stamp}`);
  const staged: { item: DataItem; staging: string }[] = [];
  const movedAside: { from: string; to: string }[] = [];
  const placed: string[] = [];
  try {
    for (const entry of manifest.items) {
      const item = items.get(entry.item) as DataItem;
      const staging = `${item.path}.restoring-${stamp}`;
      staged.push({ item, staging });
      copyPrivate(join(src, entry.name), staging);
    }
    const files = manifest.items.find((i) => i.item === 'session_files');
    const database = staged.find((s) => s.item.item === 'database');
    if (files && database)
      rebaseSessionFiles(database.staging, files.from, (items.get('session_files') as DataItem).path);
    for (const { item, staging } of staged) {
      for (const current of item.kind === 'sqlite' ? [item.path, ...journalsOf(item.path)] : [item.path]) {
        if (!exists(current)) continue;
        const aside = join(asideDir, `${item.name}${current.slice(item.path.length)}`);
        movePath(current, aside);
        movedAside.push({ from: current, to: aside });
      }
      renameSync(staging, item.path);
      placed.push(item.path);
    }
  } catch (err) {
    for (const path of placed) rmSync(path, { recursive: true, force: true });
    for (const { from, to } of movedAside.reverse()) movePath(to, from);
    for (const { staging } of staged) rmSync(staging, { recursive: true, force: true });
    if (exists(asideDir) && readdirSync(asideDir).length === 0) rmSync(asideDir, { recursive: true });
    throw new CliRefusal(`the restore failed and the data is as it was: ${(err as Error).message}`);
  }
  const held = new Set(manifest.items.map((i) => i.item));
  const notes = leftOut.map(
    (i) =>
      `the backup's SQLite database ${join(src, i.name)} was left out: DATABASE_URL is set, so Navi uses PostgreSQL. To bring its rows there: npx navi db copy --from ${join(src, i.name)} --to "$DATABASE_URL"`,
  );
  if (manifest.database.engine === 'postgres')
    notes.push(
      `the backup holds no database (it was made while Navi used PostgreSQL): restore that with pg_restore from your pg_dump${postgres ? '' : ', or set DATABASE_URL again'}`,
    );
  return {
    src,
    manifest: checked,
    notes,
    restored: manifest.items.map((i) => `${i.item} to ${items.get(i.item)?.path}`),
    movedAside: movedAside.map((m) => m.to),
    kept: [...items.values()]
      .filter((i) => !held.has(i.item) && exists(i.path))
      .map((i) => `${i.item} at ${i.path} (the backup has none)`),
  };
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Far above any manifest `navi backup` writes; reading more would only be a folder's mistake. */
const MAX_MANIFEST_BYTES = 64 * 1024;

/** The manifest of the backup folder `src`, once every part it lists is there whole. */
export function checkBackup(src: string): BackupManifest {
  if (!existsSync(src)) throw new CliRefusal(`there is no folder ${src}; name the folder navi backup wrote`);
  if (!lstatSync(src).isDirectory())
    throw new CliRefusal(`${src} is a file; name the folder navi backup wrote, not a file in it`);
  const manifestPath = join(src, MANIFEST_FILE);
  if (!existsSync(manifestPath))
    throw new CliRefusal(
      `${src} has no ${MANIFEST_FILE}, so it is not a backup made by navi backup (or one that was cut short); name another folder`,
    );
  const manifestBytes = lstatSync(manifestPath).size;
  if (manifestBytes > MAX_MANIFEST_BYTES)
    throw new CliRefusal(
      `${manifestPath} is not a Navi backup manifest: it is ${manifestBytes} bytes, and a manifest is a few hundred; name the folder navi backup wrote`,
    );
  const parsed = parseManifest(readFileSync(manifestPath, 'utf8'));
  if (!parsed.ok) throw new CliRefusal(`${manifestPath} is not a Navi backup manifest: ${parsed.problem}`);
  const { manifest } = parsed;
  for (const entry of manifest.items) {
    const path = join(src, entry.name);
    if (!exists(path))
      throw new CliRefusal(`${path} is missing, though the manifest lists it; the backup is incomplete`);
    const stat = lstatSync(path);
    const isFolder = entry.item === 'session_files';
    if (isFolder ? !stat.isDirectory() : !stat.isFile())
      throw new CliRefusal(`${path} should be a ${isFolder ? 'folder' : 'file'}; the backup was changed`);
    const size = sizeOf(path);
    if (size.bytes !== entry.bytes || size.files !== entry.files)
      throw new CliRefusal(
        `${path} holds ${size.bytes} bytes in ${size.files} files, but the manifest says ${entry.bytes} in ${entry.files}; the backup is incomplete or was changed`,
      );
    if (entry.item === 'database' || entry.item === 'vault_database')
      checkDatabase(path, entry.item === 'database');
  }
  return manifest;
}

const KNOWN_VERSION = migrations.at(-1)?.version ?? 0;

/** Refuses a copied database that SQLite finds damaged, or that a newer Navi wrote. */
function checkDatabase(path: string, isNavi: boolean): void {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    const problems = checkIntegrity(db);
    if (problems.length > 0)
      throw new CliRefusal(`${path} fails SQLite's integrity check (${problems[0]}); restore another backup`);
    if (!isNavi) return;
    const version = recordedSchemaVersion(db);
    if (version === null)
      throw new CliRefusal(
        `${path} is not a Navi database (it has no schema versions); restore another backup`,
      );
    if (version > KNOWN_VERSION)
      throw new CliRefusal(
        `${path} has schema version ${version}, but this Navi knows up to ${KNOWN_VERSION}; upgrade Navi, then restore`,
      );
  } catch (err) {
    if (err instanceof CliRefusal) throw err;
    throw new CliRefusal(
      `${path} cannot be read as a SQLite database (${(err as Error).message}); restore another backup`,
    );
  } finally {
    db?.close();
  }
}
