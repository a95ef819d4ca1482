/**
 * The table component's logic (web/src/lib/table.ts): ordering by column type, filtering, and
 * the CSV download's text, with the quoting and the formula guard a spreadsheet needs.
 */
import { describe, expect, it } from 'vitest';
import { type TableColumn, validateUiComponent } from '../../src/protocol/ui-components.js';
import {
  cellOf,
  compareCells,
  csvField,
  csvFileName,
  displayCell,
  filterRows,
  nextSort,
  sortRows,
  type TableRow,
  toCsv,
} from '../../web/src/lib/table.js';

const columns: TableColumn[] = [
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'price', label: 'Price', type: 'number' },
  { key: 'opened', label: 'Opened', type: 'date' },
  { key: 'pool', label: 'Pool', type: 'boolean' },
  { key: 'site', label: 'Site', type: 'url' },
];

const rows: TableRow[] = [
  { name: 'Hotel 10', price: 120, opened: '2021-05-01', pool: true, site: 'https://ten.example' },
  { name: 'hotel 9', price: 95.5, opened: '2019-12-31T23:00:00Z', pool: false, site: null },
  { name: 'Élan', price: null, opened: null, pool: null, site: 'https://elan.example' },
  { name: 'Azur', price: 1200, opened: '2020-01-15', pool: true, site: null },
];

const names = (list: TableRow[]) => list.map((r) => r.name);

describe('sortRows', () => {
  it('orders numbers as numbers, both ways, with empty cells last each time', () => {
    expect(names(sortRows(rows, columns, { key: 'price', direction: 'ascending' }))).toEqual([
      'hotel 9',
      'Hotel 10',
      'Azur',
      'Élan',
    ]);
    expect(names(sortRows(rows, columns, { key: 'price', direction: 'descending' }))).toEqual([
      'Azur',
      'Hotel 10',
      'hotel 9',
      'Élan',
    ]);
  });

  it('orders text with numbers inside as a person does, ignoring case and accents', () => {
    expect(names(sortRows(rows, columns, { key: 'name', direction: 'ascending' }))).toEqual([
      'Azur',
      'Élan',
      'hotel 9',
      'Hotel 10',
    ]);
  });

  it('orders dates by time, also when one carries a time of day', () => {
    expect(names(sortRows(rows, columns, { key: 'opened', direction: 'ascending' }))).toEqual([
      'hotel 9',
      'Azur',
      'Hotel 10',
      'Élan',
    ]);
  });

  it('orders booleans false before true, and keeps equal rows in their order', () => {
    expect(names(sortRows(rows, columns, { key: 'pool', direction: 'ascending' }))).toEqual([
      'hotel 9',
      'Hotel 10',
      'Azur',
      'Élan',
    ]);
  });

  it('leaves the original order without a sort or for an unknown column, and never sorts in place', () => {
    const copy = [...rows];
    expect(sortRows(rows, columns, null)).toEqual(rows);
    expect(sortRows(rows, columns, { key: 'nope', direction: 'descending' })).toEqual(rows);
    sortRows(rows, columns, { key: 'price', direction: 'descending' });
    expect(rows).toEqual(copy);
  });

  it('falls back to text order for a cell that does not fit its column', () => {
    expect(compareCells('number', 'ten', 9)).toBeGreaterThan(0);
    expect(compareCells('date', 'soon', '2020-01-01')).toBeGreaterThan(0);
  });
});

describe('nextSort', () => {
  it('cycles ascending, descending, off; another column starts ascending', () => {
    const first = nextSort(null, 'price');
    expect(first).toEqual({ key: 'price', direction: 'ascending' });
    const second = nextSort(first, 'price');
    expect(second).toEqual({ key: 'price', direction: 'descending' });
    expect(nextSort(second, 'price')).toBeNull();
    expect(nextSort(second, 'name')).toEqual({ key: 'name', direction: 'ascending' });
  });
});

describe('filterRows', () => {
  it('matches any cell, case-insensitively, and ignores surrounding blanks', () => {
    expect(names(filterRows(rows, columns, '  HOTEL '))).toEqual(['Hotel 10', 'hotel 9']);
    expect(names(filterRows(rows, columns, 'elan.example'))).toEqual(['Élan']);
    expect(names(filterRows(rows, columns, '95.5'))).toEqual(['hotel 9']);
    expect(filterRows(rows, columns, '')).toHaveLength(4);
    expect(filterRows(rows, columns, 'nothing like this')).toEqual([]);
  });

  it('finds booleans by yes/no and numbers as shown (1,200) or as stored', () => {
    expect(names(filterRows(rows, [columns[3] as TableColumn], 'yes'))).toEqual(['Hotel 10', 'Azur']);
    expect(names(filterRows(rows, columns, '1,200'))).toEqual(['Azur']);
    expect(names(filterRows(rows, columns, '1200'))).toEqual(['Azur']);
  });

  it('applies per-column filters together with the query', () => {
    expect(names(filterRows(rows, columns, '', { name: 'hotel', pool: 'true' }))).toEqual(['Hotel 10']);
    expect(names(filterRows(rows, columns, 'azur', { name: 'hotel' }))).toEqual([]);
    expect(filterRows(rows, columns, '', { name: '   ' })).toHaveLength(4);
  });
});

describe('displayCell', () => {
  it('shows booleans as ✓ and —, null as nothing, numbers in the locale', () => {
    expect(displayCell('boolean', true)).toBe('✓');
    expect(displayCell('boolean', false)).toBe('—');
    expect(displayCell('text', null)).toBe('');
    expect(displayCell('number', 1200)).toBe((1200).toLocaleString());
    expect(displayCell('text', 'x')).toBe('x');
  });

  it('keeps every decimal a number was written with, not just three', () => {
    const locale = (n: number, digits: number) =>
      n.toLocaleString(undefined, { maximumSignificantDigits: digits });
    expect(displayCell('number', 0.00042)).toBe(locale(0.00042, 2));
    expect(displayCell('number', 0.00042)).not.toBe(displayCell('number', 0));
    expect(displayCell('number', 1234.5678)).toBe(locale(1234.5678, 8));
    expect(displayCell('number', 1e-7)).toBe(locale(1e-7, 1));
    expect(displayCell('number', 0.1 + 0.2)).toBe(displayCell('number', 0.3));
    expect(displayCell('number', 12345678901234568)).toBe((12345678901234568).toLocaleString());
  });
});

describe('CSV', () => {
  it('quotes commas, quotes and line breaks as RFC 4180 says', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(true)).toBe('true');
  });

  it('guards text that a spreadsheet would run as a formula, but not numbers', () => {
    expect(csvField('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('-2')).toBe("'-2");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tcmd')).toBe("'\tcmd");
    expect(csvField('\rcmd')).toBe(`"'\rcmd"`);
    expect(csvField(-5)).toBe('-5');
    expect(csvField('a=b')).toBe('a=b');
  });

  it('writes a header of labels, CRLF line ends and a byte order mark', () => {
    const csv = toCsv(columns.slice(0, 2), [rows[0] as TableRow, { name: '=1+1', price: -3 }]);
    expect(csv).toBe("\uFEFFName,Price\r\nHotel 10,120\r\n'=1+1,-3\r\n");
  });

  it('names the file from file_name, else the title made safe, else "table"', () => {
    expect(csvFileName({ file_name: 'hotels 2026', title: 'Other' })).toBe('hotels 2026.csv');
    expect(csvFileName({ title: 'Hotels: Nice / Lisbon?' })).toBe('Hotels_ Nice _ Lisbon_.csv');
    expect(csvFileName({ title: '..' })).toBe('table.csv');
    expect(csvFileName({})).toBe('table.csv');
    expect(csvFileName({ title: 'x'.repeat(200) })).toBe(`${'x'.repeat(80)}.csv`);
  });
});

describe('a schema-checked payload', () => {
  it('reaches the table logic with array rows turned into keyed rows', () => {
    const check = validateUiComponent('table', {
      columns: [
        { key: 'n', label: 'N', type: 'number' },
        { key: 't', label: 'T' },
      ],
      rows: [
        [2, 'b'],
        [10, 'a'],
      ],
    });
    if (!check.ok || check.value.component !== 'table') throw new Error(JSON.stringify(check));
    const table = check.value.payload;
    expect(table.sortable).toBe(true);
    const sorted = sortRows(table.rows, table.columns, { key: 'n', direction: 'descending' });
    expect(sorted.map((r) => r.t)).toEqual(['a', 'b']);
  });
});

describe('a column named like what every object inherits', () => {
  const inherited: TableColumn[] = [
    { key: 'constructor', label: 'Constructor', type: 'text' },
    { key: 'toString', label: 'Text', type: 'text' },
  ];
  const built: TableRow[] = [{ constructor: 'Brunel' }, { toString: 'x', constructor: 'Arup' }];

  it('reads a missing cell as empty, not as the inherited function', () => {
    expect(cellOf(built[0] as TableRow, 'toString')).toBeUndefined();
    expect(cellOf(built[0] as TableRow, 'constructor')).toBe('Brunel');
    expect(toCsv(inherited, built)).toBe('\uFEFFConstructor,Text\r\nBrunel,\r\nArup,x\r\n');
  });

  it('filters and sorts without tripping over it', () => {
    expect(filterRows(built, inherited, 'function')).toEqual([]);
    expect(filterRows(built, inherited, '', {})).toHaveLength(2);
    expect(filterRows(built, inherited, '', { toString: 'x' })).toEqual([built[1]]);
    const sorted = sortRows(built, inherited, { key: 'toString', direction: 'ascending' });
    expect(sorted.map((r) => r.constructor)).toEqual(['Arup', 'Brunel']);
  });
});
