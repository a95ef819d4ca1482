import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlm, fakeEmbedding, startFakeLlm } from '../../test/fake-llm/index.js';
import { OllamaBackend } from '../llm/ollama.js';
import type { LlmBackend } from '../llm/types.js';
import { factText, HybridMemorySearch, reciprocalRankFusion } from './search.js';
import { type EngineMemoryStore, type MemoryTestStores, memoryEngines } from './test-support.js';

const logger = pino({ level: 'silent' });
let fake: FakeLlm;
let t: MemoryTestStores;
let store: EngineMemoryStore;
let backend: OllamaBackend;
let clock = 0;
const now = () => new Date(clock);

/** The rows of one column of memory_facts, on either engine. */
async function column<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const { stores } = t;
  if (stores.engine === 'sqlite') {
    const positional = sql.replace(/\$\d+/g, '?');
    return stores.db
      .prepare<unknown[], T>(positional)
      .pluck()
      .all(...params);
  }
  return (await stores.pg.rows<Record<string, T>>(sql, params)).map((row) => Object.values(row)[0] as T);
}

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

async function setUp(engine: { open(): Promise<MemoryTestStores> }): Promise<void> {
  fake.reset();
  t = await engine.open();
  clock = Date.parse('2026-01-01T00:00:00Z');
  store = t.memory({ now });
  backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: false,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 10_000,
  });
}

/** The same backend without `embed()`, like a backend that cannot embed. */
function withoutEmbed(b: LlmBackend): LlmBackend {
  return {
    id: b.id,
    defaultModel: b.defaultModel,
    contextWindow: b.contextWindow,
    describe: () => b.describe(),
    streamComplete: (r) => b.streamComplete(r),
    complete: (r) => b.complete(r),
    checkHealth: (s) => b.checkHealth(s),
  };
}

const embedRequests = () => fake.requests.filter((r) => r.kind === 'embed');

describe('reciprocalRankFusion', () => {
  it('adds 1/(60 + rank) per list and breaks ties by best rank, then id', () => {
    const fused = reciprocalRankFusion([
      [1, 2, 3],
      [3, 1, 4],
    ]);
    expect(fused.map((f) => f.id)).toEqual([1, 3, 2, 4]);
    expect(fused[0]!.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(fused[3]!.score).toBeCloseTo(1 / 63, 12);
    expect(reciprocalRankFusion([[2], [1]]).map((f) => f.id)).toEqual([1, 2]);
    expect(reciprocalRankFusion([[5, 6], [7]]).map((f) => f.id)).toEqual([5, 7, 6]);
    expect(reciprocalRankFusion([[], []])).toEqual([]);
  });
});

describe.each(memoryEngines())('HybridMemorySearch on $name', (engine) => {
  beforeEach(() => setUp(engine));
  afterEach(() => t.dispose());

  it('fuses full-text and vector ranks when the backend embeds', async () => {
    const byWords = (
      await store.upsert({ category: 'environment', key: 'nas', value: 'Keeps backups on a Synology NAS' })
    ).fact;
    const byMeaning = (
      await store.upsert({ category: 'environment', key: 'storage', value: 'Owns a disk array at home' })
    ).fact;
    await store.upsert({ category: 'preference', key: 'tea', value: 'Likes green tea' });
    const query = 'where are my backups';
    // Stored vectors of the model the fake answers with: the "meaning" fact points exactly at the query.
    await store.setEmbedding(byMeaning.id, 'test-model', Float32Array.from(fakeEmbedding(query)));
    const search = new HybridMemorySearch({ store, backend, logger, now });
    const { hits, mode } = await search.search(query, { limit: 5 });
    expect(mode).toBe('hybrid');
    const ids = hits.map((h) => h.fact.id);
    expect(ids.slice(0, 2)).toEqual([byWords.id, byMeaning.id]);
    expect(hits[0]).toMatchObject({ fts_rank: 1, vector_rank: 2 });
    expect(hits[1]).toMatchObject({ fts_rank: null, vector_rank: 1 });
    expect(hits[0]!.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
    // Facts without a vector were embedded on the way, as "category / key: value".
    const inputs = embedRequests().flatMap((r) =>
      Array.isArray(r.body.input) ? r.body.input : [r.body.input],
    );
    expect(inputs).toContain(factText(byWords));
    expect(inputs).not.toContain(factText(byMeaning));
  });

  it('answers from full text alone with a backend that cannot embed', async () => {
    await store.upsert({ category: 'work', key: 'editor', value: 'Uses Neovim' });
    const search = new HybridMemorySearch({ store, backend: withoutEmbed(backend), logger, now });
    const { hits, mode } = await search.search('neovim');
    expect(mode).toBe('fts');
    expect(hits.map((h) => h.fact.key)).toEqual(['editor']);
    expect(embedRequests()).toHaveLength(0);
  });

  it('falls back to full text when embedding fails, and retries after a pause', async () => {
    await store.upsert({ category: 'work', key: 'editor', value: 'Uses Neovim' });
    fake.setEndpointError('embed', { status: 500, body: '{"error":"model does not support embeddings"}' });
    const warnings: string[] = [];
    const spy = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const search = new HybridMemorySearch({ store, backend, logger: spy, now, retryAfterMs: 60_000 });
    const first = await search.search('neovim');
    expect(first).toMatchObject({ mode: 'fts', hits: [{ fact: { key: 'editor' } }] });
    expect(embedRequests()).toHaveLength(1);
    expect(warnings.join('')).toContain('full-text only');
    await search.search('neovim');
    expect(embedRequests()).toHaveLength(1); // paused
    fake.setEndpointError('embed', undefined);
    clock += 61_000;
    expect((await search.search('neovim')).mode).toBe('hybrid');
  });

  it('re-embeds facts lazily when the embedding model changes', async () => {
    for (let i = 0; i < 5; i++)
      await store.upsert({ category: 'c', key: `k${i}`, value: `value number ${i}` });
    await new HybridMemorySearch({ store, backend, logger, now, embeddingModel: 'embed-a' }).search('value');
    const models = () => column<string | null>('SELECT DISTINCT embedding_model FROM memory_facts');
    expect(await models()).toEqual(['embed-a']);
    const b = new HybridMemorySearch({
      store,
      backend,
      logger,
      now,
      embeddingModel: 'embed-b',
      backfillPerSearch: 3,
    });
    await b.search('value');
    expect((await store.missingEmbeddings('embed-b', 10)).length).toBe(2);
    await b.search('value');
    expect(await models()).toEqual(['embed-b']);
  });

  it('stores no vector of a text edited while the model embedded it', async () => {
    const a = (await store.upsert({ category: 'c', key: 'a', value: 'first value' })).fact;
    const b = (await store.upsert({ category: 'c', key: 'b', value: 'other value' })).fact;
    let editDuring: { texts: number; edit: () => Promise<unknown> } | undefined;
    const slow: LlmBackend = {
      ...withoutEmbed(backend),
      embed: async (texts, options) => {
        const pending = editDuring;
        if (pending?.texts === texts.length) {
          editDuring = undefined;
          await pending.edit();
        }
        return backend.embed!(texts, options);
      },
    };
    const search = new HybridMemorySearch({ store, backend: slow, logger, now });
    const missing = async () => (await store.missingEmbeddings('test-model', 10)).map((f) => f.id);
    // Saved, then edited again before its first text came back embedded: no vector of the old text.
    editDuring = { texts: 1, edit: () => store.update(a.id, { value: 'second value' }) };
    await search.indexFact(a);
    expect(await missing()).toEqual([a.id, b.id]);
    // The search back-fill (a and b in one call): the fact edited meanwhile is left for the next one.
    editDuring = { texts: 2, edit: () => store.update(a.id, { key: 'renamed' }) };
    await search.search('value');
    expect(await missing()).toEqual([a.id]);
    await search.search('value');
    expect(await missing()).toEqual([]);
    const [embedded] = await column<Buffer>('SELECT embedding FROM memory_facts WHERE id = $1', [a.id]);
    const current = (await store.get(a.id))!;
    expect(factText(current)).toBe('c / renamed: second value');
    expect([...new Float32Array(Uint8Array.from(embedded!).buffer)]).toEqual([
      ...Float32Array.from(fakeEmbedding(factText(current))),
    ]);
  });

  it('indexes a saved fact at once, and an empty query finds nothing', async () => {
    const fact = (await store.upsert({ category: 'c', key: 'k', value: 'v' })).fact;
    const search = new HybridMemorySearch({ store, backend, logger, now });
    expect(await search.indexFact(fact)).toBe(true);
    expect(await store.missingEmbeddings('test-model', 10)).toEqual([]);
    expect(await search.search('   ')).toEqual({ hits: [], mode: 'fts' });
  });
});
