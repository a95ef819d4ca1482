/**
 * Hybrid memory search (docs/memory.md#hybrid-search-and-rank-fusion): full-text bm25 ranking always, plus cosine similarity over
 * embedding vectors when the backend can embed, merged by Reciprocal Rank Fusion (k = 60).
 *
 * Vectors are made lazily: a fact gets one when saved through the tool (best effort) and any fact
 * without a vector of the current embedding model — new, edited, or embedded by a model since
 * replaced — is embedded in small batches at search time. Until then it is still found by text.
 * When embedding fails the search answers from the full-text index alone, logs why, and leaves
 * embedding alone for a minute so a backend without an embedding model is not asked every time.
 */
import type { Logger } from 'pino';
import type { LlmBackend } from '../llm/types.js';
import type { MemoryFact, MemoryStore } from './types.js';

export const RRF_K = 60;

/**
 * Vector neighbours further than this cosine distance (similarity below 0.1) are not candidates:
 * nearest-neighbour search always returns something, and without a floor every search would
 * list every embedded fact, however unrelated.
 */
export const MAX_VECTOR_DISTANCE = 0.9;

export interface FusedRank {
  id: number;
  score: number;
}

/**
 * Reciprocal Rank Fusion: each list adds 1 / (k + rank) to the items it holds (rank 1 = best).
 * Ties go to the item with the better single rank, then the lower id, so the order is stable.
 */
export function reciprocalRankFusion(lists: readonly (readonly number[])[], k = RRF_K): FusedRank[] {
  const scores = new Map<number, { score: number; best: number }>();
  for (const list of lists) {
    list.forEach((id, i) => {
      const entry = scores.get(id) ?? { score: 0, best: Number.POSITIVE_INFINITY };
      entry.score += 1 / (k + i + 1);
      entry.best = Math.min(entry.best, i + 1);
      scores.set(id, entry);
    });
  }
  return [...scores.entries()]
    .sort(([ida, a], [idb, b]) => b.score - a.score || a.best - b.best || ida - idb)
    .map(([id, { score }]) => ({ id, score }));
}

/** The text a fact's vector is made from. */
export function factText(fact: Pick<MemoryFact, 'category' | 'key' | 'value'>): string {
  return `${fact.category.replace(/_/g, ' ')} / ${fact.key.replace(/_/g, ' ')}: ${fact.value}`;
}

export interface MemorySearchHit {
  fact: MemoryFact;
  /** Fused score: higher is better. */
  score: number;
  /** Rank in the full-text list (1 = best), or null when only the vectors found it. */
  fts_rank: number | null;
  vector_rank: number | null;
}

export interface MemorySearchResponse {
  hits: MemorySearchHit[];
  /** `hybrid` when vectors took part, `fts` otherwise. */
  mode: 'hybrid' | 'fts';
}

export interface HybridMemorySearchDeps {
  store: MemoryStore;
  /** The backend whose `embed()` makes vectors; a function so the backend can change at run time. */
  backend?: LlmBackend | (() => LlmBackend | undefined);
  /** Embedding model to ask for; the backend's default when unset. */
  embeddingModel?: string;
  logger?: Logger;
  now?: () => Date;
  /** Facts embedded per search at most (default 64). */
  backfillPerSearch?: number;
  /** How long embedding is skipped after a failure (default 60 000 ms). */
  retryAfterMs?: number;
  /** Cosine distance beyond which a vector neighbour is ignored (default MAX_VECTOR_DISTANCE). */
  maxVectorDistance?: number;
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;
const EMBED_BATCH = 32;

export class HybridMemorySearch {
  private embeddingPausedUntil = 0;
  private readonly now: () => Date;

  constructor(private readonly deps: HybridMemorySearchDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Best matches first; at most `limit` (default 10, at most 50). Never throws for embedding trouble. */
  async search(
    query: string,
    options: { limit?: number; signal?: AbortSignal } = {},
  ): Promise<MemorySearchResponse> {
    const limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(options.limit ?? DEFAULT_LIMIT)));
    // Each list brings more candidates than asked for, so fusion can promote what both agree on.
    const pool = Math.max(limit * 4, 40);
    const { store } = this.deps;
    const fts = await store.search(query, pool);
    const vector = query.trim() ? await this.vectorCandidates(query, pool, options.signal) : null;

    const facts = new Map<number, MemoryFact>(fts.map((h) => [h.fact.id, h.fact]));
    const ftsIds = fts.map((h) => h.fact.id);
    const vectorIds = vector?.map((h) => h.id) ?? [];
    const fused = reciprocalRankFusion([ftsIds, vectorIds]).slice(0, limit);
    const hits: MemorySearchHit[] = [];
    for (const { id, score } of fused) {
      const fact = facts.get(id) ?? (await store.get(id));
      if (!fact) continue; // deleted between the two queries
      const f = ftsIds.indexOf(id);
      const v = vectorIds.indexOf(id);
      hits.push({ fact, score, fts_rank: f < 0 ? null : f + 1, vector_rank: v < 0 ? null : v + 1 });
    }
    return { hits, mode: vector ? 'hybrid' : 'fts' };
  }

  /** Embeds one fact now (after a save), so it is found by meaning at once. False when it could not. */
  async indexFact(fact: MemoryFact, signal?: AbortSignal): Promise<boolean> {
    const backend = this.embedder();
    if (!backend) return false;
    try {
      const result = await backend.embed!([factText(fact)], this.embedOptions(signal));
      const v = result.vectors[0];
      if (!v || v.length === 0) return false;
      // `of`: a fact edited while the model ran keeps no vector of its old text.
      await this.deps.store.setEmbeddings([
        { id: fact.id, model: result.model, vector: Float32Array.from(v), of: fact },
      ]);
      return true;
    } catch (err) {
      this.pause(err, 'could not embed a saved fact');
      return false;
    }
  }

  private async vectorCandidates(query: string, pool: number, signal?: AbortSignal) {
    const backend = this.embedder();
    if (!backend) return null;
    try {
      const result = await backend.embed!([query], this.embedOptions(signal));
      const v = result.vectors[0];
      if (!v || v.length === 0) throw new Error('the backend returned no vector');
      await this.backfill(backend, result.model, signal);
      const maxDistance = this.deps.maxVectorDistance ?? MAX_VECTOR_DISTANCE;
      const near = await this.deps.store.nearest(Float32Array.from(v), result.model, pool);
      return near.filter((h) => h.distance <= maxDistance);
    } catch (err) {
      if (signal?.aborted) throw err;
      this.pause(err, 'memory search fell back to full-text only');
      return null;
    }
  }

  /** Embeds a few facts that have no vector of `model` yet. */
  private async backfill(backend: LlmBackend, model: string, signal?: AbortSignal): Promise<void> {
    let budget = this.deps.backfillPerSearch ?? 64;
    while (budget > 0) {
      const facts = await this.deps.store.missingEmbeddings(model, Math.min(EMBED_BATCH, budget));
      if (facts.length === 0) return;
      const result = await backend.embed!(facts.map(factText), { model, ...(signal ? { signal } : {}) });
      if (result.model !== model) return; // the backend answers with another model: next search
      const entries = facts.flatMap((fact, i) => {
        const v = result.vectors[i];
        return v && v.length > 0 ? [{ id: fact.id, model, vector: Float32Array.from(v), of: fact }] : [];
      });
      await this.deps.store.setEmbeddings(entries);
      budget -= facts.length;
      if (facts.length < EMBED_BATCH) return;
    }
  }

  private embedder(): LlmBackend | undefined {
    if (this.now().getTime() < this.embeddingPausedUntil) return undefined;
    const { backend } = this.deps;
    let b: LlmBackend | undefined;
    try {
      b = typeof backend === 'function' ? backend() : backend;
    } catch {
      return undefined;
    }
    return b?.embed ? b : undefined;
  }

  private embedOptions(signal?: AbortSignal): { model?: string; signal?: AbortSignal } {
    return {
      ...(this.deps.embeddingModel ? { model: this.deps.embeddingModel } : {}),
      ...(signal ? { signal } : {}),
    };
  }

  private pause(err: unknown, what: string): void {
    this.embeddingPausedUntil = this.now().getTime() + (this.deps.retryAfterMs ?? 60_000);
    this.deps.logger?.warn(
      { err: err instanceof Error ? err.message : String(err) },
      `${what}: embedding failed`,
    );
  }
}
