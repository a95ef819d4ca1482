/**
 * The table component and the inline 3D viewer in a real headless Chromium against the real
 * server and the fake LLM: sorting, filtering and the CSV download's bytes; an STL shared into
 * the session drawn with WebGL; rendered PNG views shown as images.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const specials = [
  { name: 'Special formula', price: 50, site: 'https://formula.example/', pool: false, note: '=SUM(A1:A9)' },
  { name: 'Special quote', price: 75.25, site: null, pool: true, note: 'say "hi", then\nleave' },
];
const filler = Array.from({ length: 58 }, (_, i) => ({
  name: `Hotel ${i + 1}`,
  price: 100 + ((i * 37) % 900),
  site: `https://hotel-${i + 1}.example/`,
  pool: i % 2 === 0,
  note: i === 0 ? null : `room ${i + 1}`,
}));
const tablePayload = {
  title: 'Hotels',
  description: 'Sixty hotels near the sea.',
  file_name: 'hotels-2026',
  columns: [
    { key: 'name', label: 'Name' },
    { key: 'price', label: 'Price', type: 'number' },
    { key: 'site', label: 'Site', type: 'url' },
    { key: 'pool', label: 'Pool', type: 'boolean' },
    { key: 'note', label: 'Note' },
  ],
  rows: [...filler.slice(0, 20), ...specials, ...filler.slice(20)],
};

async function columnTexts(page: Page, index: number): Promise<string[]> {
  return page
    .getByTestId('ui-table')
    .locator(`tbody tr[data-testid="table-row"] td:nth-child(${index})`)
    .allTextContents();
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: tables and 3D models', () => {
  const env = useWebEnv();

  it('sorts, filters and downloads a table as CSV, and shows it again after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'render_component', arguments: { component_name: 'table', payload: tablePayload } },
        ],
      },
      { text: 'Here are the hotels.' },
    );
    await sendMessage(page, 'List the hotels');
    const table = page.getByTestId('ui-table');
    await waitForText(table.getByTestId('table-count'), '60 rows');
    await waitForIdle(page);
    // A page of rows at first; "show more" adds the rest.
    expect(await table.getByTestId('table-row').count()).toBe(50);
    await table.getByTestId('table-more').click();
    expect(await table.getByTestId('table-row').count()).toBe(60);
    expect(await table.getByTestId('table-more').count()).toBe(0);

    // Links open elsewhere without handing this page over; booleans read as ✓ and —.
    const link = table.locator('a[href="https://formula.example/"]');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await link.getAttribute('target')).toBe('_blank');
    const firstPool = (await columnTexts(page, 4))[0];
    expect(firstPool).toContain('✓');

    // Numbers sort as numbers, both ways; the header says how.
    const priceHeader = table.locator('th[data-key="price"]');
    expect(await priceHeader.getAttribute('aria-sort')).toBe('none');
    await table.getByTestId('sort-price').click();
    expect(await priceHeader.getAttribute('aria-sort')).toBe('ascending');
    const prices = filler.map((r) => r.price).concat([50, 75.25]);
    const ascending = [...prices].sort((a, b) => a - b).map((n) => n.toLocaleString('en-US'));
    expect(await columnTexts(page, 2)).toEqual(ascending);
    await table.getByTestId('sort-price').click();
    expect(await priceHeader.getAttribute('aria-sort')).toBe('descending');
    expect((await columnTexts(page, 2)).slice(0, 50)).toEqual([...ascending].reverse().slice(0, 50));
    await screenshot(page, 'laptop-light-table');

    // The filter matches any cell; the count says how many are left.
    await table.getByTestId('table-filter').fill('SPECIAL');
    await waitForText(table.getByTestId('table-count'), '2 of 60 rows');
    expect(await columnTexts(page, 1)).toEqual(['Special quote', 'Special formula']);
    await table.getByRole('button', { name: 'By column' }).click();
    await table.getByLabel('Filter Note').fill('room 5');
    await waitForText(table.getByTestId('table-count'), '0 of 60 rows');
    await waitForText(table, 'No rows match the filter.');
    await table.getByLabel('Filter Note').fill('');
    await waitForText(table.getByTestId('table-count'), '2 of 60 rows');

    // The CSV holds the rows as filtered and ordered, quoted, with formulas defused.
    const download = page.waitForEvent('download');
    await table.getByTestId('table-csv').click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('hotels-2026.csv');
    const bytes = await readFile(await file.path());
    expect(bytes.toString('utf8')).toBe(
      '\uFEFFName,Price,Site,Pool,Note\r\n' +
        'Special quote,75.25,,true,"say ""hi"", then\nleave"\r\n' +
        "Special formula,50,https://formula.example/,false,'=SUM(A1:A9)\r\n",
    );

    // Stored on the tool message: a reload shows it again, in its own order.
    await page.reload();
    await waitForText(page.getByTestId('ui-table').getByTestId('table-count'), '60 rows');
    expect((await columnTexts(page, 1))[0]).toBe('Hotel 1');
    await page.close();
  });

  it('shows what was wrong with a table that breaks the schema, instead of a blank', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    const broken = { columns: [{ key: 'n', label: 'N', type: 'number' }], rows: [{ n: 'many' }] };
    env.fake.enqueue(
      { toolCalls: [{ name: 'render_component', arguments: { component_name: 'table', payload: broken } }] },
      { text: 'Done.' },
    );
    await sendMessage(page, 'A broken table');
    await waitForText(page.getByTestId('ui-component-invalid'), 'payload.rows[0].n: must be a number');
    expect(await page.getByTestId('ui-table').count()).toBe(0);
    await page.close();
  });
});
