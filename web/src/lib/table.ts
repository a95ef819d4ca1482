/**
 * The `table` UI component's logic, kept out of the component so it can be tested without a
 * browser: sorting by column type, filtering, paging and the CSV download.
 */
// Relative rather than `@protocol`: the unit tests in test/web compile this file with the
// server's tsconfig, which has no such alias. Types only, so zod stays out of the bundle.
import type {
  TableCell,
  TableColumn,
  TableColumnType,
  TablePayload,
} from '../../../src/protocol/ui-components.js';

export type TableRow = Record<string, TableCell>;
export type SortDirection = 'ascending' | 'descending';
export interface SortState {
  key: string;
  direction: SortDirection;
}

/** Rows shown at first and added by each "show more": enough to read, few enough to draw fast. */
export const PAGE_SIZE = 50;

// One collator for every text comparison: "item 2" before "item 10", case and accents ignored.
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function isEmpty(value: TableCell | undefined): value is null | undefined {
  return value === null || value === undefined || value === '';
}

/**
 * The cell of `row` in the column `key`, only when the row holds it: a column may be keyed
 * "constructor" or "toString", and a row without that cell must read as empty, not as the
 * function every object inherits under that name.
 */
export function cellOf(row: Readonly<TableRow>, key: string): TableCell | undefined {
  return Object.hasOwn(row, key) ? row[key] : undefined;
}

/** Milliseconds since 1970 for a date cell; NaN when the text is not a date. */
function dateValue(value: TableCell): number {
  return typeof value === 'string' ? Date.parse(value) : Number.NaN;
}

/**
 * Compares two non-empty cells of a column by its type. A cell that does not fit its column
 * (a table from a lenient source) falls back to text order rather than throwing the sort off.
 */
export function compareCells(type: TableColumnType, a: TableCell, b: TableCell): number {
  if (type === 'number' && typeof a === 'number' && typeof b === 'number') return a - b;
  if (type === 'boolean' && typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (type === 'date') {
    const x = dateValue(a);
    const y = dateValue(b);
    if (!Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  }
  return collator.compare(String(a), String(b));
}

/** A header click: off → ascending → descending → off; another column starts ascending. */
export function nextSort(current: SortState | null, key: string): SortState | null {
  if (!current || current.key !== key) return { key, direction: 'ascending' };
  return current.direction === 'ascending' ? { key, direction: 'descending' } : null;
}

/**
 * The rows in the order of `sort` (a new array; the original order when `sort` is null). Empty
 * cells go last in both directions, where nobody mistakes them for the smallest value.
 */
export function sortRows(rows: readonly TableRow[], columns: readonly TableColumn[], sort: SortState | null) {
  const column = sort ? columns.find((c) => c.key === sort.key) : undefined;
  if (!sort || !column) return [...rows];
  const sign = sort.direction === 'ascending' ? 1 : -1;
  return [...rows].sort((r1, r2) => {
    const a = cellOf(r1, column.key);
    const b = cellOf(r2, column.key);
    if (isEmpty(a)) return isEmpty(b) ? 0 : 1;
    if (isEmpty(b)) return -1;
    return sign * compareCells(column.type, a, b);
  });
}

/**
 * A number in the reader's locale with every digit it was written with: toLocaleString alone
 * keeps three decimals, which shows 0.00042 as "0" and 1234.5678 as "1,234.568". Past 15
 * significant digits a decimal is floating-point noise (0.1 + 0.2), so it is rounded there.
 */
function localeNumber(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString();
  const digits = String(Math.abs(value)).replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').length;
  return numberFormat(Math.min(Math.max(digits, 1), 15)).format(value);
}

// toLocaleString with options builds a formatter on every call (about 50 times slower), and a
// filter formats every number cell of up to 1000 rows on each key press.
const numberFormats = new Map<number, Intl.NumberFormat>();
function numberFormat(significantDigits: number): Intl.NumberFormat {
  let format = numberFormats.get(significantDigits);
  if (!format) {
    format = new Intl.NumberFormat(undefined, { maximumSignificantDigits: significantDigits });
    numberFormats.set(significantDigits, format);
  }
  return format;
}

/** What a cell shows: ✓ and — for booleans, nothing for null, numbers in the reader's locale. */
export function displayCell(type: TableColumnType, value: TableCell | undefined): string {
  if (isEmpty(value)) return '';
  if (typeof value === 'boolean') return value ? '✓' : '—';
  if (typeof value === 'number' && type === 'number') return localeNumber(value);
  return String(value);
}

/** A url cell's link, only for web addresses: anything else is shown as text. */
export function cellHref(value: TableCell | undefined): string | null {
  return typeof value === 'string' && /^https?:\/\//i.test(value) ? value : null;
}

/** The text a filter looks in: what the cell shows, and for booleans also yes/no and true/false. */
function searchText(type: TableColumnType, value: TableCell | undefined): string {
  if (typeof value === 'boolean') return value ? 'true yes ✓' : 'false no —';
  if (isEmpty(value)) return '';
  const shown = displayCell(type, value);
  const raw = String(value);
  return (shown === raw ? raw : `${raw} ${shown}`).toLowerCase();
}

/**
 * The rows matching `query` in any cell and each per-column filter in its own column, all
 * case-insensitive substrings; blank filters match everything.
 */
export function filterRows(
  rows: readonly TableRow[],
  columns: readonly TableColumn[],
  query: string,
  columnFilters: Readonly<Record<string, string>> = {},
): TableRow[] {
  const needle = query.trim().toLowerCase();
  const perColumn = columns
    .map((c) => {
      // Read, not Object.hasOwn: a reactive object tracks reads, so the table filters again as
      // the person types. A function inherited under the key ("constructor") is not a filter.
      const filter = columnFilters[c.key];
      return { column: c, needle: typeof filter === 'string' ? filter.trim().toLowerCase() : '' };
    })
    .filter((f) => f.needle !== '');
  if (needle === '' && perColumn.length === 0) return [...rows];
  return rows.filter(
    (row) =>
      (needle === '' || columns.some((c) => searchText(c.type, cellOf(row, c.key)).includes(needle))) &&
      perColumn.every((f) => searchText(f.column.type, cellOf(row, f.column.key)).includes(f.needle)),
  );
}

// A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field: formula-guarded when it is text, quoted per RFC 4180 when it must be. */
export function csvField(value: TableCell | undefined): string {
  if (value === null || value === undefined) return '';
  // Numbers and booleans are data a spreadsheet should read as such (-5 stays a number).
  let text = typeof value === 'string' ? value : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The CSV of `rows`: a header of the column labels, CRLF line ends (RFC 4180), and a byte
 * order mark so that spreadsheet programs read the text as UTF-8.
 */
export function toCsv(columns: readonly TableColumn[], rows: readonly TableRow[]): string {
  const lines = [columns.map((c) => csvField(c.label)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(cellOf(row, c.key))).join(','));
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

/** The download's name: `file_name`, else the title made file-safe, else "table"; with `.csv`. */
export function csvFileName(table: Pick<TablePayload, 'file_name' | 'title'>): string {
  const base = (table.file_name ?? table.title ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
    .replace(/[\\/:*?"<>|\u0000-\u001f\u007f]+/g, '_')
    .replace(/^[\s.]+|[\s.]+$/g, '')
    .slice(0, 80);
  return `${base === '' ? 'table' : base}.csv`;
}
