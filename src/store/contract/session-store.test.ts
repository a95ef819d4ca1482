import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenedStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { BufferedMessage, StoredMessage } from '../types.js';
import { scalar } from './raw-sql.js';

function msg(id: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  return { id, role: 'user', content: `text ${id}`, created_at: '2026-01-01T00:00:00.000Z', ...extra };
}

const both = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });
const ids = (list: StoredMessage[]) => list.map((m) => m.id);

describe.each(storeEngines())('sessions on $name', ({ name: engine, open }) => {
  let t: TestStores;
  let stores: OpenedStores;

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
  });

  afterEach(async () => {
    await t.dispose();
  });

  describe('sessions', () => {
    it('creates with defaults, gets, and answers undefined for unknown ids', async () => {
      const s = await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
      expect(s).toMatchObject({
        id: 'a',
        profile_id: 'secretary',
        title: '',
        pinned: false,
        context_token_count: 0,
      });
      expect(s.last_active).toBe(s.created_at);
      expect(Number.isNaN(Date.parse(s.created_at))).toBe(false);
      expect(await stores.sessions.get('a')).toEqual(s);
      expect(await stores.sessions.get('nope')).toBeUndefined();
    });

    it('keeps a given title and created_at, and refuses a duplicate id', async () => {
      const s = await stores.sessions.create({
        id: 'a',
        profile_id: 'p',
        title: 'Hi',
        created_at: '2026-02-03T04:05:06.000Z',
      });
      expect(s).toMatchObject({
        title: 'Hi',
        created_at: '2026-02-03T04:05:06.000Z',
        last_active: '2026-02-03T04:05:06.000Z',
      });
      await expect(stores.sessions.create({ id: 'a', profile_id: 'p' })).rejects.toThrow();
    });

    it('lists pinned first, then by last_active descending', async () => {
      await stores.sessions.create({ id: 'old', profile_id: 'p', created_at: '2026-01-01T00:00:00.000Z' });
      await stores.sessions.create({ id: 'new', profile_id: 'p', created_at: '2026-01-03T00:00:00.000Z' });
      await stores.sessions.create({ id: 'mid', profile_id: 'p', created_at: '2026-01-02T00:00:00.000Z' });
      await stores.sessions.create({
        id: 'pinned-old',
        profile_id: 'p',
        created_at: '2025-01-01T00:00:00.000Z',
      });
      await stores.sessions.update('pinned-old', { pinned: true });
      expect((await stores.sessions.list()).map((s) => s.id)).toEqual(['pinned-old', 'new', 'mid', 'old']);
      await stores.sessions.update('old', { last_active: '2026-05-01T00:00:00.000Z' });
      expect((await stores.sessions.list()).map((s) => s.id)).toEqual(['pinned-old', 'old', 'new', 'mid']);
    });

    it('update patches only the given fields and answers undefined for unknown ids', async () => {
      const created = await stores.sessions.create({ id: 'a', profile_id: 'p', title: 'T' });
      const pinned = await stores.sessions.update('a', { pinned: true });
      expect(pinned).toEqual({ ...created, pinned: true });
      const more = await stores.sessions.update('a', {
        title: 'Renamed',
        profile_id: 'q',
        context_token_count: 1234,
        last_active: '2026-09-09T00:00:00.000Z',
      });
      expect(more).toEqual({
        ...created,
        pinned: true,
        title: 'Renamed',
        profile_id: 'q',
        context_token_count: 1234,
        last_active: '2026-09-09T00:00:00.000Z',
      });
      expect(await stores.sessions.update('a', {})).toEqual(more);
      expect(await stores.sessions.update('a', { pinned: false, title: '' })).toMatchObject({
        pinned: false,
        title: '',
      });
      expect(await stores.sessions.update('nope', { title: 'x' })).toBeUndefined();
    });

    it('delete removes the session, both buffers, its kv rows and file records, and nothing of others', async () => {
      await stores.sessions.create({ id: 'a', profile_id: 'p' });
      await stores.sessions.create({ id: 'b', profile_id: 'p' });
      for (const id of ['a', 'b']) {
        await stores.sessions.append(id, [
          both(msg(`${id}1`)),
          { message: msg(`${id}2`), display: false, context: true },
        ]);
        await stores.kv.set(id, 'scratchpad', { notes: id });
        await stores.files.add({
          session_id: id,
          name: 'f.txt',
          path: `/tmp/${id}/f.txt`,
          size: 1,
          mime_type: 'text/plain',
          created_at: '2026-01-01T00:00:00.000Z',
          expires_at: '2026-01-02T00:00:00.000Z',
        });
      }
      expect(await stores.sessions.delete('a')).toBe(true);
      expect(await stores.sessions.get('a')).toBeUndefined();
      expect(await stores.sessions.getMessages('a')).toEqual([]);
      expect(await stores.sessions.getContext('a')).toEqual([]);
      expect(await stores.kv.get('a', 'scratchpad')).toBeUndefined();
      expect(await stores.files.list('a')).toEqual([]);
      for (const table of ['messages', 'context_messages', 'session_kv', 'session_files'])
        expect(await scalar(stores, `SELECT count(*) FROM ${table} WHERE session_id = 'a'`), table).toBe(0);

      expect(ids(await stores.sessions.getMessages('b'))).toEqual(['b1']);
      expect(ids(await stores.sessions.getContext('b'))).toEqual(['b1', 'b2']);
      expect(await stores.kv.get('b', 'scratchpad')).toEqual({ notes: 'b' });
      expect(await stores.files.list('b')).toHaveLength(1);
      expect(await stores.sessions.delete('a')).toBe(false);
    });

    it('delete of an id that is not a session still clears its kv state (subagent ids)', async () => {
      await stores.kv.set('subagent_123', 'todo', [1]);
      expect(await stores.sessions.delete('subagent_123')).toBe(false);
      expect(await stores.kv.get('subagent_123', 'todo')).toBeUndefined();
    });
  });

  describe('buffers', () => {
    beforeEach(async () => {
      await stores.sessions.create({ id: 's', profile_id: 'p' });
    });

    it('round-trips every message field exactly and omits absent ones', async () => {
      const full: StoredMessage = {
        id: 'm1',
        role: 'assistant',
        content: null,
        images: ['aGVsbG8='],
        tool_calls: [
          { id: 'c1', name: 'web_search', arguments: { query: 'x', n: 3, deep: { a: [1, null] } } },
        ],
        tool_call_id: 'c0',
        name: 'tool-name',
        kind: 'form_submit',
        attachments: [{ name: 'a.txt', path: '/files/a.txt' }],
        trigger: 'form',
        form_submit: { form_id: 'f', values: { city: 'Oslo' } },
        thinking: 'hmm',
        interrupted: true,
        stopped: true,
        success: false,
        ui_component: { component: 'form', payload: { form_id: 'f' } },
        published: { name: 'n.md', url: '/x', kind: 'markdown', mime_type: 'text/markdown', title: 'N' },
        tool_metadata: { exit_code: 1 },
        created_at: '2026-01-01T00:00:01.000Z',
      };
      const plain = msg('m2');
      await stores.sessions.append('s', [both(full), both(plain)]);
      for (const list of [await stores.sessions.getMessages('s'), await stores.sessions.getContext('s')]) {
        expect(list).toEqual([full, plain]);
        expect(Object.keys(list[1]!).sort()).toEqual(['content', 'created_at', 'id', 'role']);
      }
    });

    it('keeps display-only, context-only and shared messages apart, in order', async () => {
      await stores.sessions.append('s', [
        both(msg('1')),
        { message: msg('form'), display: false, context: true },
        { message: msg('card'), display: true, context: false },
      ]);
      await stores.sessions.append('s', [
        both(msg('2')),
        { message: msg('image'), display: false, context: true },
      ]);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['1', 'card', '2']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['1', 'form', '2', 'image']);
    });

    it('answers empty buffers for unknown sessions, and append to one fails clearly', async () => {
      expect(await stores.sessions.getMessages('nope')).toEqual([]);
      expect(await stores.sessions.getContext('nope')).toEqual([]);
      await expect(stores.sessions.append('nope', [both(msg('1'))])).rejects.toThrow(
        /Session nope does not exist/,
      );
      await expect(stores.sessions.append('nope', [])).resolves.toBeUndefined();
    });

    it('append is all or nothing', async () => {
      await stores.sessions.append('s', [both(msg('1'))]);
      await expect(stores.sessions.append('s', [both(msg('2')), both(msg('1'))])).rejects.toThrow(
        /already in session s/,
      );
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['1']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['1']);
    });

    it('updateMessage patches content, thinking and the marks in every buffer holding the message', async () => {
      const m = msg('a', {
        role: 'assistant',
        content: '',
        images: ['x'],
        interrupted: true,
      });
      await stores.sessions.append('s', [both(m), { message: msg('ctx'), display: false, context: true }]);
      await stores.sessions.updateMessage('s', 'a', { content: 'partial' });
      await stores.sessions.updateMessage('s', 'a', { thinking: 'reasoning' });
      let expected: StoredMessage = { ...m, content: 'partial', thinking: 'reasoning' };
      expect((await stores.sessions.getMessages('s'))[0]).toEqual(expected);
      expect((await stores.sessions.getContext('s'))[0]).toEqual(expected);

      // A mark set to false goes away; the other fields stay.
      await stores.sessions.updateMessage('s', 'a', {
        content: 'final',
        thinking: 'more',
        interrupted: false,
        stopped: false,
      });
      const { interrupted: _gone, ...finished } = m;
      expected = { ...finished, content: 'final', thinking: 'more' };
      expect((await stores.sessions.getMessages('s'))[0]).toEqual(expected);
      expect((await stores.sessions.getContext('s'))[0]).toEqual(expected);
      await stores.sessions.updateMessage('s', 'a', { content: null });
      expect((await stores.sessions.getMessages('s'))[0]?.content).toBeNull();

      // Only in one buffer: updated there, and the other message is untouched.
      await stores.sessions.updateMessage('s', 'ctx', { interrupted: true, stopped: true });
      expect((await stores.sessions.getContext('s'))[1]).toEqual({
        ...msg('ctx'),
        interrupted: true,
        stopped: true,
      });
      // Removing the only payload keys leaves a message without any: no empty payload shows.
      await stores.sessions.updateMessage('s', 'ctx', { interrupted: false, stopped: false });
      expect(Object.keys((await stores.sessions.getContext('s'))[1]!).sort()).toEqual([
        'content',
        'created_at',
        'id',
        'role',
      ]);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['a']);
    });

    it('updateMessage fails for an unknown message or session', async () => {
      await expect(stores.sessions.updateMessage('s', 'nope', { content: 'x' })).rejects.toThrow(/nope/);
      await expect(stores.sessions.updateMessage('nope', 'a', { content: 'x' })).rejects.toThrow(/nope/);
    });
  });

  describe('replaceContextPrefix', () => {
    const summary = msg('sum', { role: 'system', content: 'summary', kind: 'summary' });

    beforeEach(async () => {
      await stores.sessions.create({ id: 's', profile_id: 'p' });
      await stores.sessions.append(
        's',
        ['1', '2', '3', '4', '5'].map((id) => both(msg(id))),
      );
    });

    it('drops older context rows, puts the summary first, and leaves the display buffer alone', async () => {
      await stores.sessions.replaceContextPrefix('s', '4', summary);
      expect(await stores.sessions.getContext('s')).toEqual([summary, msg('4'), msg('5')]);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['1', '2', '3', '4', '5']);
      // Appending after compression lands after the kept rows.
      await stores.sessions.append('s', [both(msg('6'))]);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum', '4', '5', '6']);
    });

    it('compresses again, replacing the previous summary', async () => {
      await stores.sessions.replaceContextPrefix('s', '3', summary);
      await stores.sessions.replaceContextPrefix('s', '5', { ...summary, id: 'sum2' });
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum2', '5']);
      // Keeping the old summary itself puts the new one before it.
      await stores.sessions.replaceContextPrefix('s', 'sum2', { ...summary, id: 'sum3' });
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum3', 'sum2', '5']);
    });

    it('with null replaces the whole context', async () => {
      await stores.sessions.replaceContextPrefix('s', null, summary);
      expect(await stores.sessions.getContext('s')).toEqual([summary]);
      await stores.sessions.append('s', [both(msg('6'))]);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum', '6']);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['1', '2', '3', '4', '5', '6']);
    });

    it('with an id not in the context changes nothing and says so', async () => {
      await expect(stores.sessions.replaceContextPrefix('s', 'ghost', summary)).rejects.toThrow(/ghost/);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['1', '2', '3', '4', '5']);
      await expect(stores.sessions.replaceContextPrefix('nope', null, summary)).rejects.toThrow(/nope/);
    });
  });

  describe('hostile input', () => {
    beforeEach(async () => {
      await stores.sessions.create({ id: 's', profile_id: 'p' });
    });

    // PostgreSQL cannot hold a NUL in text or JSONB; it keeps U+FFFD in its place rather than
    // refusing the turn. SQLite keeps the text exactly.
    const kept = (text: string) => (engine === 'sqlite' ? text : text.replaceAll('\u0000', '\uFFFD'));

    it('stores text holding NUL characters, in content, payload, patches, titles and summaries', async () => {
      const binary = 'head\u0000\u0000tail';
      const m = msg('bin', {
        role: 'tool',
        content: binary,
        tool_call_id: 'c\u0000',
        tool_metadata: { raw: binary },
      });
      await stores.sessions.append('s', [both(m)], { title: `title ${binary}` });
      expect((await stores.sessions.getMessages('s'))[0]).toEqual({
        ...m,
        content: kept(binary),
        tool_call_id: kept('c\u0000'),
        tool_metadata: { raw: kept(binary) },
      });
      expect((await stores.sessions.get('s'))?.title).toBe(kept(`title ${binary}`));
      await stores.sessions.updateMessage('s', 'bin', { content: `${binary}!`, thinking: binary });
      expect(await stores.sessions.getMessage('s', 'bin')).toMatchObject({
        content: kept(`${binary}!`),
        thinking: kept(binary),
      });
      await stores.sessions.replaceContextPrefix('s', null, msg('sum', { content: binary }));
      expect((await stores.sessions.getContext('s'))[0]?.content).toBe(kept(binary));
      // A backslash and "u0000" spelled out is text like any other, on both engines.
      const spelled = msg('spelled', { content: '\\u0000', thinking: 'x\\u0000' });
      await stores.sessions.append('s', [both(spelled)]);
      expect(await stores.sessions.getMessage('s', 'spelled')).toEqual(spelled);
    });

    it('answers "not there" for ids holding NUL characters, which no stored id can', async () => {
      await stores.sessions.append('s', [both(msg('m1')), both(msg('m2'))]);
      const bad = 'm1\u0000';
      expect(await stores.sessions.get(bad)).toBeUndefined();
      expect(await stores.sessions.getMessage('s', bad)).toBeUndefined();
      expect(await stores.sessions.getMessagePage('s', { limit: 5, before: bad })).toBeUndefined();
      expect(await stores.sessions.isInContext('s', bad)).toBe(false);
      expect(await stores.sessions.rewind('s', bad, { keepAnchor: true })).toEqual({
        ok: false,
        reason: 'not_found',
      });
      await expect(stores.sessions.updateMessage('s', bad, { content: 'x' })).rejects.toThrow(
        /is not in session s/,
      );
      await expect(stores.sessions.replaceContextPrefix('s', bad, msg('sum'))).rejects.toThrow(
        /not in the context of session s/,
      );
      expect(await stores.sessions.getMessages(bad)).toEqual([]);
      // The same for a session id: its pages, context and patches find nothing.
      expect(await stores.sessions.getMessagePage(bad, { limit: 5 })).toEqual({
        messages: [],
        next_before: null,
      });
      expect(await stores.sessions.getContext(bad)).toEqual([]);
      expect(await stores.sessions.getMessage(bad, 'm1')).toBeUndefined();
      expect(await stores.sessions.isInContext(bad, 'm1')).toBe(false);
      expect(await stores.sessions.update(bad, { title: 'x' })).toBeUndefined();
      expect(await stores.sessions.delete(bad)).toBe(false);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['m1', 'm2']);
    });

    it('a new session or message id holding NUL: stored on SQLite, refused by name on PostgreSQL', async () => {
      const session = stores.sessions.create({ id: 'n\u0000', profile_id: 'p' });
      const message = stores.sessions.append('s', [both(msg('m\u0000'))]);
      if (engine === 'sqlite') {
        await expect(session).resolves.toMatchObject({ id: 'n\u0000' });
        await expect(message).resolves.toBeUndefined();
      } else {
        await expect(session).rejects.toThrow(/session id cannot contain the NUL character/);
        await expect(message).rejects.toThrow(/message id cannot contain the NUL character/);
        expect(await stores.sessions.getMessages('s')).toEqual([]);
      }
    });

    it('a summary id holding NUL: stored on SQLite, refused by name on PostgreSQL, the context kept', async () => {
      await stores.sessions.append('s', [both(msg('m1')), both(msg('m2'))]);
      const replaced = stores.sessions.replaceContextPrefix('s', 'm2', msg('sum\u0000'));
      if (engine === 'sqlite') {
        await expect(replaced).resolves.toBeUndefined();
        expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum\u0000', 'm2']);
      } else {
        await expect(replaced).rejects.toThrow(/message id cannot contain the NUL character: "sum\\u0000"/);
        expect(ids(await stores.sessions.getContext('s'))).toEqual(['m1', 'm2']);
      }
    });

    it('keeps a large message whole', async () => {
      const big = 'x'.repeat(4 * 1024 * 1024);
      await stores.sessions.append('s', [both(msg('big', { content: big, thinking: big }))]);
      await stores.sessions.updateMessage('s', 'big', { content: `${big}y` });
      const got = await stores.sessions.getMessage('s', 'big');
      expect(got?.content?.length).toBe(big.length + 1);
      expect(got?.thinking).toBe(big);
    });

    it('takes quotes and SQL in every text as data', async () => {
      const hostile = `'); DROP TABLE messages; --`;
      await stores.sessions.append('s', [both(msg(hostile, { content: hostile }))], { title: hostile });
      await stores.sessions.updateMessage('s', hostile, { thinking: hostile });
      expect(await stores.sessions.getMessage('s', hostile)).toMatchObject({
        content: hostile,
        thinking: hostile,
      });
      expect((await stores.sessions.get('s'))?.title).toBe(hostile);
    });
  });
});
