/** An append that also changes the session row: one transaction for a turn's write and its figures. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenedStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { StoredMessage } from '../types.js';

const msg = (id: string): StoredMessage => ({
  id,
  role: 'user',
  content: `text ${id}`,
  created_at: '2026-01-01T00:00:00.000Z',
});

describe.each(storeEngines())('append with a session patch on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
    await stores.sessions.create({ id: 's', profile_id: 'p', created_at: '2026-01-01T00:00:00.000Z' });
  });

  afterEach(async () => {
    await t.dispose();
  });

  describe('SessionStore.append with a session patch', () => {
    it('appends and changes only what the patch names', async () => {
      await stores.sessions.update('s', { title: 'Kept', pinned: true });
      await stores.sessions.append('s', [{ message: msg('m1'), display: true, context: true }], {
        last_active: '2026-02-02T00:00:00.000Z',
        context_token_count: 1234,
      });
      expect(await stores.sessions.getMessages('s')).toEqual([msg('m1')]);
      expect(await stores.sessions.get('s')).toMatchObject({
        title: 'Kept',
        pinned: true,
        last_active: '2026-02-02T00:00:00.000Z',
        context_token_count: 1234,
        profile_id: 'p',
      });
    });

    it('changes nothing when the append fails: the patch goes with the messages or not at all', async () => {
      await stores.sessions.append('s', [{ message: msg('m1'), display: true, context: true }]);
      const before = await stores.sessions.get('s');
      await expect(
        stores.sessions.append(
          's',
          [
            { message: msg('m2'), display: true, context: true },
            { message: msg('m1'), display: true, context: true },
          ],
          { title: 'Never', context_token_count: 99 },
        ),
      ).rejects.toThrow(/already in session s/);
      expect(await stores.sessions.get('s')).toEqual(before);
      expect((await stores.sessions.getMessages('s')).map((m) => m.id)).toEqual(['m1']);
    });

    it('refuses an unknown session with a message naming it, writing nothing', async () => {
      await expect(
        stores.sessions.append('ghost', [{ message: msg('m1'), display: true, context: true }], {
          title: 'x',
        }),
      ).rejects.toThrow('Session ghost does not exist');
    });

    it('takes a patch with no messages as an update', async () => {
      await stores.sessions.append('s', [], { title: 'Only the row' });
      expect((await stores.sessions.get('s'))?.title).toBe('Only the row');
    });
  });
});
