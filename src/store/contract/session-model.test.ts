/**
 * The session's model override: set, kept by other patches, cleared, listed, kept across a
 * reopen of the database, and passed through by the masking store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretMasker } from '../../util/secret-masker.js';
import { maskingSessionStore } from '../masking-store.js';
import { type OpenedStores, openStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import { execute } from './raw-sql.js';

describe.each(storeEngines())('the session model override on $name', ({ name: engine, open }) => {
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

  describe('the session model override', () => {
    it('is absent on a new session, and set, kept and cleared by patches', async () => {
      const created = await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
      expect(created).not.toHaveProperty('model_override');
      const set = await stores.sessions.update('a', {
        model_override: { backend: 'openai', model: 'gpt-x' },
      });
      expect(set?.model_override).toEqual({ backend: 'openai', model: 'gpt-x' });
      // A patch that does not name it leaves it alone.
      const renamed = await stores.sessions.update('a', { title: 'Renamed', context_token_count: 12 });
      expect(renamed).toMatchObject({
        title: 'Renamed',
        model_override: { backend: 'openai', model: 'gpt-x' },
      });
      const cleared = await stores.sessions.update('a', { model_override: null });
      expect(cleared).not.toHaveProperty('model_override');
      expect(cleared?.title).toBe('Renamed');
    });

    it('is carried by list and get, and survives a reopen of the database', async () => {
      await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
      await stores.sessions.create({ id: 'b', profile_id: 'secretary' });
      await stores.sessions.update('b', { model_override: { backend: 'ollama', model: 'qwen3:4b' } });
      stores = await reopen();
      const list = await stores.sessions.list();
      expect(list.find((s) => s.id === 'b')?.model_override).toEqual({
        backend: 'ollama',
        model: 'qwen3:4b',
      });
      expect(list.find((s) => s.id === 'a')).not.toHaveProperty('model_override');
      expect((await stores.sessions.get('b'))?.model_override?.model).toBe('qwen3:4b');
    });

    it('passes through the masking store', async () => {
      const masked = maskingSessionStore(
        stores.sessions,
        new SecretMasker([{ name: 'K', value: 'a-secret-value' }]),
      );
      await masked.create({ id: 'a', profile_id: 'secretary' });
      const set = await masked.update('a', { model_override: { backend: 'openai', model: 'm' } });
      expect(set?.model_override).toEqual({ backend: 'openai', model: 'm' });
      expect((await masked.list())[0]?.model_override).toEqual({ backend: 'openai', model: 'm' });
    });

    it('refuses a value that is not JSON at the database level', async () => {
      await stores.sessions.create({ id: 'x', profile_id: 'p' });
      await expect(
        execute(stores, "UPDATE sessions SET model_override = 'not json' WHERE id = 'x'"),
      ).rejects.toThrow(
        engine === 'sqlite' ? /CHECK constraint failed/ : /invalid input syntax for type json/,
      );
    });
  });
});
