import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchHit } from '../../protocol/rest.js';
import { type OpenedStores, openStores } from '../open-stores.js';
import { PgDatabase, postgresMigrations } from '../postgres/index.js';
import { PgSearchStore } from '../postgres/search-store.js';
import { openDatabase } from '../sqlite/database.js';
import { migrations } from '../sqlite/migrations/index.js';
import { parseSnippet, RANK_WINDOW, SqliteSearchStore, toSearchQuery } from '../sqlite/search-store.js';
import { SqliteSessionStore } from '../sqlite/session-store.js';
import { createTestSchema, needsPostgres, storeEngines, type TestStores } from '../test-engines.js';
import type { BufferedMessage, StoredMessage } from '../types.js';

let t: TestStores;
let stores: OpenedStores;

/** Rows of a table, on either engine. */
async function count(table: string): Promise<number> {
  if (stores.engine === 'sqlite')
    return Number(stores.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get());
  const [row] = await stores.pg.rows<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${table}`);
  return row?.n ?? -1;
}

/** Deletes one message row behind the store's back (a repair by hand), on either engine. */
async function deleteMessageRow(sessionId: string, id: string): Promise<void> {
  if (stores.engine === 'sqlite')
    stores.db.prepare('DELETE FROM messages WHERE session_id = ? AND id = ?').run(sessionId, id);
  else await stores.pg.query('DELETE FROM messages WHERE session_id = $1 AND id = $2', [sessionId, id]);
}

let counter = 0;
function msg(
  role: StoredMessage['role'],
  content: string | null,
  extra: Partial<StoredMessage> = {},
): StoredMessage {
  counter += 1;
  return { id: `m${counter}`, role, content, created_at: '2026-01-02T03:04:05.000Z', ...extra };
}
const display = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });
const contextOnly = (m: StoredMessage): BufferedMessage => ({ message: m, display: false, context: true });

/** The marked parts of a hit's snippet. */
const marked = (hit: SearchHit): string[] => hit.highlights.map(([a, b]) => hit.snippet.slice(a, b));

async function session(id: string, title: string, messages: StoredMessage[] = []): Promise<void> {
  await stores.sessions.create({ id, profile_id: 'secretary', title });
  await stores.sessions.append(id, messages.map(display));
}

describe('toSearchQuery (SQLite FTS5)', () => {
  it('quotes every word, requires all of them and lets the last one be a prefix', () => {
    expect(toSearchQuery('deploy the serv')).toBe('"deploy" "the" "serv"*');
    expect(toSearchQuery('x')).toBe('"x"');
  });

  it('takes a last word followed by a space or punctuation as finished, not a prefix', () => {
    expect(toSearchQuery('deploy the serv ')).toBe('"deploy" "the" "serv"');
    expect(toSearchQuery('serv?')).toBe('"serv"');
  });

  it('turns FTS syntax into plain words or nothing', () => {
    expect(toSearchQuery('"*')).toBeNull();
    expect(toSearchQuery('NEAR(a b) -c: d* OR ^e')).toBe('"near" "a" "b" "c" "d" "or" "e"');
    expect(toSearchQuery('   ')).toBeNull();
  });
});

describe('parseSnippet', () => {
  it('turns markers into offsets and white space into single spaces', () => {
    expect(parseSnippet('…say \uE000hello\uE001\n\n  to \uE000you\uE001 now')).toEqual({
      snippet: '…say hello to you now',
      highlights: [
        [5, 10],
        [14, 17],
      ],
    });
  });

  it('keeps a phrase with spaces inside one highlight', () => {
    const { snippet, highlights } = parseSnippet('\uE000red  fox\uE001 ran');
    expect(snippet).toBe('red fox ran');
    expect(highlights).toEqual([[0, 7]]);
  });
});

describe.each(storeEngines('search store tests'))('chat search on $name', ({ open }) => {
  beforeEach(async () => {
    t = await open();
    stores = t.stores;
  });
  afterEach(() => t.dispose());

  it('finds user and assistant text with the match highlighted, never tool output or context-only text', async () => {
    await session('s1', 'Holiday plans', [
      msg('user', 'Where should we go for the summer holiday?'),
      msg('assistant', 'Portugal is lovely in June.', { tool_calls: [] }),
      msg('tool', 'portugal.json: {"portugal": 1}', { tool_call_id: 'c1', name: 'search' }),
    ]);
    await stores.sessions.append('s1', [contextOnly(msg('user', 'portugal summary', { kind: 'summary' }))]);

    const hits = await stores.search.search('portugal', 10);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      session_id: 's1',
      session_title: 'Holiday plans',
      role: 'assistant',
      snippet: 'Portugal is lovely in June.',
      created_at: '2026-01-02T03:04:05.000Z',
    });
    expect(marked(hits[0] as SearchHit)).toEqual(['Portugal']);
  });

  it('finds a partial last word while it is typed, and requires every word', async () => {
    await session('s1', '', [msg('user', 'The deployment of the server failed')]);
    await session('s2', '', [msg('user', 'A deployment went well')]);
    expect((await stores.search.search('deploym', 10)).map((h) => h.session_id).sort()).toEqual(['s1', 's2']);
    const both = await stores.search.search('deployment serv', 10);
    expect(both.map((h) => h.session_id)).toEqual(['s1']);
    expect(marked(both[0] as SearchHit)).toEqual(['deployment', 'server']);
    // Only the last word is a prefix.
    expect(await stores.search.search('deploy server', 10)).toEqual([]);
  });

  it('matches without regard to case or accents', async () => {
    await session('s1', '', [msg('user', 'Un café à Zürich')]);
    expect(await stores.search.search('CAFE zurich', 5)).toHaveLength(1);
  });

  it('ranks a title match above the same word in a message', async () => {
    await session('body', 'Shopping', [msg('user', 'Remember the kubernetes upgrade, and more words here')]);
    await session('title', 'Kubernetes upgrade', [msg('user', 'Nothing about it here')]);
    const hits = await stores.search.search('kubernetes', 10);
    expect(hits.map((h) => [h.session_id, h.message_id])).toEqual([
      ['title', null],
      ['body', expect.any(String)],
    ]);
    expect(hits[0]).toMatchObject({
      session_title: 'Kubernetes upgrade',
      role: null,
      snippet: 'Kubernetes upgrade',
    });
  });

  it('ranks the message saying more about the words first (bm25)', async () => {
    await session('s1', '', [
      msg('user', 'a long message that mentions sourdough only once among many other unrelated words'),
      msg('user', 'sourdough sourdough bread'),
    ]);
    const hits = await stores.search.search('sourdough', 10);
    expect(hits.map((h) => h.snippet)).toEqual([
      'sourdough sourdough bread',
      expect.stringContaining('mentions sourdough only once'),
    ]);
  });

  it('ranks the newest matches of a word found everywhere, and still finds a rare word however old', async () => {
    const oldest = msg('user', 'common common common and the unique quasar');
    await session('s1', '', [oldest]);
    await session(
      's2',
      '',
      Array.from({ length: RANK_WINDOW + 10 }, (_, i) => msg('user', `common filler words number ${i}`)),
    );
    const common = await stores.search.search('common', 5);
    expect(common).toHaveLength(5);
    expect(common.map((h) => h.message_id)).not.toContain(oldest.id);
    expect((await stores.search.search('quasar', 5)).map((h) => h.message_id)).toEqual([oldest.id]);
  });

  it('cuts a long message to a snippet around the match', async () => {
    const filler = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    await session('s1', '', [msg('assistant', `${filler} needle ${filler}`)]);
    const [hit] = await stores.search.search('needle', 5);
    expect(hit?.snippet.length).toBeLessThan(200);
    expect(hit?.snippet.startsWith('…')).toBe(true);
    expect(hit?.snippet.endsWith('…')).toBe(true);
    expect(marked(hit as SearchHit)).toEqual(['needle']);
  });

  it('limits the results and clamps the limit to 1…50', async () => {
    await session(
      's1',
      '',
      Array.from({ length: 60 }, (_, i) => msg('user', `apple number ${i}`)),
    );
    expect(await stores.search.search('apple', 3)).toHaveLength(3);
    expect(await stores.search.search('apple', 500)).toHaveLength(50);
    expect(await stores.search.search('apple', 0)).toHaveLength(1);
    expect(await stores.search.search('apple', Number.NaN)).toHaveLength(1);
  });

  it('treats hostile FTS syntax as words and never throws', async () => {
    await session('s1', '', [msg('user', 'near the fox, not the dog')]);
    for (const q of [
      '"',
      '*',
      'NEAR(',
      '-',
      ':',
      'fox"',
      'AND',
      'NOT dog',
      'title:fox',
      '^fox',
      '(fox',
      'fox*)',
    ]) {
      await expect(stores.search.search(q, 10), q).resolves.toBeInstanceOf(Array);
    }
    expect(await stores.search.search('NEAR(', 10)).toHaveLength(1);
    expect(await stores.search.search('title:fox', 10)).toEqual([]);
    expect(await stores.search.search('"fox" OR "cat"', 10)).toEqual([]);
    expect(await stores.search.search('-- ; DROP TABLE messages', 10)).toEqual([]);
  });

  it('marks matches unambiguously even when the text holds the marker characters', async () => {
    await session('s1', '', [msg('user', 'odd \uE000text\uE001 with markers')]);
    const [hit] = await stores.search.search('markers', 5);
    expect(hit?.snippet).toBe('odd text with markers');
    expect(marked(hit as SearchHit)).toEqual(['markers']);
  });

  it('follows a message whose text grows while it streams, and one emptied', async () => {
    const answer = msg('assistant', 'Thinking');
    await session('s1', '', [answer]);
    await stores.sessions.updateMessage('s1', answer.id, { content: 'The answer is photosynthesis' });
    expect(await stores.search.search('thinking', 5)).toEqual([]);
    expect(await stores.search.search('photosynthesis', 5)).toHaveLength(1);
    // A payload-only update leaves the index as it is.
    await stores.sessions.updateMessage('s1', answer.id, { interrupted: false });
    expect(await stores.search.search('photosynthesis', 5)).toHaveLength(1);
    await stores.sessions.updateMessage('s1', answer.id, { content: null });
    expect(await stores.search.search('photosynthesis', 5)).toEqual([]);
    await stores.sessions.updateMessage('s1', answer.id, { content: 'back again' });
    expect(await stores.search.search('again', 5)).toHaveLength(1);
  });

  it('indexes an answer that starts without text once its text arrives', async () => {
    const answer = msg('assistant', null, { tool_calls: [{ id: 'c', name: 'x', arguments: {} }] });
    await session('s1', '', [answer]);
    expect(await count('search_docs')).toBe(0);
    await stores.sessions.updateMessage('s1', answer.id, { content: 'late words' });
    expect(await stores.search.search('late', 5)).toHaveLength(1);
  });

  it('follows a rename: the old title no longer matches, the new one does', async () => {
    await session('s1', 'Old name');
    expect(await stores.search.search('old', 5)).toHaveLength(1);
    await stores.sessions.update('s1', { title: 'Brand new' });
    expect(await stores.search.search('old', 5)).toEqual([]);
    const [hit] = await stores.search.search('brand', 5);
    expect(hit).toMatchObject({ session_id: 's1', session_title: 'Brand new', message_id: null });
    // Updates that leave the title alone do not touch the index.
    await stores.sessions.update('s1', { last_active: new Date().toISOString(), pinned: true });
    expect(await stores.search.search('brand', 5)).toHaveLength(1);
    expect(await count('search_docs')).toBe(1);
  });

  it('names the current title on a message hit after a rename', async () => {
    await session('s1', 'First', [msg('user', 'zebra crossing')]);
    await stores.sessions.update('s1', { title: 'Second' });
    expect((await stores.search.search('zebra', 5))[0]?.session_title).toBe('Second');
  });

  it('forgets everything of a deleted session and keeps the others', async () => {
    await session('gone', 'Gone walrus', [msg('user', 'walrus facts'), msg('assistant', 'walrus tusks')]);
    await session('kept', '', [msg('user', 'walrus again')]);
    await stores.sessions.delete('gone');
    expect((await stores.search.search('walrus', 10)).map((h) => h.session_id)).toEqual(['kept']);
    expect(await count('search_docs')).toBe(1);
    if (stores.engine === 'sqlite') expect(await count('search_fts')).toBe(1);
  });

  it('forgets a message deleted from the display buffer', async () => {
    const m = msg('user', 'ephemeral words');
    await session('s1', '', [m]);
    await deleteMessageRow('s1', m.id);
    expect(await stores.search.search('ephemeral', 5)).toEqual([]);
  });

  it('finds words joined by punctuation one by one, and marks an accented word found without its accent', async () => {
    await session('s1', '', [msg('user', 'Copy navi.db to the_backup folder, then order a café crème')]);
    expect(await stores.search.search('navi', 5)).toHaveLength(1);
    expect(await stores.search.search('backup db', 5)).toHaveLength(1);
    const [hit] = await stores.search.search('cafe creme', 5);
    expect(marked(hit as SearchHit)).toEqual(['café', 'crème']);
  });

  it('sees what another process wrote, at once', async () => {
    // The same database opened a second time (a second navi serve): its own connection or pool.
    const again = await openStores(t.settings);
    try {
      await session('s1', 'Lighthouse keeping', [msg('user', 'the lamp needs oil')]);
      expect((await again.search.search('lighthouse', 5)).map((h) => h.session_id)).toEqual(['s1']);
      await again.sessions.update('s1', { title: 'Renamed elsewhere' });
      expect(await stores.search.search('lighthouse', 5)).toEqual([]);
      expect(await stores.search.search('elsewhere', 5)).toHaveLength(1);
    } finally {
      await again.close();
    }
  });

  it('keeps the same message id apart in two sessions', async () => {
    await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
    await stores.sessions.create({ id: 'b', profile_id: 'secretary' });
    await stores.sessions.append('a', [display({ ...msg('user', 'shared llama'), id: 'same' })]);
    await stores.sessions.append('b', [display({ ...msg('user', 'shared llama'), id: 'same' })]);
    await stores.sessions.delete('a');
    expect((await stores.search.search('llama', 5)).map((h) => h.session_id)).toEqual(['b']);
  });
});

describe('migration 007 on a database that already has sessions', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'navi-search-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('indexes the existing titles and display messages', async () => {
    const file = join(dir, 'old.db');
    const old = openDatabase(
      file,
      migrations.filter((m) => m.version < 7),
    );
    const sessions = new SqliteSessionStore(old);
    await sessions.create({ id: 'old1', profile_id: 'secretary', title: 'Garden notes' });
    await sessions.append('old1', [
      display(msg('user', 'When do I plant tulips?')),
      display(msg('assistant', 'Plant tulips in autumn.')),
      display(msg('tool', 'tulip database row', { tool_call_id: 'c', name: 'db' })),
      display(msg('assistant', '   ')),
    ]);
    await sessions.create({ id: 'old2', profile_id: 'secretary' });
    await sessions.append('old2', [display(msg('user', 'tulips again'))]);
    old.close();

    const upgraded = openDatabase(file);
    try {
      const search = new SqliteSearchStore(upgraded);
      const hits = await search.search('tulips', 10);
      expect(hits.map((h) => [h.session_id, h.role]).sort()).toEqual([
        ['old1', 'assistant'],
        ['old1', 'user'],
        ['old2', 'user'],
      ]);
      expect(await search.search('garden', 10)).toMatchObject([{ session_id: 'old1', message_id: null }]);
      expect(await search.search('database', 10)).toEqual([]);
      // The triggers work on the upgraded file too.
      await new SqliteSessionStore(upgraded).update('old1', { title: 'Flowers' });
      expect(await search.search('garden', 10)).toEqual([]);
      expect(upgraded.prepare('SELECT count(*) FROM search_docs').pluck().get()).toBe(4);
    } finally {
      upgraded.close();
    }
  });
});

describe.skipIf(!needsPostgres('migration 004 test'))(
  'migration 004 on a PostgreSQL database that already has sessions',
  () => {
    it('indexes the existing titles and display messages, oldest first', async () => {
      const schema = await createTestSchema();
      try {
        const old = await PgDatabase.open(schema.url, {
          migrations: postgresMigrations.filter((m) => m.version < 4),
        });
        try {
          await old.query(
            `INSERT INTO sessions (id, profile_id, title, created_at, last_active) VALUES
             ('old1', 'secretary', 'Garden notes', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
             ('old2', 'secretary', '', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z')`,
          );
          await old.query(
            `INSERT INTO messages (session_id, seq, id, role, content, created_at) VALUES
             ('old1', 1, 'a', 'user', 'When do I plant tulips?', '2026-01-01T00:00:01.000Z'),
             ('old1', 2, 'b', 'assistant', 'Plant tulips in autumn.', '2026-01-01T00:00:02.000Z'),
             ('old1', 3, 'c', 'tool', 'tulip database row', '2026-01-01T00:00:03.000Z'),
             ('old1', 4, 'd', 'assistant', '   ', '2026-01-01T00:00:04.000Z'),
             ('old2', 1, 'e', 'user', 'tulips again', '2026-01-02T00:00:01.000Z')`,
          );
        } finally {
          await old.close();
        }
        const upgraded = await PgDatabase.open(schema.url);
        try {
          const search = new PgSearchStore(upgraded);
          const hits = await search.search('tulips', 10);
          expect(hits.map((h) => [h.session_id, h.message_id]).sort()).toEqual([
            ['old1', 'a'],
            ['old1', 'b'],
            ['old2', 'e'],
          ]);
          expect(await search.search('garden', 10)).toMatchObject([{ session_id: 'old1', message_id: null }]);
          expect(await search.search('database', 10)).toEqual([]);
          const docs = await upgraded.rows<{ id: string | null }>(
            'SELECT coalesce(message_id, session_id) AS id FROM search_docs ORDER BY docid',
          );
          expect(docs.map((d) => d.id)).toEqual(['old1', 'a', 'b', 'e']);
        } finally {
          await upgraded.close();
        }
      } finally {
        await schema.drop();
      }
    });
  },
);
