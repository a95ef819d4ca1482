/**
 * Exact nearest-neighbour search by cosine distance over every stored float vector of a model:
 * the reference the approximate search of vector-index.ts is measured against (recall@10 in the
 * `memory` bench and its tests). sqlite-vec's `vec_distance_cosine` computes the distances inside
 * SQLite when the extension loads; otherwise the blobs are scanned in JavaScript.
 */
import type { Database } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { VectorHit } from './types.js';
import { asFloats } from './vector-codes.js';

export type VectorEngine = 'sqlite-vec' | 'scan';

/** `sqlite-vec` when the extension loads on `db` (or is refused when asked for), else `scan`. */
export function chooseEngine(db: Database, wanted: VectorEngine | 'auto'): VectorEngine {
  if (wanted === 'scan') return 'scan';
  try {
    // Loading twice on one connection is harmless; probing tells us it really answers.
    sqliteVec.load(db);
    db.prepare('SELECT vec_version()').get();
    return 'sqlite-vec';
  } catch (err) {
    if (wanted === 'sqlite-vec') throw err;
    return 'scan';
  }
}

/** The `limit` nearest facts to `query` among those embedded with `model`, by brute force. */
export function exactNearest(
  db: Database,
  engine: VectorEngine,
  query: Float32Array,
  model: string,
  limit: number,
): VectorHit[] {
  const bytes = query.length * 4;
  if (engine === 'sqlite-vec') {
    return db
      .prepare<[Buffer, string, number, number], VectorHit>(
        `SELECT id, distance FROM (
           SELECT id, vec_distance_cosine(embedding, ?) AS distance FROM memory_facts
           WHERE embedding_model = ? AND length(embedding) = ?)
         WHERE distance IS NOT NULL ORDER BY distance, id LIMIT ?`,
      )
      .all(Buffer.from(query.buffer, query.byteOffset, query.byteLength), model, bytes, limit);
  }
  // Streams the rows and keeps only the best `limit`, so 100 000 vectors are never held at once.
  const queryNorm = Math.sqrt(dot(query, query));
  const top: VectorHit[] = [];
  const rows = db
    .prepare<[string, number], [number, Buffer]>(
      'SELECT id, embedding FROM memory_facts WHERE embedding_model = ? AND length(embedding) = ?',
    )
    .raw()
    .iterate(model, bytes);
  for (const [id, blob] of rows) {
    const v = asFloats(blob);
    const norm = Math.sqrt(dot(v, v));
    if (norm === 0) continue;
    const distance = 1 - dot(query, v) / (queryNorm * norm);
    if (top.length === limit && distance >= top[top.length - 1]!.distance) continue;
    let i = top.length;
    while (i > 0 && top[i - 1]!.distance > distance) i--;
    top.splice(i, 0, { id, distance });
    if (top.length > limit) top.pop();
  }
  return top;
}

/** Cosine distance of each row's vector to `query`, nearest first (ties by id); zero vectors left out. */
export function rankByCosine(query: Float32Array, rows: Iterable<[number, Buffer]>): VectorHit[] {
  const queryNorm = Math.sqrt(dot(query, query));
  const hits: VectorHit[] = [];
  for (const [id, blob] of rows) {
    const v = asFloats(blob);
    const norm = Math.sqrt(dot(v, v));
    if (norm === 0 || queryNorm === 0) continue;
    hits.push({ id, distance: 1 - dot(query, v) / (queryNorm * norm) });
  }
  return hits.sort((a, b) => a.distance - b.distance || a.id - b.id);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
