/**
 * A server or role whose default isolation is stricter than READ COMMITTED (here REPEATABLE READ,
 * set through the URL as an administrator would with ALTER ROLE): every transaction of the
 * stores begins as READ COMMITTED, so two processes starting together migrate once, and their appends to
 * one session, each with a session patch, neither fail nor take each other's seq.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchema, needsPostgres } from '../test-engines.js';
import type { BufferedMessage } from '../types.js';
import { createPostgresStores, type PostgresStores } from './index.js';

const entry = (id: string): BufferedMessage => ({
  message: { id, role: 'user', content: id, created_at: '2026-01-01T00:00:00.000Z' },
  display: true,
  context: true,
});

describe.runIf(needsPostgres('isolation tests'))(
  'a server whose default isolation is REPEATABLE READ',
  () => {
    let schema: Awaited<ReturnType<typeof createTestSchema>>;
    let stores: PostgresStores[] = [];

    beforeAll(async () => {
      schema = await createTestSchema();
    });
    afterAll(async () => {
      for (const s of stores) await s.close();
      await schema?.drop();
    });

    it('migrates once from two pools at once, and appends from both without an error or a lost message', async () => {
      const url = new URL(schema.url);
      url.searchParams.set(
        'options',
        `${url.searchParams.get('options')} -c default_transaction_isolation=repeatable\\ read`,
      );
      stores = await Promise.all([1, 2].map(() => createPostgresStores(url.toString(), { max: 4 })));
      const [a, b] = stores as [PostgresStores, PostgresStores];
      await a.sessions.create({ id: 's', profile_id: 'p' });
      const ids: string[] = [];
      await Promise.all(
        [a, b, a, b].map(async (store, lane) => {
          for (let i = 0; i < 25; i++) {
            const id = `${lane}-${i}`;
            ids.push(id);
            await store.sessions.append('s', [entry(id)], { context_token_count: i });
          }
        }),
      );
      const stored = (await b.sessions.getMessages('s')).map((m) => m.id);
      expect(stored.sort()).toEqual(ids.sort());
      expect((await a.sessions.getContext('s')).length).toBe(ids.length);
    });
  },
);
