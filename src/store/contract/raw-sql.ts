/**
 * For the contract tests: one value read straight from the tables, on either engine, to check
 * what the stores' own methods cannot show (rows left behind, rows forgotten).
 */
import type { OpenedStores } from '../open-stores.js';

/** The first column of the first row of `sql`, or undefined when it has no row. */
export async function scalar(stores: OpenedStores, sql: string): Promise<unknown> {
  if (stores.engine === 'sqlite') return stores.db.prepare(sql).pluck().get();
  const [row] = await stores.pg.rows(sql);
  return row === undefined ? undefined : Object.values(row)[0];
}

/** Runs a statement that changes rows, on either engine. */
export async function execute(stores: OpenedStores, sql: string): Promise<void> {
  if (stores.engine === 'sqlite') stores.db.prepare(sql).run();
  else await stores.pg.query(sql);
}
