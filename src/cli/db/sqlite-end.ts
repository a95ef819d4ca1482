/** A SQLite file as an end of `navi db copy`. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { asFloats, binaryCode } from '../../memory/vector-codes.js';
import { openDatabase } from '../../store/sqlite/database.js';
import { recordedSchemaVersion } from '../../store/sqlite/migrate.js';
import { CliRefusal } from '../cli-io.js';
import { databaseInUse } from '../navi-running.js';
import {
  type CellValue,
  type CopyEnd,
  fromSqlite,
  keyList,
  kindOf,
  quote,
  type Row,
  toSqlite,
} from './endpoint.js';
import type { TableSpec } from './tables.js';

/** Facts given their vector codes per statement batch. */
const CODE_BATCH = 2000;

const inUse = (file: string, role: string) =>
  new CliRefusal(
    `${file} (the ${role}) is open in another process, most likely a running Navi; stop it first (Ctrl-C, or systemctl --user stop navi), then copy again`,
  );

/**
 * Opens the Navi database `file` to read. Refuses a missing file, one SQLite cannot read, one
 * without Navi's migrations, and one a running Navi holds (it would go on writing during the copy).
 * Everything is read inside one read transaction, so a Navi started during the copy cannot put
 * half of what it writes into it: the copy is the file as it was when the copy began.
 */
export function openSqliteSource(file: string): { end: CopyEnd; version: number } {
  const path = resolve(file);
  if (!existsSync(path))
    throw new CliRefusal(
      `there is no file ${path}; name the Navi database to copy (DB_PATH, e.g. ~/.local/share/navi/navi.db)`,
    );
  if (!statSync(path).isFile())
    throw new CliRefusal(`${path} is a folder; name the database file in it (navi.db)`);
  if (databaseInUse(path)) throw inUse(path, 'source');
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(path, { fileMustExist: true, timeout: 5000 });
    // The snapshot starts at the first read, the version just below.
    db.exec('BEGIN');
    const version = recordedSchemaVersion(db);
    if (version === null)
      throw new CliRefusal(
        `${path} is not a Navi database (it has no schema versions); name the file DB_PATH points at`,
      );
    return { end: new SqliteEnd(db, path), version };
  } catch (err) {
    db?.close();
    if (err instanceof CliRefusal) throw err;
    throw new CliRefusal(
      `${path} cannot be read as a SQLite database (${(err as Error).message}); name a Navi database file`,
    );
  }
}

/**
 * Opens (creating and migrating) the SQLite file `file` to copy into. Refuses an existing file
 * that is not a Navi database (migrating it would add Navi's tables to someone else's data), one
 * written by a newer Navi, and one a running Navi holds.
 */
export function openSqliteTarget(file: string): CopyEnd {
  const path = resolve(file);
  if (existsSync(path)) {
    if (!statSync(path).isFile())
      throw new CliRefusal(`${path} is a folder; name a database file (a new one is created)`);
    if (databaseInUse(path)) throw inUse(path, 'target');
    if (statSync(path).size > 0) {
      let probe: Database | undefined;
      try {
        probe = new BetterSqlite3(path, { fileMustExist: true, timeout: 5000 });
        const tables = probe
          .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
          .pluck()
          .get() as number;
        if (recordedSchemaVersion(probe) === null && tables > 0)
          throw new CliRefusal(
            `${path} holds tables but is not a Navi database; name a new file, or a Navi database`,
          );
      } catch (err) {
        if (err instanceof CliRefusal) throw err;
        throw new CliRefusal(
          `${path} is not a SQLite database (${(err as Error).message}); name a new file, or a Navi database`,
        );
      } finally {
        probe?.close();
      }
    }
  }
  try {
    return new SqliteEnd(openDatabase(path), path);
  } catch (err) {
    throw new CliRefusal((err as Error).message);
  }
}

class SqliteEnd implements CopyEnd {
  readonly engine = 'sqlite';

  constructor(
    private readonly db: Database,
    readonly label: string,
  ) {}

  async tables(): Promise<string[]> {
    return this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[];
  }

  async columns(table: string): Promise<string[]> {
    return (this.db.pragma(`table_info(${quote(table)})`) as { name: string }[]).map((c) => c.name);
  }

  async count(table: string): Promise<number> {
    return this.db
      .prepare(`SELECT count(*) FROM ${quote(table)}`)
      .pluck()
      .get() as number;
  }

  async read(t: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]> {
    return this.page(
      t,
      t.columns.map((c) => c.name),
      after,
      limit,
    );
  }

  async readKeys(t: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]> {
    return this.page(t, [...t.key], after, limit);
  }

  private page(t: TableSpec, names: string[], after: CellValue[] | undefined, limit: number): Row[] {
    const where = after ? `WHERE (${keyList(t)}) > (${t.key.map(() => '?').join(', ')})` : '';
    const sql = `SELECT ${names.map(quote).join(', ')} FROM ${quote(t.name)} ${where} ORDER BY ${keyList(t)} LIMIT ?`;
    const params = after ? t.key.map((k, i) => toSqlite(kindOf(t, k), after[i] ?? null)) : [];
    const rows = this.db
      .prepare(sql)
      .raw()
      .all(...params, limit) as unknown[][];
    const kinds = names.map((n) => kindOf(t, n));
    return rows.map((r) => r.map((v, i) => fromSqlite(kinds[i]!, v)));
  }

  async countKeys(t: TableSpec, keys: readonly Row[]): Promise<number> {
    if (keys.length === 0) return 0;
    const tuple = `(${t.key.map(() => '?').join(', ')})`;
    const sql = `SELECT count(*) FROM ${quote(t.name)} WHERE (${keyList(t)}) IN (VALUES ${keys.map(() => tuple).join(', ')})`;
    const params = keys.flatMap((k) => k.map((v, i) => toSqlite(kindOf(t, t.key[i] as string), v)));
    return this.db
      .prepare(sql)
      .pluck()
      .get(...params) as number;
  }

  async insert(t: TableSpec, rows: readonly Row[]): Promise<number> {
    const names = t.columns.map((c) => quote(c.name));
    const conflict = t.singletonDefault
      ? `ON CONFLICT (${keyList(t)}) DO UPDATE SET ${names.map((n) => `${n} = excluded.${n}`).join(', ')} WHERE ${t.singletonDefault}`
      : 'ON CONFLICT DO NOTHING';
    const statement = this.db.prepare(
      `INSERT INTO ${quote(t.name)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ${conflict}`,
    );
    return this.db.transaction(() => {
      let inserted = 0;
      for (const row of rows)
        inserted += statement.run(...row.map((v, i) => toSqlite(t.columns[i]!.kind, v))).changes;
      return inserted;
    })();
  }

  /** SQLite numbers a new row past the highest id by itself. */
  async prepare(): Promise<void> {}

  /**
   * The search indexes follow the copied rows through their triggers; the vector codes memory
   * search reads first are written by the memory store, so the copy writes those of the copied
   * facts here, the same codes the store would.
   */
  async finish(): Promise<void> {
    const page = this.db
      .prepare<[number, number], [number, string, Buffer]>(
        `SELECT id, embedding_model, embedding FROM memory_facts f
         WHERE id > ? AND embedding IS NOT NULL AND embedding_model IS NOT NULL
           AND length(embedding) > 0 AND length(embedding) % 4 = 0
           AND NOT EXISTS (SELECT 1 FROM memory_fact_codes c WHERE c.fact_id = f.id)
         ORDER BY id LIMIT ?`,
      )
      .raw();
    const write = this.db.prepare(
      'INSERT INTO memory_fact_codes (fact_id, model, dimension, code) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    for (let last = 0; ; ) {
      const rows = page.all(last, CODE_BATCH);
      if (rows.length === 0) break;
      this.db.transaction(() => {
        for (const [id, model, blob] of rows) {
          const vector = asFloats(blob);
          write.run(id, model, vector.length, binaryCode(vector));
        }
      })();
      last = rows[rows.length - 1]![0];
    }
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    // A source's read transaction; a target commits each batch itself.
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}
