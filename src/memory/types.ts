/**
 * Long-term memory contracts (docs/memory.md#long-term-memory). A `MemoryStore` keeps facts about the user, one per
 * (category, key), with a full-text index and optional embedding vectors; the narrative summary
 * built from them; and which sessions were already mined for facts.
 */

import type { MemoryFactPage, MemoryFactRecord } from '../protocol/rest.js';

/** A fact of long-term memory: the same record the REST API sends (`MemoryFactRecord`). */
export type MemoryFact = MemoryFactRecord;

export interface FactInput {
  category: string;
  key: string;
  value: string;
  source_session_id?: string | null;
}

/** Fields an edit may change; at least one. */
export interface FactPatch {
  category?: string;
  key?: string;
  value?: string;
}

export interface UpsertResult {
  fact: MemoryFact;
  /** False when an existing fact was changed, or left as it was because the value is the same. */
  created: boolean;
}

export interface VectorEntry {
  id: number;
  model: string;
  vector: Float32Array;
  /**
   * The text the vector was made from: when the fact's category, key or value differ now (edited
   * while the embedding model ran), the vector is not stored, and the fact stays listed by
   * `missingEmbeddings` to be embedded again.
   */
  of?: Pick<MemoryFact, 'category' | 'key' | 'value'>;
}

export type FactRef = { id: number } | { category: string; key: string };

export interface FactListOptions {
  /** Default 0. */
  offset?: number;
  /** Default 50, at most 500. */
  limit?: number;
  /** Only this (normalised) category. */
  category?: string;
}

/** A page of facts: the same page the REST API sends (`MemoryFactPage`). */
export type FactPage = MemoryFactPage;

/** One full-text hit; `rank` is 1 for the best. */
export interface FtsHit {
  fact: MemoryFact;
  rank: number;
  /** bm25 score as SQLite gives it: lower is better. */
  bm25: number;
}

export interface VectorHit {
  id: number;
  /** Cosine distance (0 = same direction, 2 = opposite). */
  distance: number;
}

export interface MemorySummary {
  text: string;
  updated_at: string | null;
  /** True when facts changed after the summary was written. */
  stale: boolean;
}

export type ExtractionStatus = 'done' | 'failed';

export interface SessionMemoryState {
  session_id: string;
  /** When the last successful extraction started; null if none succeeded yet. */
  extracted_at: string | null;
  status: ExtractionStatus;
  /** Failed attempts since the last success. */
  attempts: number;
  last_error: string | null;
  /** When the last attempt (successful or not) started. */
  attempted_at: string | null;
}

export interface MemoryStore {
  /**
   * Inserts a fact or, when (category, key) exists after normalisation, replaces its value.
   * Throws `MemoryValidationError` for an empty category, key or value.
   */
  upsert(input: FactInput): Promise<UpsertResult>;
  /**
   * `upsert` for many facts in one transaction, results in input order (a later input with the
   * same category and key wins). Every input is validated first; on any error nothing is written.
   */
  upsertMany(inputs: readonly FactInput[]): Promise<UpsertResult[]>;
  get(id: number): Promise<MemoryFact | undefined>;
  getByKey(category: string, key: string): Promise<MemoryFact | undefined>;
  /** Most recently updated first. */
  list(options?: FactListOptions): Promise<FactPage>;
  /** Most recently updated first, at most `limit`. */
  recent(limit: number): Promise<MemoryFact[]>;
  count(): Promise<number>;
  /**
   * Edits a fact; undefined for an unknown id. Throws `MemoryConflictError` when the new
   * (category, key) belongs to another fact, `MemoryValidationError` for empty fields.
   */
  update(id: number, patch: FactPatch): Promise<MemoryFact | undefined>;
  delete(ref: FactRef): Promise<boolean>;
  /** Full-text search (bm25). Any text is accepted: it is turned into a safe query. */
  search(query: string, limit: number): Promise<FtsHit[]>;

  /** Facts without a vector of `model`, oldest first (for lazy re-embedding). */
  missingEmbeddings(model: string, limit: number): Promise<MemoryFact[]>;
  setEmbedding(id: number, model: string, vector: Float32Array): Promise<void>;
  /**
   * `setEmbedding` for many facts in one transaction; ids no longer stored, and entries whose
   * `of` no longer matches the fact's text, are skipped.
   */
  setEmbeddings(entries: readonly VectorEntry[]): Promise<void>;
  /**
   * Nearest facts to `vector` among those embedded with `model`, nearest first, by cosine
   * distance. May be approximate: it misses a true neighbour rarely (recall@10 ≥ 0.95).
   */
  nearest(vector: Float32Array, model: string, limit: number): Promise<VectorHit[]>;

  getSummary(): Promise<MemorySummary>;
  /**
   * Stores the summary as written from `basedOnRevision` (default: the facts' current revision),
   * unless the stored one was written from a later revision: then it is kept.
   */
  setSummary(text: string, options?: { basedOnRevision?: number }): Promise<void>;
  /** Grows with every change to the facts. */
  factsRevision(): Promise<number>;

  /**
   * Runs `mine` while no other process mines `sessionId`, or answers `{ claimed: false }` without
   * running it while another one does. A store only one process uses (SQLite) leaves it out.
   */
  exclusively?<T>(
    sessionId: string,
    mine: () => Promise<T>,
  ): Promise<{ claimed: true; value: T } | { claimed: false }>;

  getSessionState(sessionId: string): Promise<SessionMemoryState | undefined>;
  listSessionStates(): Promise<SessionMemoryState[]>;
  setSessionState(state: SessionMemoryState): Promise<void>;
}

/** A field was empty or too long; the message says which. (REST: 400.) */
export class MemoryValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryValidationError';
  }
}

/** An edit would give a fact the (category, key) of another one. (REST: 409.) */
export class MemoryConflictError extends Error {
  constructor(
    readonly category: string,
    readonly key: string,
    readonly existingId: number,
  ) {
    super(`Another fact (id ${existingId}) already uses category "${category}" and key "${key}".`);
    this.name = 'MemoryConflictError';
  }
}
