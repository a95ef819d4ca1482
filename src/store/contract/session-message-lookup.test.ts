/** One display message by id, and whether the context still holds a message: the reads of a rewind's checks. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenedStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { StoredMessage } from '../types.js';

const msg = (id: string, extra: Partial<StoredMessage> = {}): StoredMessage => ({
  id,
  role: 'user',
  content: `text ${id}`,
  created_at: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe.each(storeEngines())('message lookup on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
    await stores.sessions.create({ id: 's', profile_id: 'p' });
    await stores.sessions.create({ id: 't', profile_id: 'p' });
  });

  afterEach(async () => {
    await t.dispose();
  });

  describe('SessionStore.getMessage', () => {
    it('answers the display message with its typed fields, and nothing for another session or buffer', async () => {
      const form = msg('form', {
        kind: 'form_submit',
        trigger: 'form',
        form_submit: { form_id: 'f', values: { a: 1 } },
      });
      await stores.sessions.append('s', [
        { message: msg('both'), display: true, context: true },
        { message: form, display: true, context: true },
        {
          message: msg('hidden', { kind: 'injected_image', images: ['aGk='] }),
          display: false,
          context: true,
        },
      ]);
      await stores.sessions.append('t', [{ message: msg('theirs'), display: true, context: true }]);
      expect(await stores.sessions.getMessage('s', 'form')).toEqual(form);
      expect(await stores.sessions.getMessage('s', 'both')).toEqual(msg('both'));
      expect(await stores.sessions.getMessage('s', 'hidden')).toBeUndefined();
      expect(await stores.sessions.getMessage('s', 'theirs')).toBeUndefined();
      expect(await stores.sessions.getMessage('missing', 'both')).toBeUndefined();
      expect(await stores.sessions.getMessage('s', `'; DROP TABLE messages; --`)).toBeUndefined();
      expect(await stores.sessions.getMessage('s', 'both')).toEqual(msg('both'));
    });
  });

  describe('SessionStore.isInContext', () => {
    it('follows compression and rewinds, and never answers for another session', async () => {
      await stores.sessions.append('s', [
        { message: msg('m1'), display: true, context: true },
        { message: msg('m2'), display: true, context: true },
        { message: msg('err', { role: 'system', kind: 'error' }), display: true, context: false },
        { message: msg('m3'), display: true, context: true },
      ]);
      expect(await stores.sessions.isInContext('s', 'm1')).toBe(true);
      expect(await stores.sessions.isInContext('s', 'err')).toBe(false);
      expect(await stores.sessions.isInContext('t', 'm1')).toBe(false);
      await stores.sessions.replaceContextPrefix('s', 'm2', msg('sum', { kind: 'summary' }));
      expect(await stores.sessions.isInContext('s', 'm1')).toBe(false);
      expect(await stores.sessions.isInContext('s', 'sum')).toBe(true);
      expect(await stores.sessions.isInContext('s', 'm2')).toBe(true);
      await stores.sessions.rewind('s', 'm2', { keepAnchor: true });
      expect(await stores.sessions.isInContext('s', 'm3')).toBe(false);
      expect(await stores.sessions.isInContext('s', 'm2')).toBe(true);
    });
  });
});
