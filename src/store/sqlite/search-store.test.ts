import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchHit } from '../../protocol/rest.js';
import type { BufferedMessage, StoredMessage } from '../types.js';
import { openDatabase } from './database.js';
import { createSqliteStores, type SqliteStores } from './index.js';
import { migrations } from './migrations/index.js';
import { parseSnippet, RANK_WINDOW, SqliteSearchStore, toSearchQuery } from './search-store.js';
import { SqliteSessionStore } from './session-store.js';

let dir: string;
let stores: SqliteStores;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-search-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
});

afterEach(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

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

describe('toSearchQuery', () => {
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

describe('SqliteSearchStore', () => {
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
    expect(stores.db.prepare('SELECT count(*) FROM search_docs').pluck().get()).toBe(0);
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
    expect(stores.db.prepare('SELECT count(*) FROM search_docs').pluck().get()).toBe(1);
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
    expect(stores.db.prepare('SELECT count(*) FROM search_docs').pluck().get()).toBe(1);
    expect(stores.db.prepare('SELECT count(*) FROM search_fts').pluck().get()).toBe(1);
  });

  it('forgets a message deleted from the display buffer', async () => {
    const m = msg('user', 'ephemeral words');
    await session('s1', '', [m]);
    stores.db.prepare('DELETE FROM messages WHERE session_id = ? AND id = ?').run('s1', m.id);
    expect(await stores.search.search('ephemeral', 5)).toEqual([]);
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
