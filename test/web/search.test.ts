/**
 * The sidebar search's logic (web/src/lib/search.ts): snippets cut into marked and plain parts
 * whatever offsets arrive, where a hit links to, and searching as the person types (a search
 * once typing pauses, answers to older queries dropped, an empty box searching nothing).
 */
import { describe, expect, it } from 'vitest';
import type { SearchHit, SearchResults } from '../../src/protocol/rest.js';
import { hitHref, hitLabel, type Schedule, SessionSearch, snippetParts } from '../../web/src/lib/search.js';
import { settle } from '../support/manual-clock.js';

describe('snippetParts', () => {
  it('marks the highlighted parts and keeps the rest as text', () => {
    expect(
      snippetParts('say hello to you', [
        [4, 9],
        [13, 16],
      ]),
    ).toEqual([
      { text: 'say ', mark: false },
      { text: 'hello', mark: true },
      { text: ' to ', mark: false },
      { text: 'you', mark: true },
    ]);
    expect(snippetParts('plain', [])).toEqual([{ text: 'plain', mark: false }]);
    expect(snippetParts('', [[0, 3]])).toEqual([]);
  });

  it('keeps every character once, in order, whatever the offsets', () => {
    const text = 'abcdefghij';
    const hostile: [number, number][][] = [
      [[8, 20]],
      [[-5, 2]],
      [[5, 3]],
      [
        [2, 6],
        [4, 8],
      ],
      [
        [6, 8],
        [1, 3],
      ],
      [[2.5, 4]],
      [[Number.NaN, 4]],
      [[3, 3]],
    ];
    for (const ranges of hostile) {
      const parts = snippetParts(text, ranges);
      expect(parts.map((p) => p.text).join(''), JSON.stringify(ranges)).toBe(text);
      expect(
        parts.every((p) => p.text !== ''),
        JSON.stringify(ranges),
      ).toBe(true);
    }
    expect(
      snippetParts(text, [
        [2, 6],
        [4, 8],
      ]).filter((p) => p.mark),
    ).toEqual([
      { text: 'cdef', mark: true },
      { text: 'gh', mark: true },
    ]);
  });

  it('leaves markup as text (the component renders parts as text, never as HTML)', () => {
    expect(snippetParts('<img src=x onerror=alert(1)>', [[1, 4]])).toEqual([
      { text: '<', mark: false },
      { text: 'img', mark: true },
      { text: ' src=x onerror=alert(1)>', mark: false },
    ]);
  });
});

const hit = (extra: Partial<SearchHit> = {}): SearchHit => ({
  session_id: 's 1',
  session_title: 'Trip',
  message_id: 'm/1',
  role: 'user',
  snippet: 'x',
  highlights: [],
  created_at: '2026-01-01T00:00:00Z',
  ...extra,
});

describe('hitHref and hitLabel', () => {
  it('opens the chat at the message, or just the chat for a title', () => {
    expect(hitHref(hit())).toBe('#/sessions/s%201?m=m%2F1');
    expect(hitHref(hit({ message_id: null, role: null }))).toBe('#/sessions/s%201');
  });

  it('says who wrote the text', () => {
    expect(hitLabel(hit())).toBe('You');
    expect(hitLabel(hit({ role: 'assistant' }))).toBe('Navi');
    expect(hitLabel(hit({ message_id: null, role: null }))).toBe('Title');
  });
});

/** A schedule the test runs by hand. */
function manualSchedule(): { schedule: Schedule; pending: () => number; fire: () => void } {
  let waiting: (() => void)[] = [];
  return {
    schedule: (fn) => {
      waiting.push(fn);
      return () => {
        waiting = waiting.filter((f) => f !== fn);
      };
    },
    pending: () => waiting.length,
    fire: () => {
      const now = waiting;
      waiting = [];
      for (const fn of now) fn();
    },
  };
}

/** A fetcher whose answers the test releases, in any order. */
function manualFetch() {
  const calls: { query: string; resolve: (r: SearchResults) => void; reject: (e: Error) => void }[] = [];
  const fetcher = (query: string) =>
    new Promise<SearchResults>((resolve, reject) => {
      calls.push({ query, resolve, reject });
    });
  return { calls, fetcher };
}

describe('SessionSearch', () => {
  it('searches once typing pauses, with the last text only', async () => {
    const clock = manualSchedule();
    const api = manualFetch();
    const search = new SessionSearch(api.fetcher, String, clock.schedule);
    search.input('w');
    search.input('wa');
    search.input('wal');
    expect(search.state.status).toBe('waiting');
    expect(clock.pending()).toBe(1);
    clock.fire();
    expect(api.calls.map((c) => c.query)).toEqual(['wal']);
    expect(search.state.status).toBe('searching');
    api.calls[0]?.resolve({ query: 'wal', results: [hit()] });
    await settle();
    expect(search.state).toMatchObject({ status: 'done', results: [hit()], error: null });
  });

  it('drops the answer to an older query that arrives after a newer one', async () => {
    const clock = manualSchedule();
    const api = manualFetch();
    const search = new SessionSearch(api.fetcher, String, clock.schedule);
    search.input('old');
    clock.fire();
    search.input('new');
    clock.fire();
    api.calls[1]?.resolve({ query: 'new', results: [hit({ snippet: 'new' })] });
    await settle();
    api.calls[0]?.resolve({ query: 'old', results: [hit({ snippet: 'old' })] });
    await settle();
    expect(search.state.results.map((h) => h.snippet)).toEqual(['new']);
  });

  it('shows nothing and searches nothing for an empty or blank box, and caps the length', async () => {
    const clock = manualSchedule();
    const api = manualFetch();
    const search = new SessionSearch(api.fetcher, String, clock.schedule);
    search.input('walrus');
    clock.fire();
    search.input('   ');
    expect(search.active).toBe(false);
    expect(clock.pending()).toBe(0);
    expect(search.state).toMatchObject({ status: 'idle', results: [] });
    api.calls[0]?.resolve({ query: 'walrus', results: [hit()] });
    await settle();
    expect(search.state.results).toEqual([]);
    search.input('x'.repeat(600));
    expect(search.state.query).toHaveLength(500);
  });

  it('says why a search failed, and forgets the failure on the next one', async () => {
    const clock = manualSchedule();
    const api = manualFetch();
    const search = new SessionSearch(api.fetcher, (e) => (e as Error).message, clock.schedule);
    search.input('a');
    clock.fire();
    api.calls[0]?.reject(new Error('The Navi server cannot be reached.'));
    await settle();
    expect(search.state).toMatchObject({ status: 'error', error: 'The Navi server cannot be reached.' });
    search.input('ab');
    clock.fire();
    api.calls[1]?.resolve({ query: 'ab', results: [] });
    await settle();
    expect(search.state).toMatchObject({ status: 'done', error: null });
  });

  it('starts nothing after it is disposed', () => {
    const clock = manualSchedule();
    const api = manualFetch();
    const search = new SessionSearch(api.fetcher, String, clock.schedule);
    search.input('a');
    search.dispose();
    expect(clock.pending()).toBe(0);
    expect(api.calls).toEqual([]);
  });
});
