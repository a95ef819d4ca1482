import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../store/sqlite/database.js';
import { migrations } from '../store/sqlite/migrations/index.js';
import { SqliteMemoryStore } from './memory-store.js';
import { clusteredEmbeddings, seededRandom, type TempStores, tempStores } from './test-support.js';
import { binaryCode, CodeSet, codeBytes, codeWords, hamming } from './vector-codes.js';
import { EXACT_UP_TO } from './vector-index.js';

let t: TempStores;
let store: SqliteMemoryStore;

beforeEach(() => {
  t = tempStores();
  store = new SqliteMemoryStore(t.db);
});
afterEach(() => t.dispose());

async function addFacts(s: SqliteMemoryStore, count: number, prefix = 'f'): Promise<number[]> {
  const results = await s.upsertMany(
    Array.from({ length: count }, (_, i) => ({ category: 'c', key: `${prefix}${i}`, value: `value ${i}` })),
  );
  return results.map((r) => r.fact.id);
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('binary codes', () => {
  it('set one bit per positive component, in whole 32-bit words', () => {
    expect(codeBytes(3)).toBe(4);
    expect(codeBytes(768)).toBe(96);
    const code = codeWords(binaryCode(Float32Array.from([0.5, -1, 0, 2, ...Array(31).fill(-1), 3])));
    expect(code.length).toBe(2);
    expect(code[0]).toBe(0b1001);
    expect(code[1]).toBe(0b1000);
  });

  it('count differing bits exactly whatever the number of words', () => {
    const random = seededRandom(5);
    const word = () => (random() * 2 ** 32) | 0;
    for (const words of [1, 2, 3, 4, 12, 24, 25, 32, 48, 96]) {
      const codes = Int32Array.from({ length: words * 20 }, word);
      codes.fill(-1, 0, words); // all ones against...
      const query = Int32Array.from({ length: words }, word);
      query.fill(0); // ...all zeros: every bit differs, the most a byte total must hold
      for (let i = 0; i < 20; i++) {
        let expected = 0;
        for (let j = 0; j < words; j++) {
          const x = (codes[i * words + j]! ^ query[j]!) >>> 0;
          for (let bit = 0; bit < 32; bit++) expected += (x >>> bit) & 1;
        }
        expect(hamming(codes, i * words, query, words)).toBe(expected);
      }
      expect(hamming(codes, 0, query, words)).toBe(words * 32);
    }
  });

  it('keep a dense set through puts, replacements and removals, and pick the closest by Hamming distance', () => {
    const set = new CodeSet(32, 1);
    const word = (n: number) => Int32Array.of(n);
    set.put(1, word(0b0000));
    set.put(2, word(0b0001));
    set.put(3, word(0b0111));
    set.put(4, word(0b1111));
    set.put(2, word(0b1111)); // replaced, not added
    expect(set.count).toBe(4);
    expect(set.closest(word(0), 1)).toEqual([1]);
    // 2 and 4 tie at distance 4 for the last place: one of them takes it, never both.
    const three = set.closest(word(0), 3);
    expect(three).toHaveLength(3);
    expect(three).toEqual(expect.arrayContaining([1, 3]));
    expect(three.includes(2) !== three.includes(4)).toBe(true);
    set.remove(1);
    set.remove(99);
    expect(set.count).toBe(3);
    expect(set.all().sort()).toEqual([2, 3, 4]);
    expect(set.closest(word(0), 1)).toEqual([3]);
    expect(set.closest(word(0), 10).sort()).toEqual([2, 3, 4]);
  });
});

describe('approximate nearest', () => {
  it('finds what the exact search finds on clustered vectors (recall@10 ≥ 0.95)', async () => {
    const next = clusteredEmbeddings(128, 7, { topics: 30, subtopics: 10 });
    const factIds = await addFacts(store, 3000);
    await store.setEmbeddings(factIds.map((id) => ({ id, model: 'm', vector: next() })));
    const scan = new SqliteMemoryStore(t.db, { vectorEngine: 'scan' });
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = next();
      const exact = ids(await store.nearestExact(query, 'm', 10));
      const approx = await (q % 2 ? scan : store).nearest(query, 'm', 10);
      expect(approx).toHaveLength(10);
      // Distances are exact cosine distances, nearest first.
      for (let i = 1; i < approx.length; i++)
        expect(approx[i]!.distance).toBeGreaterThanOrEqual(approx[i - 1]!.distance);
      found += approx.filter((h) => exact.includes(h.id)).length;
    }
    expect(found / 200).toBeGreaterThanOrEqual(0.95);
  });

  it('is exact in a small memory', async () => {
    const next = clusteredEmbeddings(16, 3);
    const factIds = await addFacts(store, EXACT_UP_TO);
    await store.setEmbeddings(factIds.map((id) => ({ id, model: 'm', vector: next() })));
    for (let q = 0; q < 5; q++) {
      const query = next();
      const approx = await store.nearest(query, 'm', 20);
      const exact = await store.nearestExact(query, 'm', 20);
      expect(ids(approx)).toEqual(ids(exact));
      // sqlite-vec computes in single precision, the re-ranking in double.
      for (const [i, h] of approx.entries()) expect(h.distance).toBeCloseTo(exact[i]!.distance, 5);
    }
  });

  it("follows the store's own edits, other stores' writes and the vector's model and length", async () => {
    const other = new SqliteMemoryStore(t.db);
    const [a, b, c] = await addFacts(store, 3);
    await store.setEmbeddings([
      { id: a!, model: 'm', vector: Float32Array.from([1, 0, 0]) },
      { id: b!, model: 'm', vector: Float32Array.from([0.7, 0.7, 0]) },
      { id: c!, model: 'other', vector: Float32Array.from([1, 0, 0]) },
    ]);
    const query = Float32Array.from([0.9, 0.1, 0]);
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([a, b]);
    expect(ids(await other.nearest(query, 'm', 5))).toEqual([a, b]);
    // A new value clears the vector and its code: the fact is found by text only until re-embedded.
    await store.upsert({ category: 'c', key: 'f0', value: 'a new value' });
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([b]);
    expect(ids(await other.nearest(query, 'm', 5))).toEqual([b]);
    // Another store's writes are seen by this one's codes in memory.
    await other.setEmbedding(c!, 'm', Float32Array.from([1, 0.05, 0]));
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([c, b]);
    await other.delete({ id: b! });
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([c]);
    await store.update(c!, { value: 'edited' });
    expect(await other.nearest(query, 'm', 5)).toEqual([]);
    // A vector of another length or model is not compared.
    await store.setEmbedding(a!, 'm', Float32Array.from([1, 0, 0, 0]));
    expect(await store.nearest(query, 'm', 5)).toEqual([]);
    expect(ids(await store.nearest(Float32Array.from([1, 0, 0, 0]), 'm', 5))).toEqual([a]);
    expect(await store.nearest(Float32Array.from([1, 0, 0, 0]), 'x', 5)).toEqual([]);
    // Raw SQL on the same connection (a restore, a repair) is noticed too.
    t.db.prepare('DELETE FROM memory_facts WHERE id = ?').run(a!);
    expect(await store.nearest(Float32Array.from([1, 0, 0, 0]), 'm', 5)).toEqual([]);
  });

  it('stores many vectors in one transaction: a failure half-way leaves the vectors and codes as they were', async () => {
    const [a, b, c] = await addFacts(store, 3);
    await store.setEmbedding(a!, 'm', Float32Array.from([1, 0]));
    const query = Float32Array.from([1, 0.1]);
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([a]);
    t.db.exec(`CREATE TRIGGER refuse_c BEFORE UPDATE OF embedding ON memory_facts WHEN new.id = ${c}
               BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    await expect(
      store.setEmbeddings([
        { id: a!, model: 'm', vector: Float32Array.from([0, 1]) },
        { id: b!, model: 'm', vector: Float32Array.from([1, 0.1]) },
        { id: c!, model: 'm', vector: Float32Array.from([1, 0]) },
      ]),
    ).rejects.toThrow(/disk full/);
    expect(ids(await store.nearest(query, 'm', 5))).toEqual([a]);
    expect(t.db.prepare('SELECT count(*) FROM memory_fact_codes').pluck().get()).toBe(1);
    expect((await store.missingEmbeddings('m', 10)).map((f) => f.id)).toEqual([b, c]);
    // An id no longer stored is skipped, not an error; an empty list writes nothing.
    await store.setEmbeddings([{ id: 9999, model: 'm', vector: Float32Array.from([1, 0]) }]);
    await store.setEmbeddings([]);
    expect(t.db.prepare('SELECT count(*) FROM memory_fact_codes').pluck().get()).toBe(1);
  });

  it('forgets the codes in memory when a write does not commit, so a revision reached again is not taken for current', async () => {
    const next = clusteredEmbeddings(8, 11);
    const factIds = await addFacts(store, EXACT_UP_TO + 100);
    const vectors = factIds.map(() => next());
    await store.setEmbeddings(factIds.map((id, i) => ({ id, model: 'm', vector: vectors[i]! })));
    const [y] = factIds;
    const z = (await store.upsert({ category: 'c', key: 'z', value: 'no vector yet' })).fact.id;
    expect((await store.nearest(vectors[0]!, 'm', 10))[0]?.id).toBe(y);
    // A COMMIT refused (here a deferred foreign key, as a full disk would) after the new value
    // deleted y's code: the database keeps y's vector and code, the revision goes back.
    t.db.exec(`CREATE TABLE guard_parent (id INTEGER PRIMARY KEY);
               CREATE TABLE guard (p INTEGER REFERENCES guard_parent(id) DEFERRABLE INITIALLY DEFERRED);
               CREATE TRIGGER refuse_commit AFTER UPDATE ON memory_facts WHEN new.id = ${y}
               BEGIN INSERT INTO guard VALUES (1); END`);
    await expect(store.upsert({ category: 'c', key: 'f0', value: 'a new value' })).rejects.toThrow(
      /FOREIGN KEY/,
    );
    t.db.exec('DROP TRIGGER refuse_commit');
    // Another store's write brings the revision to the number the failed one would have left.
    const other = new SqliteMemoryStore(t.db);
    const vz = next();
    await other.setEmbedding(z, 'm', vz);
    expect((await store.nearest(vectors[0]!, 'm', 10))[0]?.id).toBe(y);
    expect((await store.nearest(vz, 'm', 10))[0]?.id).toBe(z);
    // Nested in an outer transaction that rolls back: the same.
    expect(() =>
      t.db.transaction(() => {
        void store.upsert({ category: 'c', key: 'f0', value: 'another value' });
        throw new Error('outer rolled back');
      })(),
    ).toThrow(/outer rolled back/);
    const w = (await store.upsert({ category: 'c', key: 'w', value: 'no vector yet' })).fact.id;
    const vw = next();
    await other.setEmbedding(w, 'm', vw);
    expect((await store.nearest(vectors[0]!, 'm', 10))[0]?.id).toBe(y);
    expect((await store.nearest(vw, 'm', 10))[0]?.id).toBe(w);
  });

  it('gives an embedding stored before the codes existed its code when the database is upgraded', async () => {
    t.dispose();
    t = tempStores();
    const file = `${t.dir}/old.db`;
    const before = migrations.filter((m) => m.version < 8);
    const old = openDatabase(file, before);
    const insert = old.prepare(
      `INSERT INTO memory_facts (category, key, value, created_at, updated_at, embedding, embedding_model)
       VALUES ('c', ?, 'v', 'now', 'now', ?, ?)`,
    );
    const next = clusteredEmbeddings(40, 9);
    const vectors = Array.from({ length: 5 }, () => next());
    for (const [i, v] of vectors.entries()) insert.run(`k${i}`, Buffer.from(v.buffer), 'm');
    insert.run('empty', Buffer.alloc(0), 'm');
    insert.run('none', null, null);
    old.close();

    const db = openDatabase(file);
    try {
      const codes = db
        .prepare<[], { key: string; model: string; dimension: number; code: Buffer }>(
          `SELECT f.key, c.model, c.dimension, c.code FROM memory_fact_codes c
           JOIN memory_facts f ON f.id = c.fact_id ORDER BY f.id`,
        )
        .all();
      expect(codes.map((c) => c.key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
      codes.forEach((c, i) => {
        expect(c).toMatchObject({ model: 'm', dimension: 40 });
        expect(c.code.equals(binaryCode(vectors[i]!))).toBe(true);
      });
      const upgraded = new SqliteMemoryStore(db);
      expect((await upgraded.nearest(vectors[3]!, 'm', 1))[0]?.distance).toBeCloseTo(0, 5);
    } finally {
      db.close();
    }
  });
});
