/** Per-session key-value state and the records of session files. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OpenedStores, openStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { SessionFileRecord } from '../types.js';

describe.each(storeEngines())('kv and file records on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;
  const reopened: OpenedStores[] = [];

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
  });

  afterEach(async () => {
    for (const s of reopened.splice(0)) await s.close();
    await t.dispose();
  });

  /** Closes the stores and opens the same database again, as a restart does. */
  async function reopen(): Promise<OpenedStores> {
    await stores.close();
    const again = await openStores(t.settings);
    reopened.push(again);
    return again;
  }

  describe('KvStore', () => {
    it('stores JSON values per session and key, without needing a session row', async () => {
      const { kv } = stores;
      expect(await kv.get('subagent_1', 'todo')).toBeUndefined();
      await kv.set('subagent_1', 'todo', [{ task: 'a', done: false }]);
      await kv.set('subagent_1', 'scratchpad', 'text');
      await kv.set('other', 'todo', 0);
      expect(await kv.get('subagent_1', 'todo')).toEqual([{ task: 'a', done: false }]);
      expect(await kv.get<string>('subagent_1', 'scratchpad')).toBe('text');
      expect(await kv.get('other', 'todo')).toBe(0);
      await kv.set('subagent_1', 'todo', null);
      expect(await kv.get('subagent_1', 'todo')).toBeNull();
    });

    it('overwrites, deletes, clears one session only, and survives a reopen', async () => {
      const { kv } = stores;
      await kv.set('s', 'a', { v: 1 });
      await kv.set('s', 'a', { v: 2 });
      await kv.set('s', 'b', true);
      await kv.set('t', 'a', 'keep');
      expect(await kv.delete('s', 'b')).toBe(true);
      expect(await kv.delete('s', 'b')).toBe(false);
      stores = await reopen();
      expect(await stores.kv.get('s', 'a')).toEqual({ v: 2 });
      await stores.kv.clear('s');
      expect(await stores.kv.get('s', 'a')).toBeUndefined();
      expect(await stores.kv.get('t', 'a')).toBe('keep');
    });

    it('treats setting undefined as removal and refuses values JSON cannot hold', async () => {
      await stores.kv.set('s', 'a', 1);
      await stores.kv.set('s', 'a', undefined);
      expect(await stores.kv.get('s', 'a')).toBeUndefined();
      await expect(stores.kv.set('s', 'a', 1n)).rejects.toThrow();
    });
  });

  function record(name: string, expires: string, sessionId = 's'): SessionFileRecord {
    return {
      session_id: sessionId,
      name,
      path: `/data/${sessionId}/${name}`,
      size: 42,
      mime_type: 'image/png',
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: expires,
    };
  }

  describe('FileStore', () => {
    it('adds, gets, lists, replaces and removes records', async () => {
      const { files } = stores;
      const a = record('a.png', '2026-01-02T00:00:00.000Z');
      await files.add(a);
      await files.add({
        ...record('b.png', '2026-01-03T00:00:00.000Z'),
        created_at: '2026-01-01T01:00:00.000Z',
      });
      await files.add(record('c.png', '2026-01-03T00:00:00.000Z', 'other'));
      expect(await files.get('s', 'a.png')).toEqual(a);
      expect(await files.get('s', 'nope')).toBeUndefined();
      expect((await files.list('s')).map((r) => r.name)).toEqual(['a.png', 'b.png']);
      await files.add({ ...a, size: 7 });
      expect((await files.get('s', 'a.png'))?.size).toBe(7);
      expect(await files.remove('s', 'a.png')).toBe(true);
      expect(await files.remove('s', 'a.png')).toBe(false);
      expect((await files.list('s')).map((r) => r.name)).toEqual(['b.png']);
      expect(await files.list('nobody')).toEqual([]);
    });

    it('finds records expiring at or before now, comparing times rather than spellings', async () => {
      const { files } = stores;
      await files.add(record('past.txt', '2026-01-01T00:00:00.000Z'));
      await files.add(record('exact.txt', '2026-01-02T00:00:00.000Z'));
      // Same instant as exact.txt's neighbour, written without milliseconds and with an offset.
      await files.add(record('offset.txt', '2026-01-02T01:00:00+01:00', 'other'));
      await files.add(record('future.txt', '2026-01-02T00:00:00.001Z'));
      const now = new Date('2026-01-02T00:00:00.000Z');
      const expired = await files.expired(now);
      expect(expired.map((r) => r.name).sort()).toEqual(['exact.txt', 'offset.txt', 'past.txt']);
      expect(expired.find((r) => r.name === 'offset.txt')?.expires_at).toBe('2026-01-02T00:00:00.000Z');
      expect(await files.expired(new Date('2025-12-31T00:00:00.000Z'))).toEqual([]);
    });

    it('refuses a record whose times are not dates', async () => {
      await expect(stores.files.add(record('x', 'tomorrow-ish'))).rejects.toThrow(/expires_at/);
    });
  });
});
