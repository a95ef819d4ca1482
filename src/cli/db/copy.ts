/**
 * The copy itself: every table of `tables.ts`, in key order, in batches, each batch written in
 * one transaction that skips rows whose key the target holds. A second run therefore copies
 * nothing new, and a run that was stopped (Ctrl-C, kill -9, a lost connection) is finished by
 * running it again. At the end each table's rows are counted on both ends.
 */
import { CliRefusal } from '../cli-io.js';
import type { CellValue, CopyEnd, Row } from './endpoint.js';
import { COPIED_TABLES, notCopiedBecause, type TableSpec } from './tables.js';

export interface CopyOptions {
  /** Rows per read and per write transaction. */
  batchSize: number;
  /** Copy beside rows of the target's own instead of refusing them. */
  merge: boolean;
  /** Lines for the person while it runs (stderr). */
  progress(line: string): void;
  /** A clock for spacing the progress lines (tests need none). */
  now?: () => number;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
  /** Rows this run wrote. */
  copied: number;
  /** Whether the counts agree: equal, or (with --merge) at least the source's. */
  ok: boolean;
}

/** Progress lines at most this often within one table. */
const PROGRESS_EVERY_MS = 1000;

/** Copies `source` into `target` (both open at the same schema version); returns the count check. */
export async function copyDatabase(
  source: CopyEnd,
  target: CopyEnd,
  options: CopyOptions,
): Promise<TableCount[]> {
  await checkSchema(source, 'source');
  await checkSchema(target, 'target');
  if (!options.merge) await refuseOtherData(source, target, options.batchSize);
  // A merge numbers copied facts from the target's sequences; after a copy stopped before
  // finish() they still point at ids the copied rows hold, and those rows would be skipped.
  await target.prepare();
  // The source is read inside one snapshot (sqlite-end.ts, postgres-end.ts), so its counts taken
  // while copying are its counts at the end too.
  const copied: { table: string; source: number; copied: number }[] = [];
  for (const table of COPIED_TABLES)
    copied.push({ table: table.name, ...(await copyTable(source, target, table, options)) });
  await target.finish();
  const counts: TableCount[] = [];
  for (const { table, source: s, copied: n } of copied) {
    const t = await target.count(table);
    counts.push({ table, source: s, target: t, copied: n, ok: options.merge ? t >= s : t === s });
  }
  return counts;
}

/**
 * Every table of the end is either copied or known not to need copying, with the columns the
 * copy knows: a table or column the copy does not know would otherwise be lost without a word.
 */
async function checkSchema(end: CopyEnd, role: string): Promise<void> {
  const tables = new Set(await end.tables());
  const unknown = [...tables].filter((t) => !COPIED_TABLES.some((c) => c.name === t) && !notCopiedBecause(t));
  if (unknown.length > 0)
    throw new CliRefusal(
      `the ${role} ${end.label} has tables this copy does not know (${unknown.join(', ')}); its rows would be lost, so nothing was copied. Use the navi of the version that wrote it`,
    );
  for (const table of COPIED_TABLES) {
    if (!tables.has(table.name))
      throw new CliRefusal(
        `the ${role} ${end.label} has no table ${table.name}; it is not a whole Navi database`,
      );
    const columns = new Set(await end.columns(table.name));
    const missing = table.columns.filter((c) => !columns.has(c.name)).map((c) => c.name);
    const extra = [...columns].filter((c) => !table.columns.some((k) => k.name === c));
    if (missing.length > 0 || (role === 'source' && extra.length > 0))
      throw new CliRefusal(
        `the ${role} ${end.label} has a table ${table.name} whose columns (${[...columns].join(', ')}) are not the ones this copy knows; use the navi of the version that wrote it`,
      );
  }
}

/**
 * Refuses a target that holds rows the source does not have (keys the source lacks): a copy
 * would mix two installations. Rows the source has too are a previous run of this copy.
 */
async function refuseOtherData(source: CopyEnd, target: CopyEnd, batch: number): Promise<void> {
  for (const table of COPIED_TABLES) {
    let after: CellValue[] | undefined;
    let foreign = 0;
    for (;;) {
      const keys = await target.readKeys(table, after, batch);
      if (keys.length === 0) break;
      foreign += keys.length - (await source.countKeys(table, keys));
      after = keys[keys.length - 1];
    }
    if (foreign > 0)
      throw new CliRefusal(
        `the target ${target.label} already holds data of its own (${foreign} row${foreign === 1 ? '' : 's'} of ${table.name} that the source does not have). ` +
          "Copy into a new file or an empty database, or pass --merge to add the source beside them (rows whose key both have keep the target's version)",
      );
  }
}

async function copyTable(
  source: CopyEnd,
  target: CopyEnd,
  table: TableSpec,
  options: CopyOptions,
): Promise<{ source: number; copied: number }> {
  const now = options.now ?? Date.now;
  const total = await source.count(table.name);
  const keyAt = table.key.map((k) => table.columns.findIndex((c) => c.name === k));
  // Merging, an identity id names a different row on each end (the target's fact 3 is not the
  // source's): the target numbers the copied rows itself, and their natural unique key (a fact's
  // category and key, a client's secret hash) skips the ones it already holds.
  const renumber = options.merge && table.identity !== undefined;
  const idAt = renumber ? table.columns.findIndex((c) => c.name === table.identity) : -1;
  const written: TableSpec = renumber
    ? { ...table, columns: table.columns.filter((_, i) => i !== idAt) }
    : table;
  let after: CellValue[] | undefined;
  let read = 0;
  let copied = 0;
  let lastLine = now();
  for (;;) {
    const rows: Row[] = await source.read(table, after, options.batchSize);
    if (rows.length === 0) break;
    try {
      copied += await target.insert(
        written,
        renumber ? rows.map((r) => r.filter((_, i) => i !== idAt)) : rows,
      );
    } catch (err) {
      throw new CliRefusal(
        `writing ${table.name} rows after key ${JSON.stringify(after ?? null)} to ${target.label} failed: ${(err as Error).message}. What was copied so far stays; fix the cause and run the same command again to finish`,
      );
    }
    read += rows.length;
    after = keyAt.map((i) => rows[rows.length - 1]![i] ?? null);
    if (now() - lastLine >= PROGRESS_EVERY_MS) {
      lastLine = now();
      options.progress(`copying ${table.name}: ${read} of ${total} rows (${percent(read, total)})`);
    }
  }
  options.progress(`copied ${table.name}: ${read} rows read, ${copied} new`);
  return { source: total, copied };
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '100%' : `${Math.min(100, Math.floor((part / whole) * 100))}%`;
}
