/**
 * The table component and the inline 3D viewer in a real headless Chromium against the real
 * server and the fake LLM: sorting, filtering and the CSV download's bytes; an STL shared into
 * the session drawn with WebGL; rendered PNG views shown as images.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import { canvasPixels, difference, expectModelDrawn } from './viewer-pictures.js';
import {
  openNewSession,
  PHONE,
  screenshot,
  sendMessage,
  useWebEnv,
  type WebEnv,
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

type Vec = [number, number, number];

/** A binary STL of the given triangles (normals left zero, as many exporters write them). */
function binaryStl(triangles: [Vec, Vec, Vec][]): Buffer {
  const out = Buffer.alloc(84 + triangles.length * 50);
  out.write('navi test model', 0, 'ascii');
  out.writeUInt32LE(triangles.length, 80);
  triangles.forEach((triangle, i) => {
    const at = 84 + i * 50;
    triangle.forEach((vertex, v) => {
      vertex.forEach((value, c) => {
        out.writeFloatLE(value, at + 12 + v * 12 + c * 4);
      });
    });
  });
  return out;
}

/** A box of 12 triangles, as OpenSCAD's cube([x, y, z]) writes it. */
function boxStl(x: number, y: number, z: number): Buffer {
  const p = (i: number): Vec => [i & 1 ? x : 0, i & 2 ? y : 0, i & 4 ? z : 0];
  const quads = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
  ];
  return binaryStl(
    quads.flatMap(([a, b, c, d]) => [
      [p(a ?? 0), p(b ?? 0), p(c ?? 0)],
      [p(a ?? 0), p(c ?? 0), p(d ?? 0)],
    ]),
  );
}

async function upload(env: WebEnv, sessionId: string, name: string, bytes: Buffer): Promise<number> {
  const body = new FormData();
  body.append('file', new Blob([new Uint8Array(bytes)]), name);
  const response = await fetch(`${env.navi.url}/sessions/${sessionId}/files`, { method: 'POST', body });
  expect(response.status).toBe(201);
  const saved = (await response.json()) as { name: string; size: number };
  expect(saved.name).toBe(name);
  return saved.size;
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

  it('shows what was wrong with a table or form that breaks the schema, instead of a blank', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    const words = ['many', 'few', 'some', 'none', 'lots', 'all', 'half'];
    const broken = { columns: [{ key: 'n', label: 'N', type: 'number' }], rows: words.map((n) => ({ n })) };
    // Not a form even to the lenient reader of older payloads.
    const notForm = { form_id: 'x', fields: 'none' };
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'render_component', arguments: { component_name: 'table', payload: broken } },
          { name: 'render_component', arguments: { component_name: 'form', payload: notForm } },
        ],
      },
      { text: 'Done.' },
    );
    await sendMessage(page, 'A broken table');
    const invalid = page.getByTestId('ui-component-invalid');
    await waitForText(invalid.first(), 'payload.rows[0].n: must be a number');
    // Five problems are enough to read; the rest are counted.
    expect(await invalid.first().locator('li').count()).toBe(5);
    await waitForText(invalid.first(), 'and 2 more problems');
    await waitForText(invalid.nth(1), 'This form could not be shown');
    await waitForText(invalid.nth(1), 'payload.fields');
    expect(await page.getByTestId('ui-table').count()).toBe(0);
    await page.close();
  });

  it('shows and filters a column named like what every object inherits', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    const payload = {
      columns: [
        { key: 'constructor', label: 'Builder' },
        { key: 'toString', label: 'Bridge' },
      ],
      rows: [{ constructor: 'Brunel' }, { constructor: 'Arup', toString: 'Millennium' }] as Record<
        string,
        string
      >[],
    };
    env.fake.enqueue(
      { toolCalls: [{ name: 'render_component', arguments: { component_name: 'table', payload } }] },
      { text: 'Builders.' },
    );
    await sendMessage(page, 'Bridge builders');
    const table = page.getByTestId('ui-table');
    await waitForText(table.getByTestId('table-count'), '2 rows');
    expect(await columnTexts(page, 2)).toEqual(['', 'Millennium']);
    await table.getByRole('button', { name: 'By column' }).click();
    expect(await table.getByLabel('Filter Builder').inputValue()).toBe('');
    await table.getByLabel('Filter Bridge').fill('mill');
    await waitForText(table.getByTestId('table-count'), '1 of 2 rows');
    expect(await columnTexts(page, 1)).toEqual(['Arup']);
    await page.close();
  });

  it('draws a shared STL model, turns it by dragging, resets it, and shows the rendered views as images', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    const png = (colour: string) =>
      sharp({ create: { width: 96, height: 64, channels: 3, background: colour } })
        .png()
        .toBuffer();
    const files = [
      { name: 'box.stl', bytes: boxStl(30, 20, 10), mime_type: 'model/stl' },
      { name: 'plate.stl', bytes: boxStl(40, 40, 2), mime_type: 'model/stl' },
      { name: 'box-front.png', bytes: await png('#c0352b'), mime_type: 'image/png' },
      { name: 'box-top.png', bytes: await png('#1f8a4c'), mime_type: 'image/png' },
      { name: 'box.scad', bytes: Buffer.from('cube([30, 20, 10]);\n'), mime_type: 'text/plain' },
    ];
    const saved = [];
    for (const file of files)
      saved.push({
        name: file.name,
        mime_type: file.mime_type,
        size: await upload(env, id, file.name, file.bytes),
      });
    env.fake.enqueue(
      { toolCalls: [{ name: 'save_files', arguments: { files: saved } }] },
      { text: 'The box is rendered above.' },
    );
    await sendMessage(page, 'Make me a box');
    const shared = page.getByTestId('shared-files');
    const viewer = shared.getByTestId('stl-viewer');
    const first = await expectModelDrawn(viewer);
    await waitForIdle(page);
    await screenshot(page, 'laptop-light-stl-viewer');

    // Dragging turns the model; Reset brings back the first view exactly.
    const canvas = viewer.getByTestId('stl-canvas');
    const box = await canvas.boundingBox();
    if (!box) throw new Error('the canvas has no size');
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.4);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.55, { steps: 8 });
    await page.mouse.up();
    const turned = await canvasPixels(canvas);
    expect(difference(first, turned)).toBeGreaterThan(2);
    await viewer.getByTestId('stl-reset').click();
    await page.mouse.move(0, 0);
    expect(difference(first, await canvasPixels(canvas))).toBeLessThan(0.5);
    // By keyboard too: Shift and an arrow key turn the focused view.
    await canvas.focus();
    for (let i = 0; i < 4; i++) await canvas.press('Shift+ArrowLeft');
    expect(difference(first, await canvasPixels(canvas))).toBeGreaterThan(2);
    await viewer.getByTestId('stl-reset').click();
    await canvas.evaluate((element) => (element as HTMLElement).blur());
    expect(difference(first, await canvasPixels(canvas))).toBeLessThan(0.5);

    // The rendered PNG views are images; the source is a download.
    const images = shared.getByTestId('shared-image');
    expect(await images.count()).toBe(2);
    for (const image of await images.all()) {
      await image.scrollIntoViewIfNeeded();
      await expect
        .poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
        .toBe(96);
    }
    expect(await images.first().getAttribute('alt')).toBe('box-front.png');
    const source = shared.getByTestId('shared-download');
    expect(await source.textContent()).toBe('box.scad');
    expect(await source.getAttribute('href')).toBe(`/sessions/${id}/files/box.scad`);

    // One model at a time: the other opens on request, in the same single viewer.
    await shared.getByRole('button', { name: 'View plate.stl in 3D' }).click();
    await waitForText(shared.getByTestId('model-current').locator('..'), 'plate.stl');
    const plate = await expectModelDrawn(shared.getByTestId('stl-viewer'));
    expect(difference(first, plate)).toBeGreaterThan(2);
    expect(await shared.getByTestId('stl-canvas').count()).toBe(1);

    // Dark theme: the model takes the dark accent and stays visible.
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await expectModelDrawn(shared.getByTestId('stl-viewer'));
    expect(difference(plate, dark)).toBeGreaterThan(2);
    await screenshot(page, 'laptop-dark-stl-viewer');
    await page.emulateMedia({ colorScheme: 'light' });

    // From the stored tool message after a reload.
    await page.reload();
    await expectModelDrawn(page.getByTestId('shared-files').getByTestId('stl-viewer'));
    expect(await page.getByTestId('shared-image').count()).toBe(2);
    await page.close();
  });

  it('draws a model published with kind "model"', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    await upload(env, id, 'bracket.stl', boxStl(10, 10, 30));
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'publish_note', arguments: { name: 'bracket.stl', kind: 'model', title: 'Bracket' } },
        ],
      },
      { text: 'Here is the bracket.' },
    );
    await sendMessage(page, 'Show the bracket');
    const published = page.locator('[data-testid="published"][data-kind="model"]');
    await expectModelDrawn(published.getByTestId('stl-viewer'));
    expect(await published.getByTestId('published-caption').textContent()).toBe('Bracket');
    await page.close();
  });

  it('draws a long session of models without losing any: only those near the view hold a context', async () => {
    const page = await env.newPage();
    const warnings: string[] = [];
    page.on('console', (message) => {
      if (/WebGL/i.test(message.text())) warnings.push(message.text());
    });
    const id = await openNewSession(env, page);
    await upload(env, id, 'part.stl', boxStl(8, 8, 8));
    const calls = Array.from({ length: 20 }, (_, i) => ({
      name: 'publish_note',
      arguments: { name: 'part.stl', kind: 'model', title: `Part ${i + 1}` },
    }));
    env.fake.enqueue({ toolCalls: calls }, { text: 'Twenty parts.' });
    await sendMessage(page, 'Show twenty parts');
    await waitForText(page.getByTestId('assistant-message').last(), 'Twenty parts.');
    await waitForIdle(page);
    // Opened again, as a long session is: the newest are drawn, the oldest wait.
    await page.reload();
    const viewers = page.getByTestId('stl-viewer');
    await expectModelDrawn(viewers.last());
    const states = () => viewers.evaluateAll((all) => all.map((v) => v.getAttribute('data-state')));
    expect(await states()).toHaveLength(20);
    expect((await states())[0]).toBe('waiting');
    // Scrolled to the top: the first is drawn, the last gave its context back.
    await expectModelDrawn(viewers.first());
    await expect.poll(async () => (await states()).at(-1)).toBe('waiting');
    const after = await states();
    expect(after.filter((s) => s === 'ready').length).toBeLessThan(10);
    expect(after).not.toContain('lost');
    expect(warnings).toEqual([]);
    await page.close();
  });

  it('says why a model cannot be drawn and offers the download, never an empty box', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    await upload(env, id, 'page.stl', Buffer.from('<!doctype html><p>Not a model</p>'));
    await upload(env, id, 'empty.stl', binaryStl([]));
    await upload(env, id, 'good.stl', boxStl(5, 5, 5));
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'publish_note', arguments: { name: 'page.stl', kind: 'model' } },
          { name: 'publish_note', arguments: { name: 'empty.stl', kind: 'model' } },
          { name: 'publish_note', arguments: { name: 'gone.stl', kind: 'model' } },
        ],
      },
      { text: 'Tried.' },
    );
    await sendMessage(page, 'Show the broken models');
    const problems = page.getByTestId('stl-problem');
    await waitForText(problems, 'page.stl in 3D: the file is not an STL model');
    await waitForText(problems, 'empty.stl in 3D: the model has no triangles');
    await waitForText(problems, 'gone.stl in 3D: the server answered 404');
    const download = page
      .locator('[data-testid="stl-viewer"]')
      .first()
      .getByRole('link', { name: 'Download page.stl' });
    expect(await download.getAttribute('href')).toBe(`/sessions/${id}/files/page.stl`);
    await waitForIdle(page);
    await screenshot(page, 'laptop-light-stl-problems');
    await page.close();

    // A browser without WebGL is told so, with the download.
    const noGl = await env.newPage();
    await noGl.addInitScript(() => {
      const original = HTMLCanvasElement.prototype.getContext;
      HTMLCanvasElement.prototype.getContext = function (
        this: HTMLCanvasElement,
        kind: string,
        ...rest: unknown[]
      ) {
        if (kind.startsWith('webgl')) return null;
        return (original as (...args: unknown[]) => unknown).call(this, kind, ...rest);
      } as typeof original;
    });
    const session = await openNewSession(env, noGl);
    await upload(env, session, 'good.stl', boxStl(5, 5, 5));
    env.fake.enqueue(
      { toolCalls: [{ name: 'publish_note', arguments: { name: 'good.stl', kind: 'model' } }] },
      { text: 'Shown.' },
    );
    await sendMessage(noGl, 'Show it');
    await waitForText(noGl.getByTestId('stl-problem'), 'WebGL');
    expect(await noGl.getByRole('link', { name: 'Download good.stl' }).count()).toBe(1);
    await noGl.close();
  });

  it('fits a table and a model on a phone-sized screen', async () => {
    const page = await env.newPage(PHONE);
    const id = await openNewSession(env, page);
    await upload(env, id, 'box.stl', boxStl(30, 20, 10));
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'render_component', arguments: { component_name: 'table', payload: tablePayload } },
          { name: 'publish_note', arguments: { name: 'box.stl', kind: 'model', title: 'Box' } },
        ],
      },
      { text: 'Both above.' },
    );
    await sendMessage(page, 'Table and box on my phone');
    await waitForText(page.getByTestId('table-count'), '60 rows');
    await expectModelDrawn(page.getByTestId('stl-viewer'));
    await waitForIdle(page);
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByTestId('ui-table').scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-light-table');
    await page.getByTestId('stl-viewer').scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-light-stl-viewer');
    await page.close();
  });
});
