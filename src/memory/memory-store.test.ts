import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../store/sqlite/database.js';
import { migrations } from '../store/sqlite/migrations/index.js';
import { SqliteMemoryStore } from './memory-store.js';
import {
  type EngineMemoryStore,
  type MemoryTestStores,
  memoryEngines,
  type TempStores,
  tempStores,
} from './test-support.js';
import { MemoryConflictError, MemoryValidationError } from './types.js';

let clock = Date.parse('2026-01-01T00:00:00Z');
const now = () => new Date(clock);

describe.each(memoryEngines())('memory store on $name', (engine) => {
  let t: MemoryTestStores;
  let store: EngineMemoryStore;

  beforeEach(async () => {
    t = await engine.open();
    clock = Date.parse('2026-01-01T00:00:00Z');
    store = t.memory({ now });
  });
  afterEach(() => t.dispose());
  it('upserts on (category, key) after normalising both', async () => {
    const a = await store.upsert({
      category: 'Preference',
      key: 'Favourite Editor',
      value: 'Vim',
      source_session_id: 's1',
    });
    clock += 1000;
    const b = await store.upsert({ category: 'preference', key: 'favourite-editor', value: 'Neovim' });
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.fact).toMatchObject({
      id: a.fact.id,
      value: 'Neovim',
      source_session_id: 's1',
      key: 'favourite_editor',
    });
    expect(b.fact.updated_at).not.toBe(a.fact.updated_at);
    expect(await store.count()).toBe(1);
  });

  it('refuses empty fields', async () => {
    await expect(store.upsert({ category: '!!', key: 'k', value: 'v' })).rejects.toBeInstanceOf(
      MemoryValidationError,
    );
    await expect(store.upsert({ category: 'c', key: 'k', value: '   ' })).rejects.toBeInstanceOf(
      MemoryValidationError,
    );
  });

  it('lists in pages, most recently updated first, optionally by category', async () => {
    for (let i = 0; i < 7; i++) {
      clock += 1000;
      await store.upsert({ category: i % 2 ? 'odd' : 'even', key: `k${i}`, value: `v${i}` });
    }
    const first = await store.list({ limit: 3 });
    expect(first.total).toBe(7);
    expect(first.facts.map((f) => f.key)).toEqual(['k6', 'k5', 'k4']);
    const second = await store.list({ offset: 3, limit: 3 });
    expect(second.facts.map((f) => f.key)).toEqual(['k3', 'k2', 'k1']);
    const odd = await store.list({ category: 'ODD' });
    expect(odd.total).toBe(3);
    expect(odd.facts.every((f) => f.category === 'odd')).toBe(true);
  });

  it('edits value, category and key, refusing a clash with another fact', async () => {
    const a = (await store.upsert({ category: 'home', key: 'city', value: 'Lyon' })).fact;
    const b = (await store.upsert({ category: 'home', key: 'country', value: 'France' })).fact;
    const edited = await store.update(a.id, { category: 'place', key: 'home city', value: 'Paris' });
    expect(edited).toMatchObject({ category: 'place', key: 'home_city', value: 'Paris' });
    await expect(store.update(b.id, { category: 'place', key: 'home_city' })).rejects.toBeInstanceOf(
      MemoryConflictError,
    );
    expect(await store.update(9999, { value: 'x' })).toBeUndefined();
    // The index follows edits: the old words are gone, the new ones found.
    expect(await store.search('Lyon', 5)).toEqual([]);
    expect((await store.search('paris', 5))[0]?.fact.id).toBe(a.id);
  });

  it('deletes by id or by (category, key), and the index forgets the fact', async () => {
    const a = (await store.upsert({ category: 'pets', key: 'dog', value: 'A beagle named Rex' })).fact;
    await store.upsert({ category: 'pets', key: 'cat', value: 'A cat named Tom' });
    expect(await store.delete({ id: a.id })).toBe(true);
    expect(await store.delete({ id: a.id })).toBe(false);
    expect(await store.delete({ category: 'Pets', key: 'CAT' })).toBe(true);
    expect(await store.search('beagle', 5)).toEqual([]);
    expect(await store.count()).toBe(0);
  });

  it('ranks full-text hits with bm25 and survives hostile queries', async () => {
    await store.upsert({
      category: 'environment',
      key: 'home_server',
      value: 'Runs Proxmox on a NUC in the basement',
    });
    await store.upsert({ category: 'work', key: 'language', value: 'Writes Python and some Rust' });
    await store.upsert({ category: 'preference', key: 'coffee', value: 'Drinks "flat white" OR espresso' });
    const hits = await store.search('which server runs proxmox', 5);
    expect(hits[0]?.fact.key).toBe('home_server');
    expect(hits[0]?.rank).toBe(1);
    for (const q of [
      '"',
      '"unbalanced',
      'OR',
      'AND OR NOT',
      '*',
      'NEAR(a b)',
      'key:value',
      '^start',
      '-',
      '(((',
      "'; DROP TABLE memory_facts; --",
      '',
    ]) {
      await expect(store.search(q, 5)).resolves.toBeInstanceOf(Array);
    }
    expect((await store.search('"flat white" OR', 5))[0]?.fact.key).toBe('coffee');
    expect(await store.search('', 5)).toEqual([]);
    expect(await store.search('*', 5)).toEqual([]);
    const long = `python ${Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ')}`;
    expect(long.length).toBeGreaterThan(10_000);
    expect((await store.search(long, 5))[0]?.fact.key).toBe('language');
    expect(await store.count()).toBe(3);
  });

  it('folds case and accents and splits words joined by punctuation, alike on both engines', async () => {
    const cafe = (await store.upsert({ category: 'travel', key: 'breakfast', value: 'Un café à Zürich' }))
      .fact;
    const file = (await store.upsert({ category: 'work', key: 'database', value: 'Keeps notes in navi.db' }))
      .fact;
    const wide = (await store.upsert({ category: 'misc', key: 'greeting', value: 'Says ПРИВЕТ to friends' }))
      .fact;
    expect((await store.search('CAFE zurich', 5)).map((h) => h.fact.id)).toEqual([cafe.id]);
    expect((await store.search('Café', 5)).map((h) => h.fact.id)).toEqual([cafe.id]);
    expect((await store.search('navi', 5)).map((h) => h.fact.id)).toEqual([file.id]);
    expect((await store.search('db', 5)).map((h) => h.fact.id)).toEqual([file.id]);
    expect((await store.search('привет', 5)).map((h) => h.fact.id)).toEqual([wide.id]);
  });

  it('finds facts by words English counts as stop words, alike on both engines', async () => {
    const trip = (await store.upsert({ category: 'travel', key: 'trip', value: 'Took the kayak to Norway' }))
      .fact;
    const editor = (await store.upsert({ category: 'work', key: 'which editor', value: 'Vim' })).fact;
    await store.upsert({ category: 'misc', key: 'boat', value: 'Owns a red kayak' });
    const ids = async (q: string) => (await store.search(q, 5)).map((h) => h.fact.id).sort((a, b) => a - b);
    expect(await ids('the which')).toEqual([trip.id, editor.id].sort((a, b) => a - b));
    expect(await ids('THE')).toEqual([trip.id]);
    expect(await ids('which')).toEqual([editor.id]);
    // A stop word beside another word: the other word decides, as before.
    expect((await store.search('the norway', 5))[0]?.fact.id).toBe(trip.id);
  });

  it('ranks the facts holding every word first, then fills up with those holding some', async () => {
    // A rare word in the key scores high under bm25 on its own; the facts with every word still lead.
    await store.upsert({ category: 'misc', key: 'kayak', value: 'Owns a red kayak' });
    const both = (await store.upsert({ category: 'travel', key: 'trip', value: 'Took the kayak to Norway' }))
      .fact;
    for (let i = 0; i < 20; i++)
      await store.upsert({ category: 'travel', key: `t${i}`, value: `Norway trip ${i}` });
    const hits = await store.search('kayak norway', 5);
    expect(hits[0]?.fact.id).toBe(both.id);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5]);
    // Asked for more than hold every word: the rest follow, each fact once, best bm25 first.
    const all = await store.search('kayak norway', 50);
    expect(all).toHaveLength(22);
    expect(new Set(all.map((h) => h.fact.id)).size).toBe(22);
    expect(all[0]?.fact.id).toBe(both.id);
    const rest = all.slice(1).map((h) => h.bm25);
    expect(rest).toEqual([...rest].sort((a, b) => a - b));
    // A word found nowhere does not hide the facts holding the others.
    expect((await store.search('kayak xylophone', 5)).map((h) => h.fact.key)).toContain('kayak');
    expect(await store.search('kayak', 0)).toEqual([]);
  });

  it('saves many facts in one transaction, and nothing when one of them fails', async () => {
    expect(await store.upsertMany([])).toEqual([]);
    const first = await store.upsertMany([
      { category: 'Home', key: 'City', value: 'Lyon' },
      { category: 'home', key: 'pet', value: 'a cat' },
      { category: 'home', key: 'city', value: 'Paris' }, // the later one wins
    ]);
    expect(first.map((r) => [r.fact.key, r.created])).toEqual([
      ['city', true],
      ['pet', true],
      ['city', false],
    ]);
    expect((await store.getByKey('home', 'city'))?.value).toBe('Paris');
    const revision = await store.factsRevision();
    // Unchanged values are not changes.
    await store.upsertMany([{ category: 'home', key: 'pet', value: ' a   cat ' }]);
    expect(await store.factsRevision()).toBe(revision);

    // An invalid fact anywhere in the list: refused before anything is written.
    await expect(
      store.upsertMany([
        { category: 'home', key: 'garden', value: 'roses' },
        { category: '%%', key: 'k', value: 'v' },
      ]),
    ).rejects.toThrow(/category must contain at least one letter or digit/);
    // A failure half-way through the writes (here a trigger, as a full disk would): all rolled back.
    await t.refuse('INSERT', 'memory_facts', "new.key = 'boom'", 'disk full');
    await expect(
      store.upsertMany([
        { category: 'home', key: 'garden', value: 'roses' },
        { category: 'home', key: 'city', value: 'Nantes' },
        { category: 'home', key: 'boom', value: 'x' },
        { category: 'home', key: 'car', value: 'none' },
      ]),
    ).rejects.toThrow(/disk full/);
    expect(await store.count()).toBe(2);
    expect((await store.getByKey('home', 'city'))?.value).toBe('Paris');
    expect(await store.search('roses', 5)).toEqual([]);
    expect(await store.factsRevision()).toBe(revision);

    const many = await store.upsertMany(
      Array.from({ length: 5000 }, (_, i) => ({ category: 'bulk', key: `k${i}`, value: 'x'.repeat(5000) })),
    );
    expect(many.every((r) => r.created && r.fact.value.length === 2000)).toBe(true);
    expect(await store.count()).toBe(5002);
  });

  it('stores vectors per model and finds the nearest by cosine distance', async () => {
    const a = (await store.upsert({ category: 'c', key: 'a', value: 'a' })).fact;
    const b = (await store.upsert({ category: 'c', key: 'b', value: 'b' })).fact;
    const c = (await store.upsert({ category: 'c', key: 'c', value: 'c' })).fact;
    await store.setEmbedding(a.id, 'm1', Float32Array.from([1, 0, 0]));
    await store.setEmbedding(b.id, 'm1', Float32Array.from([0.7, 0.7, 0]));
    await store.setEmbedding(c.id, 'm2', Float32Array.from([1, 0, 0]));
    const hits = await store.nearest(Float32Array.from([0.9, 0.1, 0]), 'm1', 5);
    expect(hits.map((h) => h.id)).toEqual([a.id, b.id]);
    expect(hits[0]!.distance).toBeLessThan(hits[1]!.distance);
    expect(await store.nearest(Float32Array.from([0, 0, 0]), 'm1', 5)).toEqual([]);
    expect(await store.nearest(Float32Array.from([1, 0]), 'm1', 5)).toEqual([]);
    expect(await store.nearest(Float32Array.from([1, 0, 0]), 'm1', 0)).toEqual([]);
    expect(await store.nearest(Float32Array.from([1, 0, 0]), 'nobody', 5)).toEqual([]);
    // c has a vector of another model, so it still needs one for m1.
    expect((await store.missingEmbeddings('m1', 10)).map((f) => f.id)).toEqual([c.id]);
    // A new value drops the old vector.
    await store.upsert({ category: 'c', key: 'a', value: 'changed' });
    expect((await store.missingEmbeddings('m1', 10)).map((f) => f.id)).toEqual([a.id, c.id]);
    expect((await store.nearest(Float32Array.from([0.9, 0.1, 0]), 'm1', 5)).map((h) => h.id)).toEqual([b.id]);
    // A vector of a text edited meanwhile, or of a fact deleted, is not stored.
    await store.setEmbeddings([
      { id: a.id, model: 'm1', vector: Float32Array.from([1, 0, 0]), of: { ...a, value: 'old' } },
      { id: 9999, model: 'm1', vector: Float32Array.from([1, 0, 0]) },
    ]);
    expect((await store.missingEmbeddings('m1', 10)).map((f) => f.id)).toEqual([a.id, c.id]);
  });

  it('marks the summary stale whenever facts change', async () => {
    expect(await store.getSummary()).toEqual({ text: '', updated_at: null, stale: false });
    const f = (await store.upsert({ category: 'c', key: 'k', value: 'v' })).fact;
    expect((await store.getSummary()).stale).toBe(true);
    await store.setSummary('The user likes v.');
    expect(await store.getSummary()).toMatchObject({ text: 'The user likes v.', stale: false });
    await store.upsert({ category: 'c', key: 'k', value: 'v' }); // unchanged: not a change
    expect((await store.getSummary()).stale).toBe(false);
    await store.delete({ id: f.id });
    expect((await store.getSummary()).stale).toBe(true);
  });

  it('keeps a summary written from newer facts when one from older facts is saved after it', async () => {
    await store.upsert({ category: 'pet', key: 'dog', value: 'Rex' });
    const older = await store.factsRevision();
    await store.upsert({ category: 'pet', key: 'cat', value: 'Tom' });
    const newer = await store.factsRevision();
    expect(newer).toBeGreaterThan(older);
    // Two passes read the facts at different times; the one that read them first finishes last.
    await store.setSummary('Has a dog, Rex, and a cat, Tom.', { basedOnRevision: newer });
    await store.setSummary('Has a dog, Rex.', { basedOnRevision: older });
    expect(await store.getSummary()).toMatchObject({ text: 'Has a dog, Rex, and a cat, Tom.', stale: false });
    // A summary of the same facts, or of the current ones, still replaces it.
    await store.setSummary('Owns Rex and Tom.', { basedOnRevision: newer });
    expect((await store.getSummary()).text).toBe('Owns Rex and Tom.');
    await store.upsert({ category: 'pet', key: 'fish', value: 'Nemo' });
    await store.setSummary('Owns Rex, Tom and Nemo.');
    expect(await store.getSummary()).toMatchObject({ text: 'Owns Rex, Tom and Nemo.', stale: false });
  });

  it('keeps extraction state per session and drops it with the session', async () => {
    await t.stores.sessions.create({ id: 's1', profile_id: 'secretary' });
    const state = {
      session_id: 's1',
      extracted_at: null,
      status: 'failed' as const,
      attempts: 2,
      last_error: 'boom',
      attempted_at: '2026-01-01T00:00:00.000Z',
    };
    await store.setSessionState(state);
    expect(await store.getSessionState('s1')).toEqual(state);
    await store.setSessionState({ ...state, status: 'done', attempts: 0, last_error: null });
    expect(await store.listSessionStates()).toHaveLength(1);
    await t.stores.sessions.delete('s1');
    expect(await store.getSessionState('s1')).toBeUndefined();
  });
});

describe('SqliteMemoryStore', () => {
  let t: TempStores;
  let store: SqliteMemoryStore;

  beforeEach(() => {
    t = tempStores();
    clock = Date.parse('2026-01-01T00:00:00Z');
    store = new SqliteMemoryStore(t.db, { now });
  });
  afterEach(() => t.dispose());

  it('keeps finding the facts of a database whose index was built before the prefix indexes', async () => {
    const file = join(t.dir, 'old.db');
    const old = openDatabase(
      file,
      migrations.filter((m) => m.version < 9),
    );
    await new SqliteMemoryStore(old).upsertMany([
      { category: 'work', key: 'language', value: 'Writes python3 daily' },
      { category: 'home', key: 'server', value: 'A Proxmox cluster' },
    ]);
    old.close();
    const db = openDatabase(file);
    try {
      const upgraded = new SqliteMemoryStore(db);
      expect((await upgraded.search('python', 5)).map((h) => h.fact.key)).toEqual(['language']);
      expect((await upgraded.search('proxmox servers', 5)).map((h) => h.fact.key)).toEqual(['server']);
      // The triggers feed the new index: edits and deletions show at once.
      const server = (await upgraded.getByKey('home', 'server'))!;
      await upgraded.update(server.id, { value: 'A single NUC' });
      expect(await upgraded.search('proxmox', 5)).toEqual([]);
      expect((await upgraded.search('nuc', 5))[0]?.fact.id).toBe(server.id);
      await upgraded.delete({ id: server.id });
      expect(await upgraded.search('nuc', 5)).toEqual([]);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.exec("INSERT INTO memory_facts_fts (memory_facts_fts) VALUES ('integrity-check')");
    } finally {
      db.close();
    }
  });

  it('stores vectors per model and finds the nearest with either engine', async () => {
    const scan = new SqliteMemoryStore(t.db, { now, vectorEngine: 'scan' });
    expect(store.vectorEngine).toBe('sqlite-vec');
    const a = (await store.upsert({ category: 'c', key: 'a', value: 'a' })).fact;
    const b = (await store.upsert({ category: 'c', key: 'b', value: 'b' })).fact;
    const c = (await store.upsert({ category: 'c', key: 'c', value: 'c' })).fact;
    await store.setEmbedding(a.id, 'm1', Float32Array.from([1, 0, 0]));
    await store.setEmbedding(b.id, 'm1', Float32Array.from([0.7, 0.7, 0]));
    await store.setEmbedding(c.id, 'm2', Float32Array.from([1, 0, 0]));
    for (const s of [store, scan]) {
      const hits = await s.nearest(Float32Array.from([0.9, 0.1, 0]), 'm1', 5);
      expect(hits.map((h) => h.id)).toEqual([a.id, b.id]);
      expect(hits[0]!.distance).toBeLessThan(hits[1]!.distance);
      expect(await s.nearest(Float32Array.from([0, 0, 0]), 'm1', 5)).toEqual([]);
      expect(await s.nearest(Float32Array.from([1, 0]), 'm1', 5)).toEqual([]);
    }
    // c has a vector of another model, so it still needs one for m1.
    expect((await store.missingEmbeddings('m1', 10)).map((f) => f.id)).toEqual([c.id]);
    // A new value drops the old vector.
    await store.upsert({ category: 'c', key: 'a', value: 'changed' });
    expect((await store.missingEmbeddings('m1', 10)).map((f) => f.id)).toEqual([a.id, c.id]);
  });
});
