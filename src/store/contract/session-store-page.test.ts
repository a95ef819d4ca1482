/**
 * `SessionStore.getMessagePage`: paged history of the display buffer (docs/protocol.md#paged-history).
 * A client walks back from the newest page by each answer's `next_before` until it is null, and
 * must see every display message exactly once, in order, whatever else happens meanwhile.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessagePage } from '../../protocol/rest.js';
import { SecretMasker } from '../../util/secret-masker.js';
import { maskingSessionStore } from '../masking-store.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../types.js';

function msg(id: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  return { id, role: 'user', content: `text ${id}`, created_at: '2026-01-01T00:00:00.000Z', ...extra };
}

const both = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });
const displayOnly = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: false });
const contextOnly = (m: StoredMessage): BufferedMessage => ({ message: m, display: false, context: true });
const ids = (list: StoredMessage[]) => list.map((m) => m.id);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m${from + i}`);

describe.each(storeEngines())('paged history on $name', ({ open }) => {
  let t: TestStores;
  let sessions: SessionStore;

  beforeEach(async () => {
    t = await open();
    sessions = t.stores.sessions;
    await sessions.create({ id: 's', profile_id: 'p' });
    await sessions.create({ id: 'other', profile_id: 'p' });
  });

  afterEach(async () => {
    await t.dispose();
  });

  async function appendMany(sessionId: string, count: number, from = 0): Promise<void> {
    const entries: BufferedMessage[] = [];
    for (let i = from; i < from + count; i++) entries.push(both(msg(`m${i}`)));
    await sessions.append(sessionId, entries);
  }

  async function page(limit: number, before?: string, sessionId = 's'): Promise<MessagePage | undefined> {
    return sessions.getMessagePage(sessionId, before === undefined ? { limit } : { limit, before });
  }

  /** Every page from the newest back to the start, as a client walks them. */
  async function walk(limit: number, sessionId = 's'): Promise<MessagePage[]> {
    const pages: MessagePage[] = [];
    let before: string | undefined;
    do {
      const next = await page(limit, before, sessionId);
      if (next === undefined) throw new Error(`page before ${before} vanished`);
      pages.push(next);
      before = next.next_before ?? undefined;
      if (pages.length > 10_000) throw new Error('paging does not end');
    } while (before !== undefined);
    return pages;
  }

  describe('the newest page', () => {
    it('holds the newest `limit` messages oldest first, with the first of them as the cursor', async () => {
      await appendMany('s', 10);
      const newest = await page(3);
      expect(ids(newest!.messages)).toEqual(['m7', 'm8', 'm9']);
      expect(newest!.next_before).toBe('m7');
    });

    it('of an empty session, or one that does not exist, is empty and has no older page', async () => {
      expect(await page(100)).toEqual({ messages: [], next_before: null });
      expect(await page(100, undefined, 'no-such-session')).toEqual({ messages: [], next_before: null });
    });

    it('with a limit larger than the session holds all of it and no cursor', async () => {
      await appendMany('s', 5);
      expect(await page(1000)).toEqual({ messages: await sessions.getMessages('s'), next_before: null });
    });

    it('with a limit of exactly the session length has no cursor; one less has one', async () => {
      await appendMany('s', 5);
      expect((await page(5))!.next_before).toBeNull();
      expect(ids((await page(5))!.messages)).toEqual(range(0, 5));
      expect((await page(4))!.next_before).toBe('m1');
    });

    it('gives back every field of a message as getMessages does', async () => {
      const full = msg('full', {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', name: 'web_search', arguments: { query: 'x', deep: { a: [1, null] } } }],
        thinking: 'hmm',
        interrupted: true,
        stopped: true,
        images: ['aGVsbG8='],
        tool_metadata: { exit_code: 1 },
        created_at: '2026-01-01T00:00:01.000Z',
      });
      await sessions.append('s', [both(msg('before')), both(full)]);
      expect((await page(1))!.messages).toEqual([full]);
      expect((await page(2))!.messages).toEqual(await sessions.getMessages('s'));
    });
  });

  describe('paging back', () => {
    it('reaches the start, and next_before is null exactly on the page holding the first message', async () => {
      await appendMany('s', 10);
      const pages = await walk(3);
      expect(pages.map((p) => ids(p.messages))).toEqual([
        ['m7', 'm8', 'm9'],
        ['m4', 'm5', 'm6'],
        ['m1', 'm2', 'm3'],
        ['m0'],
      ]);
      expect(pages.map((p) => p.next_before)).toEqual(['m7', 'm4', 'm1', null]);
    });

    it('when the length is a multiple of the limit, ends on a full page rather than an empty one', async () => {
      await appendMany('s', 9);
      const pages = await walk(3);
      expect(pages.map((p) => p.messages.length)).toEqual([3, 3, 3]);
      expect(pages.at(-1)!.next_before).toBeNull();
    });

    it('concatenates to exactly getMessages for every limit, from 1 past the session length', async () => {
      await appendMany('s', 23);
      const all = await sessions.getMessages('s');
      for (let limit = 1; limit <= 25; limit++) {
        const pages = await walk(limit);
        expect(
          pages.reverse().flatMap((p) => p.messages),
          `limit ${limit}`,
        ).toEqual(all);
        expect(pages.length, `limit ${limit}`).toBe(Math.max(1, Math.ceil(23 / limit)));
      }
    });

    it('from any display message answers those just before it', async () => {
      await appendMany('s', 10);
      expect(ids((await page(2, 'm5'))!.messages)).toEqual(['m3', 'm4']);
      expect((await page(2, 'm5'))!.next_before).toBe('m3');
      expect(ids((await page(100, 'm5'))!.messages)).toEqual(range(0, 5));
      expect((await page(100, 'm5'))!.next_before).toBeNull();
    });

    it('before the first message is an empty page with no cursor, not an unknown one', async () => {
      await appendMany('s', 3);
      expect(await page(10, 'm0')).toEqual({ messages: [], next_before: null });
    });

    it('pages only the display buffer: display-only messages are in it, context-only ones are not', async () => {
      await sessions.append('s', [
        both(msg('u1')),
        contextOnly(msg('injected', { kind: 'injected_image' })),
        displayOnly(msg('failed', { role: 'system', kind: 'error', error: { message: 'down' } })),
        both(msg('u2')),
        contextOnly(msg('form-values')),
        both(msg('a2', { role: 'assistant' })),
      ]);
      const pages = await walk(2);
      expect(pages.map((p) => ids(p.messages))).toEqual([
        ['u2', 'a2'],
        ['u1', 'failed'],
      ]);
      // A context-only message is no cursor of the display buffer.
      expect(await page(2, 'injected')).toBeUndefined();
      expect(await page(2, 'form-values')).toBeUndefined();
    });

    it('answers undefined for a cursor the session never held, or one of another session', async () => {
      await appendMany('s', 5);
      await sessions.append('other', [both(msg('theirs'))]);
      expect(await page(2, 'ghost')).toBeUndefined();
      expect(await page(2, 'theirs')).toBeUndefined();
      expect(await page(2, 'm3', 'other')).toBeUndefined();
      // The same cursor in a session that does hold it still works.
      expect(ids((await page(2, 'theirs', 'other'))!.messages)).toEqual([]);
    });

    it('answers undefined for a cursor that rewind removed, and pages the rest as it is now', async () => {
      await appendMany('s', 10);
      const newest = await page(3);
      expect(newest!.next_before).toBe('m7');
      const rewound = await sessions.rewind('s', 'm6', { keepAnchor: false });
      expect(rewound).toEqual({ ok: true, removedIds: range(6, 10) });
      expect(await page(3, 'm7')).toBeUndefined();
      expect(await page(3, 'm6')).toBeUndefined();
      expect(ids((await page(3))!.messages)).toEqual(['m3', 'm4', 'm5']);
      expect(ids((await page(3, 'm3'))!.messages)).toEqual(['m0', 'm1', 'm2']);
    });

    it('is not moved by compression, which rewrites only the context buffer', async () => {
      await appendMany('s', 12);
      const before = await walk(5);
      await sessions.replaceContextPrefix('s', 'm8', msg('summary', { kind: 'summary', role: 'system' }));
      expect(ids(await sessions.getContext('s'))).toEqual(['summary', 'm8', 'm9', 'm10', 'm11']);
      expect(await walk(5)).toEqual(before);
      // A cursor summarised out of the context is still a display message.
      expect(ids((await page(2, 'm2'))!.messages)).toEqual(['m0', 'm1']);
      await sessions.replaceContextPrefix('s', null, msg('summary2', { kind: 'summary', role: 'system' }));
      expect(await walk(5)).toEqual(before);
    });

    it('never shows messages appended while paging back, and skips or repeats none', async () => {
      await appendMany('s', 20);
      const first = await page(6);
      await appendMany('s', 7, 20);
      const rest: StoredMessage[] = [];
      let before = first!.next_before;
      while (before !== null) {
        const older = await page(6, before);
        rest.unshift(...older!.messages);
        before = older!.next_before;
        // A turn streams in between two pages.
        await appendMany('s', 1, 100 + rest.length);
      }
      expect(ids([...rest, ...first!.messages])).toEqual(range(0, 20));
      // The newest page now starts at what arrived.
      expect(ids((await page(1))!.messages)).toEqual([`m${100 + 14}`]);
    });

    it('sees a streamed update of a message on the page that holds it', async () => {
      await appendMany('s', 4);
      await sessions.updateMessage('s', 'm1', { content: 'streamed', thinking: 'mm' });
      const older = await page(2, 'm2');
      expect(older!.messages[1]).toMatchObject({ id: 'm1', content: 'streamed', thinking: 'mm' });
    });

    it('keeps two sessions apart', async () => {
      await appendMany('s', 4);
      await sessions.append('other', [both(msg('o1')), both(msg('o2'))]);
      expect(ids((await page(10))!.messages)).toEqual(range(0, 4));
      expect(ids((await page(10, undefined, 'other'))!.messages)).toEqual(['o1', 'o2']);
    });

    it('takes a hostile cursor as data, not as SQL', async () => {
      await appendMany('s', 3);
      const hostile = "m2' OR '1'='1";
      expect(await page(2, hostile)).toBeUndefined();
      await sessions.append('s', [both(msg(hostile))]);
      expect(ids((await page(2, hostile))!.messages)).toEqual(['m1', 'm2']);
      expect(ids(await sessions.getMessages('s'))).toEqual([...range(0, 3), hostile]);
    });

    it('passes through the masking store unchanged', async () => {
      const masked = maskingSessionStore(
        sessions,
        new SecretMasker([{ name: 'K', value: 'secret-value-1234' }]),
      );
      await masked.append('s', [both(msg('m0', { content: 'key secret-value-1234' })), both(msg('m1'))]);
      const newest = await masked.getMessagePage('s', { limit: 1 });
      expect(ids(newest!.messages)).toEqual(['m1']);
      const older = await masked.getMessagePage('s', { limit: 1, before: newest!.next_before! });
      expect(older!.messages[0]!.content).not.toContain('secret-value-1234');
      expect(older!.next_before).toBeNull();
    });
  });
});
