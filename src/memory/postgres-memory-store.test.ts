/**
 * What only PostgreSQL has to get right: several Navi processes on one database. Each "process"
 * here is a store on a pool of its own (`otherProcess`), as a second `navi serve` has.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../../test/fake-llm/index.js';
import { OllamaBackend } from '../llm/ollama.js';
import type { LlmBackend } from '../llm/types.js';
import { needsPostgres } from '../store/test-engines.js';
import { MemoryExtractor } from './extraction.js';
import { PgMemoryStore } from './postgres-memory-store.js';
import { clusteredEmbeddings, type MemoryTestStores, memoryEngines } from './test-support.js';

const postgres = memoryEngines().find((e) => e.name === 'postgres');
const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe.skipIf(!needsPostgres('PgMemoryStore tests') || !postgres)(
  'PgMemoryStore with several processes',
  () => {
    let t: MemoryTestStores;
    let a: PgMemoryStore;
    let b: PgMemoryStore;

    beforeEach(async () => {
      t = await postgres!.open();
      a = t.memory() as PgMemoryStore;
      b = (await t.otherProcess()) as PgMemoryStore;
    });
    afterEach(() => t.dispose());

    it("follows the other process's writes in its codes, and both see one facts revision grow", async () => {
      const [x, y, z] = (
        await a.upsertMany(['x', 'y', 'z'].map((key) => ({ category: 'c', key, value: `value ${key}` })))
      ).map((r) => r.fact.id);
      const r0 = await b.factsRevision();
      expect(r0).toBe(await a.factsRevision());
      await a.setEmbeddings([
        { id: x!, model: 'm', vector: Float32Array.from([1, 0, 0]) },
        { id: y!, model: 'm', vector: Float32Array.from([0.7, 0.7, 0]) },
      ]);
      const query = Float32Array.from([0.9, 0.1, 0]);
      // Both hold the codes in memory now.
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([x, y]);
      expect(ids(await b.nearest(query, 'm', 5))).toEqual([x, y]);
      // Added by the other process.
      await b.setEmbedding(z!, 'm', Float32Array.from([1, 0.05, 0]));
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([z, x, y]);
      // Changed by the other process: its vector is gone until embedded again.
      await b.update(x!, { value: 'edited elsewhere' });
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([z, y]);
      // Deleted by the other process.
      await b.delete({ id: z! });
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([y]);
      // Its own writes still patch its codes, and the other one notices them.
      await a.setEmbedding(x!, 'm', Float32Array.from([1, 0, 0]));
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([x, y]);
      expect(ids(await b.nearest(query, 'm', 5))).toEqual([x, y]);
      // A repair by hand (raw SQL) is noticed too.
      await t.exec(`DELETE FROM memory_facts WHERE id = ${y}`);
      expect(ids(await a.nearest(query, 'm', 5))).toEqual([x]);
      expect(await a.factsRevision()).toBeGreaterThan(r0);
      expect(await b.factsRevision()).toBe(await a.factsRevision());
      expect((await b.getSummary()).stale).toBe(true);
      await a.setSummary('summary');
      expect((await b.getSummary()).stale).toBe(false);
    });

    it('saves the same new fact from two processes at once without a unique-key error', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? a : b).upsert({ category: 'home', key: 'city', value: i < 3 ? 'Lyon' : 'Paris' }),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.fact.id)).size).toBe(1);
      expect(await a.count()).toBe(1);
    });

    it('finds what the exact search finds on clustered vectors (recall@10 ≥ 0.95), exactly in a small memory', async () => {
      const next = clusteredEmbeddings(128, 7, { topics: 30, subtopics: 10 });
      const facts = await a.upsertMany(
        Array.from({ length: 3000 }, (_, i) => ({ category: 'c', key: `f${i}`, value: `value ${i}` })),
      );
      await a.setEmbeddings(facts.map((r) => ({ id: r.fact.id, model: 'm', vector: next() })));
      let found = 0;
      for (let q = 0; q < 20; q++) {
        const query = next();
        const exact = ids(await a.nearestExact(query, 'm', 10));
        const approx = await (q % 2 ? a : b).nearest(query, 'm', 10);
        expect(approx).toHaveLength(10);
        for (let i = 1; i < approx.length; i++)
          expect(approx[i]!.distance).toBeGreaterThanOrEqual(approx[i - 1]!.distance);
        found += approx.filter((h) => exact.includes(h.id)).length;
      }
      expect(found / 200).toBeGreaterThanOrEqual(0.95);

      const small = clusteredEmbeddings(16, 3);
      await a.setEmbeddings(
        facts.slice(0, 500).map((r) => ({ id: r.fact.id, model: 'small', vector: small() })),
      );
      const query = small();
      expect(ids(await b.nearest(query, 'small', 20))).toEqual(ids(await b.nearestExact(query, 'small', 20)));
    });

    it('says which vector search it uses: pgvector only when the server offers the extension', async () => {
      const offered =
        (await a.db.rows("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).length > 0;
      if (!offered) expect(await a.vectorSearch()).toBe('scan');
      expect(await new PgMemoryStore(a.db, { vectorSearch: 'scan' }).vectorSearch()).toBe('scan');
      // The read-only answer for navi doctor: pgvector is never set up in this schema by asking.
      expect(await a.vectorSearchState()).toBe(offered ? 'offered' : 'absent');
      expect(await new PgMemoryStore(a.db, { vectorSearch: 'scan' }).vectorSearchState()).toBe('scan');
    });

    it('lets one process at a time mine a session, and frees it when mining fails', async () => {
      let release!: () => void;
      let entered!: () => void;
      const inside = new Promise<void>((r) => {
        entered = r;
      });
      const held = a.exclusively('s1', async () => {
        entered();
        await new Promise<void>((r) => {
          release = r;
        });
        return 'mined by a';
      });
      await inside;
      expect(await b.exclusively('s1', async () => 'mined by b')).toEqual({ claimed: false });
      // Another session is free meanwhile.
      expect(await b.exclusively('s2', async () => 'other')).toEqual({ claimed: true, value: 'other' });
      release();
      expect(await held).toEqual({ claimed: true, value: 'mined by a' });
      await expect(b.exclusively('s1', async () => Promise.reject(new Error('LLM down')))).rejects.toThrow(
        'LLM down',
      );
      expect(await a.exclusively('s1', async () => 'again')).toEqual({ claimed: true, value: 'again' });
    });
  },
);

describe.skipIf(!needsPostgres('extraction on two processes') || !postgres)(
  'MemoryExtractor on two processes',
  () => {
    const logger = pino({ level: 'silent' });
    const T0 = Date.parse('2026-03-01T10:00:00Z');
    const now = () => new Date(T0 + 31 * 60_000);
    let fake: FakeLlm;
    let t: MemoryTestStores;

    beforeAll(async () => {
      fake = await startFakeLlm();
    });
    afterAll(() => fake.close());
    beforeEach(async () => {
      fake.reset();
      t = await postgres!.open();
    });
    afterEach(() => t.dispose());

    it('mines a session once while two processes run their passes at the same time', async () => {
      const { sessions } = t.stores;
      await sessions.create({ id: 's1', profile_id: 'secretary', created_at: new Date(T0).toISOString() });
      await sessions.append('s1', [
        {
          message: {
            id: 'm1',
            role: 'user',
            content: 'I live in Lyon.',
            created_at: new Date(T0).toISOString(),
          },
          display: true,
          context: true,
        },
      ]);
      await sessions.update('s1', { last_active: new Date(T0).toISOString() });
      const ollama = new OllamaBackend({
        baseUrl: fake.ollamaUrl,
        model: 'test-model',
        numCtx: 8192,
        think: false,
        connectTimeoutMs: 5000,
        idleTimeoutMs: 10_000,
      });
      // The first process's extraction call waits until the second process's pass is over.
      let release!: () => void;
      let entered!: () => void;
      const inside = new Promise<void>((r) => {
        entered = r;
      });
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const gated: LlmBackend = {
        ...ollama,
        id: ollama.id,
        defaultModel: ollama.defaultModel,
        contextWindow: ollama.contextWindow,
        describe: () => ollama.describe(),
        checkHealth: (s) => ollama.checkHealth(s),
        streamComplete: (r) => ollama.streamComplete(r),
        complete: async (r) => {
          entered();
          await gate;
          return ollama.complete(r);
        },
      };
      const extractor = (memory: PgMemoryStore, backend: LlmBackend) =>
        new MemoryExtractor({ memory, sessions, backend, idleMinutes: 30, logger, now });
      const first = extractor(t.memory({ now }) as PgMemoryStore, gated);
      const second = extractor((await t.otherProcess({ now })) as PgMemoryStore, ollama);
      fake.enqueue(
        { text: '{"facts": [{"category": "home", "key": "city", "value": "Lyon"}]}' },
        { text: 'The user lives in Lyon.' },
      );
      const pass = first.processStaleSessions();
      await inside;
      expect((await second.processStaleSessions()).processed).toEqual([]);
      release();
      expect((await pass).processed).toEqual(['s1']);
      // Mined now: the second process finds nothing left to do either.
      expect((await second.processStaleSessions()).processed).toEqual([]);
      // A process whose list of states was read before the session was mined claims it, looks
      // again and leaves it.
      const behind = (await t.otherProcess({ now })) as PgMemoryStore;
      const lagging = Object.assign(Object.create(behind) as PgMemoryStore, {
        listSessionStates: async () => [],
      });
      const late = extractor(lagging, ollama);
      expect(await late.staleSessions()).toHaveLength(1);
      expect(await late.processStaleSessions()).toMatchObject({ processed: [], failed: [] });
      const extractions = fake.requests.filter(
        (r) => r.kind === 'chat' && JSON.stringify(r.body.messages).includes('I live in Lyon'),
      );
      expect(extractions).toHaveLength(1);
    });
  },
);
