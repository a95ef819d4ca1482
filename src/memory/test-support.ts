/**
 * Shared set-up for the memory tests: a real SQLite file in a temporary folder, or the same
 * tests once per engine (`memoryEngines`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OpenedStores, openStores, type StoreEngine } from '../store/open-stores.js';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';
import { storeEngines, type TestStores } from '../store/test-engines.js';
import type { SqliteMemoryStore } from './memory-store.js';
import { openMemoryStore } from './open-memory-store.js';
import type { PgMemoryStore } from './postgres-memory-store.js';

export interface TempStores extends SqliteStores {
  dir: string;
  dispose(): void;
}

export function tempStores(): TempStores {
  const dir = mkdtempSync(join(tmpdir(), 'navi-memory-'));
  const stores = createSqliteStores(join(dir, 'navi.db'));
  return {
    ...stores,
    dir,
    dispose() {
      stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Deterministic pseudo-random numbers in [0, 1), so runs compare. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Unit vectors shaped like sentence embeddings rather than uniform noise: every vector shares a
 * common direction (random pairs have a cosine near 0.4, as with nomic-embed-text), belongs to
 * one of `topics` topics and one of `subtopics` under it, and each dimension has its own spread
 * (log-normal), as real models have a few loud dimensions. A query drawn the same way has tens of
 * neighbours at a cosine of 0.6 to 0.8, so which ten are the nearest is a close call, and the
 * mean direction leaves binary codes with less to tell apart than centred noise would.
 */
export function clusteredEmbeddings(
  dimension: number,
  seed: number,
  options: { topics?: number; subtopics?: number } = {},
): () => Float32Array {
  const next = seededRandom(seed);
  // Box-Muller gives two normal numbers per pair of uniforms: both are used.
  let spare: number | null = null;
  const normal = (): number => {
    if (spare !== null) {
      const v = spare;
      spare = null;
      return v;
    }
    const r = Math.sqrt(-2 * Math.log(Math.max(next(), 1e-12)));
    const a = 2 * Math.PI * next();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
  const scale = Float32Array.from({ length: dimension }, () => Math.exp(normal() * 0.5));
  const random = () => Float32Array.from({ length: dimension }, (_, i) => normal() * scale[i]!);
  const mean = random();
  const topics = Array.from({ length: options.topics ?? 200 }, () => ({
    centre: random(),
    subtopics: Array.from({ length: options.subtopics ?? 25 }, random),
  }));
  return () => {
    const topic = topics[Math.floor(next() * topics.length)]!;
    const sub = topic.subtopics[Math.floor(next() * topic.subtopics.length)]!;
    const v = new Float32Array(dimension);
    let norm = 0;
    for (let i = 0; i < dimension; i++) {
      v[i] = mean[i]! + 0.8 * topic.centre[i]! + 0.6 * sub[i]! + 0.7 * normal() * scale[i]!;
      norm += v[i]! * v[i]!;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < dimension; i++) v[i] = v[i]! / norm;
    return v;
  };
}

/** A memory test's stores on one engine (docs: src/store/test-engines.ts). */
export interface MemoryTestStores extends TestStores {
  /** A memory store on these stores; each call makes another one on the same database. */
  memory(options?: { now?: () => Date }): EngineMemoryStore;
  /**
   * A memory store on a connection (SQLite) or pool (PostgreSQL) of its own, as another Navi
   * process has; closed by `dispose`.
   */
  otherProcess(options?: { now?: () => Date }): Promise<EngineMemoryStore>;
  /** Runs raw SQL of this engine (a repair by hand, a test's fault). */
  exec(sql: string): Promise<void>;
  /** Makes `event` on `table` fail with `message` for the rows `when` (an SQL condition on `new`) selects. */
  refuse(event: 'INSERT' | 'UPDATE', table: string, when: string, message: string): Promise<void>;
}

export type EngineMemoryStore = SqliteMemoryStore | PgMemoryStore;

export interface MemoryEngineCase {
  name: StoreEngine;
  open(): Promise<MemoryTestStores>;
}

let refusals = 0;

/** The memory contract tests' engines: SQLite, and PostgreSQL when it may run. */
export function memoryEngines(): MemoryEngineCase[] {
  return storeEngines('memory store tests').map((engine) => ({
    name: engine.name,
    async open(): Promise<MemoryTestStores> {
      const t = await engine.open();
      const others: OpenedStores[] = [];
      const { stores } = t;
      return {
        ...t,
        memory: (options = {}) => openMemoryStore(stores, options),
        async otherProcess(options = {}) {
          const other = await openStores(t.settings);
          others.push(other);
          return openMemoryStore(other, options);
        },
        async exec(sql) {
          if (stores.engine === 'sqlite') stores.db.exec(sql);
          else await stores.pg.query(sql);
        },
        async refuse(event, table, when, message) {
          const name = `refuse_${++refusals}`;
          if (stores.engine === 'sqlite') {
            stores.db.exec(`CREATE TRIGGER ${name} BEFORE ${event} ON ${table} WHEN ${when}
                            BEGIN SELECT RAISE(ABORT, '${message}'); END`);
            return;
          }
          await stores.pg.query(`
            CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION '${message}'; END $$;
            CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW WHEN (${when})
              EXECUTE FUNCTION ${name}();`);
        },
        async dispose() {
          for (const other of others) await other.close();
          await t.dispose();
        },
      };
    },
  }));
}
