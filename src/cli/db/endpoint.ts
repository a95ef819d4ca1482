/**
 * One end of `navi db copy`: a SQLite file or a PostgreSQL database, read and written at the row
 * level with plain SQL. Values cross between the ends in one neutral form per column kind
 * (`tables.ts`): text and JSON as strings, integers as numbers, booleans as booleans, bytes as
 * Buffers; each end converts to and from its own storage here and nowhere else.
 */
import type { ColumnKind, TableSpec } from './tables.js';

/** A value in the neutral form. */
export type CellValue = string | number | boolean | Buffer | null;
export type Row = CellValue[];

export interface CopyEnd {
  engine: 'sqlite' | 'postgres';
  /** The file, or the URL with its password hidden. */
  label: string;
  /** Something the person should know before trusting the copy (a Navi may be writing to it). */
  warning?: string | undefined;
  /** Every table of the database (its schema, on PostgreSQL). */
  tables(): Promise<string[]>;
  /** The column names of `table`. */
  columns(table: string): Promise<string[]>;
  count(table: string): Promise<number>;
  /** Up to `limit` rows after the key `after` (all columns, in key order). */
  read(table: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]>;
  /** Up to `limit` keys after `after`, in key order. */
  readKeys(table: TableSpec, after: CellValue[] | undefined, limit: number): Promise<Row[]>;
  /** How many of `keys` this end holds. */
  countKeys(table: TableSpec, keys: readonly Row[]): Promise<number>;
  /** Inserts `rows` in one transaction, skipping rows whose key is taken; returns how many went in. */
  insert(table: TableSpec, rows: readonly Row[]): Promise<number>;
  /**
   * Readies the target before any row is written: on PostgreSQL the identity sequences move past
   * the ids it holds, which a copy stopped before `finish` left behind.
   */
  prepare(): Promise<void>;
  /** Rebuilds what the target derives from copied rows (indexes, codes, identity sequences). */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** The neutral form of a value read from SQLite. */
export function fromSqlite(kind: ColumnKind, value: unknown): CellValue {
  if (value === null || value === undefined) return null;
  if (kind === 'bool') return value === 1 || value === true;
  if (kind === 'blob') return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
  if (kind === 'int') return Number(value);
  return String(value);
}

/** A neutral value as SQLite binds it. */
export function toSqlite(kind: ColumnKind, value: CellValue): string | number | Buffer | null {
  if (value === null) return null;
  if (kind === 'bool') return value ? 1 : 0;
  return value as string | number | Buffer;
}

/** The neutral form of a value read from PostgreSQL (JSON columns are read as `::text`). */
export function fromPostgres(kind: ColumnKind, value: unknown): CellValue {
  if (value === null || value === undefined) return null;
  if (kind === 'bool') return value === true;
  if (kind === 'int') return Number(value);
  if (kind === 'blob') return value as Buffer;
  return String(value);
}

/** Identifiers come only from `tables.ts`; quoting keeps a keyword-like name (`key`) a name. */
export const quote = (name: string): string => `"${name}"`;

/** The key columns of `t`, quoted and comma-separated, for ORDER BY and row comparisons. */
export const keyList = (t: TableSpec): string => t.key.map(quote).join(', ');

/** The kind of `t`'s column `name`. */
export const kindOf = (t: TableSpec, name: string): ColumnKind =>
  t.columns.find((c) => c.name === name)?.kind ?? 'text';
