/**
 * `navi data [where]` says where Navi's data is; `navi data move` moves the data an older install
 * kept in the working folder into the data folder (docs/running.md#where-the-data-lives).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  DATA_FILE_NAMES,
  type DataFileLocation,
  type DataLocation,
  dataLocation,
  legacyDataNotice,
} from '../config/data-location.js';
import { ownedSettingsPath } from '../config/owned-settings.js';
import { type Settings, settingOrigins } from '../config/settings.js';
import { journalsOf } from '../machine/fs/navi-paths.js';
import { pendingKeyFile } from '../vault/key-source.js';
import { type CliIo, CliRefusal, exitOnRefusal, isHelp } from './cli-io.js';
import { movePath, rebaseSessionFiles, usesPostgres } from './data-files.js';
import type { CheckResult } from './doctor.js';
import { naviUsingData } from './navi-running.js';

export const DATA_USAGE = `Usage: navi data [where | move]

  where   where the database, the session files, the vault and settings.json are (the default)
  move    move the data an older install keeps in the working folder into the data folder
          (NAVI_DATA_DIR); stop Navi first`;

const LABELS: Record<DataFileLocation['setting'], string> = {
  DB_PATH: 'database',
  SESSION_FILES_DIR: 'session files',
  GNEXUS_VAULT_PATH: 'vault database',
  GNEXUS_KEY_FILE: 'vault key file',
  GNEXUS_AUDIT_LOG: 'vault audit log',
};

const WHERE: Record<DataFileLocation['where'], string> = {
  data: 'in the data folder',
  working: 'in the working folder, where older installs kept it',
  setting: 'named by its setting',
};

/** One line per data file: what it is, where, and whether it exists yet. */
function describeDataLocation(location: DataLocation, postgres = false): string[] {
  const lines = [`Data folder (NAVI_DATA_DIR): ${location.dataDir}`];
  for (const f of location.files) {
    const state = existsSync(f.path) ? '' : ', not created yet';
    lines.push(`  ${LABELS[f.setting]} (${f.setting}): ${f.path} (${WHERE[f.where]}${state})`);
  }
  if (postgres)
    lines.push('  DATABASE_URL is set: the database is in PostgreSQL, and the file DB_PATH is not used');
  lines.push(`  LLM settings the web client saved: ${ownedSettingsPath(location.dataDir)}`);
  return lines;
}

/** Runs `navi data`; 0 when done, 1 when refused or failed. */
export async function runData(settings: Settings, args: string[], io: CliIo): Promise<number> {
  const [command = 'where', ...rest] = args;
  return exitOnRefusal('data', io, async () => {
    if (isHelp(command)) {
      io.stdout.write(`${DATA_USAGE}\n`);
      return 0;
    }
    if (rest.length > 0) throw new CliRefusal(`navi data ${command} takes no arguments; run navi data help`);
    if (command === 'where') {
      const location = dataLocation(settings, settingOrigins(settings));
      io.stdout.write(`${describeDataLocation(location, usesPostgres(settings)).join('\n')}\n`);
      const notice = legacyDataNotice(location);
      if (notice) io.stdout.write(`${notice}\n`);
      return 0;
    }
    if (command === 'move') {
      for (const line of await moveData(settings)) io.stdout.write(`${line}\n`);
      return 0;
    }
    throw new CliRefusal(`unknown command "${command}"; run navi data help`);
  });
}

/**
 * Moves each data file kept in the working folder, with SQLite's journals and a key rotation's
 * pending key file, to its name in the data folder. Refuses while Navi runs and when a name in
 * the data folder is taken; a failure half-way moves back what was moved. Returns what to print.
 */
export async function moveData(settings: Settings, cwd = process.cwd()): Promise<string[]> {
  const location = dataLocation(settings, settingOrigins(settings), cwd);
  if (location.legacy.length === 0)
    return [`Nothing to move: Navi's data is not in the working folder.`, ...describeDataLocation(location)];
  const busy = await naviUsingData(settings);
  if (busy) throw new CliRefusal(`${busy}, then run navi data move again`);

  const moves: { from: string; to: string; setting: string }[] = [];
  for (const f of location.legacy) {
    const target = join(location.dataDir, DATA_FILE_NAMES[f.setting]);
    const pairs: [string, string][] = [[f.path, target]];
    if (f.setting === 'DB_PATH' || f.setting === 'GNEXUS_VAULT_PATH') {
      const targets = journalsOf(target);
      for (const [i, journal] of journalsOf(f.path).entries()) pairs.push([journal, targets[i] as string]);
    }
    if (f.setting === 'GNEXUS_KEY_FILE') pairs.push([pendingKeyFile(f.path), pendingKeyFile(target)]);
    for (const [from, to] of pairs) {
      if (!existsSync(from)) continue;
      if (existsSync(to))
        throw new CliRefusal(
          `${to} exists already (a Navi has used the data folder before); move it away first, or keep the data where it is by setting ${f.setting}=${f.path}`,
        );
      moves.push({ from, to, setting: f.setting });
    }
  }
  const done: typeof moves = [];
  try {
    for (const move of moves) {
      movePath(move.from, move.to);
      done.push(move);
    }
    // The database records each session file's absolute path.
    const files = location.legacy.find((f) => f.setting === 'SESSION_FILES_DIR');
    const database = location.files.find((f) => f.setting === 'DB_PATH')?.path ?? '';
    const databaseNow = moves.find((m) => m.from === database)?.to ?? database;
    if (files && existsSync(databaseNow))
      rebaseSessionFiles(databaseNow, files.path, join(location.dataDir, DATA_FILE_NAMES.SESSION_FILES_DIR));
  } catch (err) {
    for (const move of done.reverse()) movePath(move.to, move.from);
    throw new CliRefusal(`moving failed and nothing was moved: ${(err as Error).message}`);
  }
  return [
    ...moves.map((m) => `moved ${m.from} to ${m.to}`),
    moves.length === 0
      ? 'Nothing to move: none of the files exist yet; Navi will create them in the data folder.'
      : `Navi now keeps its data in ${location.dataDir}; start it again from the same folder.`,
  ];
}

/**
 * `navi doctor`'s line about the data: where it is, and a warning while an older install's data
 * is still in the working folder (it works, but backups and the service are simpler without).
 */
export function checkDataLocation(settings: Settings, cwd = process.cwd()): CheckResult {
  const location = dataLocation(settings, settingOrigins(settings), cwd);
  const database = location.files.find((f) => f.setting === 'DB_PATH');
  const where = usesPostgres(settings) ? 'in PostgreSQL (DATABASE_URL)' : database?.path;
  const detail = `data folder ${location.dataDir}; database ${where}`;
  if (location.legacy.length === 0) return { name: 'data', level: 'ok', detail };
  return {
    name: 'data',
    level: 'warn',
    detail: `${detail}; ${location.legacy.map((f) => f.path).join(', ')} in the working folder, where older installs kept it: stop Navi and run npx navi data move to move it into the data folder`,
  };
}
