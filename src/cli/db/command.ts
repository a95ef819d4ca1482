/**
 * `navi db copy --from A --to B`: moves a whole installation's database between a SQLite file
 * and PostgreSQL, either way (docs/postgres.md#moving-an-installation-navi-db-copy).
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { hidePassword } from '../../store/postgres/database.js';
import { migrations as postgresMigrations } from '../../store/postgres/migrations/index.js';
import { migrations as sqliteMigrations } from '../../store/sqlite/migrations/index.js';
import { type CliIo, CliRefusal, exitOnRefusal, isHelp } from '../cli-io.js';
import { copyDatabase, type TableCount } from './copy.js';
import type { CopyEnd } from './endpoint.js';
import { openPostgresSource, openPostgresTarget } from './postgres-end.js';
import { openSqliteSource, openSqliteTarget } from './sqlite-end.js';

export const DB_USAGE = `Usage: navi db copy --from <sqlite file | postgres url> --to <sqlite file | postgres url>
                   [--merge] [--batch-size N]

Copies every session, message, file record, memory fact, recall and paired browser from one
Navi database to another: a SQLite file (DB_PATH) or PostgreSQL (a postgres:// URL, as in
DATABASE_URL). The target is created and brought to this Navi's schema first. Stop Navi before
copying. Running the same copy again copies only what is missing, so a copy that was stopped is
finished by running it again. A target that holds data of its own is refused unless --merge.
  --merge          copy beside the target's own rows (rows whose key both have keep the target's)
  --batch-size N   rows per transaction (1 to ${5000}, default 1000)`;

const DEFAULT_BATCH = 1000;
const MAX_BATCH = 5000;

interface CopyArgs {
  from: string;
  to: string;
  merge: boolean;
  batchSize: number;
}

const isUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** Parses `copy`'s flags; a mistake is a `CliRefusal` that says which flag and what it takes. */
export function parseCopyArgs(args: readonly string[]): CopyArgs {
  const values: Record<string, string> = {};
  let merge = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (flag === '--merge' && inline === undefined) {
      merge = true;
      continue;
    }
    if (flag !== '--from' && flag !== '--to' && flag !== '--batch-size')
      throw new CliRefusal(
        `unknown argument "${arg}"; navi db copy takes --from, --to, --merge and --batch-size (navi db help)`,
      );
    const value = inline ?? args[++i];
    if (value === undefined || value === '' || (inline === undefined && value.startsWith('--')))
      throw new CliRefusal(
        `${flag} needs a value: ${flag === '--batch-size' ? 'a number of rows' : 'a SQLite file or a postgres:// URL'}`,
      );
    if (values[flag] !== undefined) throw new CliRefusal(`${flag} is given twice; give it once`);
    values[flag] = value;
  }
  const from = values['--from'];
  const to = values['--to'];
  if (!from || !to)
    throw new CliRefusal(
      `navi db copy needs both --from and --to (missing ${from ? '--to' : '--from'}); run navi db help`,
    );
  let batchSize = DEFAULT_BATCH;
  if (values['--batch-size'] !== undefined) {
    const text = values['--batch-size'];
    batchSize = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH)
      throw new CliRefusal(`--batch-size must be a whole number from 1 to ${MAX_BATCH}; got "${text}"`);
  }
  if (sameDatabase(from, to))
    throw new CliRefusal(
      `--from and --to name the same database (${display(from)}); name two different ones`,
    );
  return { from, to, merge, batchSize };
}

const display = (location: string) => (isUrl(location) ? hidePassword(location) : resolve(location));

/** Whether two locations are one database: the same file, or the same server, database and options. */
function sameDatabase(a: string, b: string): boolean {
  if (isUrl(a) !== isUrl(b)) return false;
  if (!isUrl(a)) return canonicalFile(a) === canonicalFile(b);
  try {
    const [x, y] = [new URL(a), new URL(b)];
    const where = (u: URL) =>
      `${u.hostname}:${u.port || '5432'}${u.pathname}?${u.searchParams.get('options') ?? ''}${u.searchParams.get('host') ?? ''}`;
    return where(x) === where(y);
  } catch {
    return a === b;
  }
}

function canonicalFile(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return resolve(file);
  }
}

const KNOWN = {
  sqlite: sqliteMigrations.at(-1)?.version ?? 0,
  postgres: postgresMigrations.at(-1)?.version ?? 0,
};

async function openSource(location: string): Promise<CopyEnd> {
  const { end, version } = isUrl(location) ? await openPostgresSource(location) : openSqliteSource(location);
  const known = KNOWN[end.engine];
  if (version !== known) {
    await end.close();
    const setting =
      end.engine === 'sqlite' ? `DB_PATH=${end.label}` : `DATABASE_URL='${location.replace(/'/g, "'\\''")}'`;
    throw new CliRefusal(
      version > known
        ? `the source ${end.label} has schema version ${version}, but this Navi knows up to ${known}; copy it with the newer Navi that wrote it`
        : `the source ${end.label} has schema version ${version}, older than this Navi's ${known}; bring it up to date first (${setting} npx navi doctor does that), then copy`,
    );
  }
  return end;
}

/** Runs `navi db`; 0 when the copy is complete and every count agrees. */
export async function runDb(args: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || isHelp(command)) {
    (command === undefined ? io.stderr : io.stdout).write(`${DB_USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'copy') {
    io.stderr.write(`navi db: unknown command "${command}"; the one command is copy\n\n${DB_USAGE}\n`);
    return 2;
  }
  let parsed: CopyArgs;
  try {
    parsed = parseCopyArgs(rest);
  } catch (err) {
    if (!(err instanceof CliRefusal)) throw err;
    io.stderr.write(`navi db copy: ${err.message}\n`);
    return 2;
  }
  return exitOnRefusal('db copy', io, async () => {
    const source = await openSource(parsed.from);
    let target: CopyEnd | undefined;
    try {
      if (source.warning) io.stderr.write(`navi db copy: warning: ${source.warning}\n`);
      target = isUrl(parsed.to) ? await openPostgresTarget(parsed.to) : openSqliteTarget(parsed.to);
      io.stderr.write(`Copying ${source.label} to ${target.label}\n`);
      const counts = await copyDatabase(source, target, {
        batchSize: parsed.batchSize,
        merge: parsed.merge,
        progress: (line) => io.stderr.write(`  ${line}\n`),
      });
      io.stdout.write(formatCounts(counts, parsed.merge));
      const wrong = counts.filter((c) => !c.ok);
      if (wrong.length > 0) {
        io.stderr.write(
          `navi db copy: the counts of ${wrong.map((c) => c.table).join(', ')} differ. Was a Navi writing to either database? Stop it and run the same command again\n`,
        );
        return 1;
      }
      io.stdout.write(
        `Copied ${source.label} to ${target.label}. Point Navi at it (${target.engine === 'postgres' ? 'DATABASE_URL' : 'DB_PATH, with DATABASE_URL unset'}) and start it.\n`,
      );
      return 0;
    } finally {
      await target?.close();
      await source.close();
    }
  });
}

function formatCounts(counts: readonly TableCount[], merge: boolean): string {
  const width = Math.max(...counts.map((c) => c.table.length), 5);
  const head = `${'table'.padEnd(width)}  ${'source'.padStart(9)}  ${'target'.padStart(9)}  ${'new'.padStart(9)}\n`;
  const lines = counts.map(
    (c) =>
      `${c.table.padEnd(width)}  ${String(c.source).padStart(9)}  ${String(c.target).padStart(9)}  ${String(c.copied).padStart(9)}  ${c.ok ? 'ok' : merge ? 'FEWER IN TARGET' : 'DIFFERENT'}\n`,
  );
  return head + lines.join('');
}
