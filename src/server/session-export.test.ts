/**
 * The export read a page at a time and sent in pieces must be byte for byte what one read and
 * one JSON.stringify (or one sessionMarkdown) gave, on a real SQLite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAGE_LIMIT, type SessionExport, type SessionSummary } from '../protocol/rest.js';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../store/types.js';
import { displayPages, exportJson, exportMarkdown } from './session-export.js';
import { sessionMarkdown } from './session-markdown.js';

let dir: string;
let stores: SqliteStores;
let summary: SessionSummary;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'navi-export-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
  summary = await stores.sessions.create({ id: 's', profile_id: 'p', title: 'Long "one" \u2028 ☃' });
});

afterEach(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

function message(i: number): StoredMessage {
  const m: StoredMessage = {
    id: `m${i}`,
    role: i % 3 === 2 ? 'tool' : i % 2 ? 'assistant' : 'user',
    content: i % 7 === 0 ? null : `text ${i} with "quotes", \\ and </script> \u2028`,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  };
  if (i % 5 === 0) m.thinking = `thought ${i}`;
  if (i % 11 === 0) m.tool_calls = [{ id: `c${i}`, name: 'shell', arguments: { command: 'ls', n: i } }];
  return m;
}

async function fill(count: number, from = 0): Promise<void> {
  const entries: BufferedMessage[] = [];
  for (let i = from; i < from + count; i++) {
    entries.push({ message: message(i), display: i % 13 !== 4, context: i % 17 !== 5 });
  }
  await stores.sessions.append('s', entries);
}

async function text(pieces: AsyncGenerator<string>): Promise<{ body: string; count: number }> {
  let body = '';
  let count = 0;
  for await (const piece of pieces) {
    body += piece;
    count += 1;
  }
  return { body, count };
}

const head: Omit<SessionExport, 'messages' | 'context'> = {
  navi_export: 1,
  exported_at: '2026-03-04T05:06:07.000Z',
  session: { title: 'Long', profile_id: 'p', created_at: '2026-01-01T00:00:00.000Z', pinned: true },
};

describe('displayPages', () => {
  it('is the whole display buffer in order, a page of at most MAX_PAGE_LIMIT at a time', async () => {
    await fill(2 * MAX_PAGE_LIMIT + 345);
    const pages = await displayPages(stores.sessions, 's');
    expect(pages.flat()).toEqual(await stores.sessions.getMessages('s'));
    expect(pages.length).toBe(3);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(MAX_PAGE_LIMIT);
  });

  it('of an empty session or one exactly a page long', async () => {
    expect((await displayPages(stores.sessions, 's')).flat()).toEqual([]);
    const entries: BufferedMessage[] = [];
    for (let i = 0; i < MAX_PAGE_LIMIT; i++)
      entries.push({ message: message(i), display: true, context: true });
    await stores.sessions.append('s', entries);
    const pages = await displayPages(stores.sessions, 's');
    expect(pages).toHaveLength(1);
    expect(pages[0]).toEqual(await stores.sessions.getMessages('s'));
  });

  it('leaves out what is appended while it reads, and misses nothing older', async () => {
    await fill(2 * MAX_PAGE_LIMIT + 10);
    const before = await stores.sessions.getMessages('s');
    const store = racing(stores.sessions, 2, () => fill(5, 90_000));
    expect((await displayPages(store, 's')).flat()).toEqual(before);
  });

  it('starts again when a rewind removes the page it was reading back from', async () => {
    await fill(3 * MAX_PAGE_LIMIT);
    const all = await stores.sessions.getMessages('s');
    // The first page read ends at the cursor; the rewind removes it before the second read.
    const cursor = all.at(-MAX_PAGE_LIMIT)!.id;
    const store = racing(stores.sessions, 2, async () => {
      const result = await stores.sessions.rewind('s', cursor, { keepAnchor: false });
      expect(result.ok).toBe(true);
    });
    const pages = await displayPages(store, 's');
    expect(pages.flat()).toEqual(await stores.sessions.getMessages('s'));
    expect(pages.flat()).toEqual(all.slice(0, -MAX_PAGE_LIMIT));
  });
});

/** The real store, doing `meanwhile` just before its `nth` page read, as a turn may. */
function racing(real: SessionStore, nth: number, meanwhile: () => Promise<void>): SessionStore {
  let calls = 0;
  const store: SessionStore = Object.create(real);
  store.getMessagePage = async (id, options) => {
    calls += 1;
    if (calls === nth) await meanwhile();
    return real.getMessagePage(id, options);
  };
  return store;
}

describe('exportJson', () => {
  it('is exactly JSON.stringify of the whole export, in one piece per page', async () => {
    await fill(2 * MAX_PAGE_LIMIT + 345);
    const pages = await displayPages(stores.sessions, 's');
    const context = await stores.sessions.getContext('s');
    const { body, count } = await text(exportJson(head, pages, context));
    const whole: SessionExport = { ...head, messages: await stores.sessions.getMessages('s'), context };
    expect(body).toBe(JSON.stringify(whole));
    expect(count).toBeGreaterThan(pages.length);
  });

  it('with empty buffers, and with empty pages among full ones', async () => {
    expect((await text(exportJson(head, [], []))).body).toBe(
      JSON.stringify({ ...head, messages: [], context: [] }),
    );
    const a = message(1);
    const b = message(2);
    expect((await text(exportJson(head, [[], [a], [], [b]], [b]))).body).toBe(
      JSON.stringify({ ...head, messages: [a, b], context: [b] }),
    );
  });
});

describe('exportMarkdown', () => {
  it('is exactly sessionMarkdown of the whole buffer', async () => {
    await fill(MAX_PAGE_LIMIT + 20);
    const at = new Date('2026-05-06T07:08:09Z');
    const pages = await displayPages(stores.sessions, 's');
    const { body } = await text(exportMarkdown(summary, pages, 'Secretary', at));
    expect(body).toBe(sessionMarkdown(summary, await stores.sessions.getMessages('s'), 'Secretary', at));
    expect(body).toContain('# Long "one"');
    expect(body.endsWith('\n')).toBe(true);
  });

  it('of an empty session is the header alone', async () => {
    const at = new Date('2026-05-06T07:08:09Z');
    expect((await text(exportMarkdown(summary, [], 'P', at))).body).toBe(
      sessionMarkdown(summary, [], 'P', at),
    );
  });
});
