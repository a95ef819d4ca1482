/**
 * Long-term memory (DESIGN §11), wired in one call for the server: the store on the SQLite
 * connection, hybrid search, the background extractor and the system-prompt block.
 *
 * REST handlers use `store` (list with paging, get, update, delete, getSummary) and
 * `search.search(query, {limit})`; `MemoryValidationError` maps to 400, `MemoryConflictError`
 * to 409, an unknown id (undefined / false) to 404.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { LlmBackend } from '../llm/types.js';
import type { SessionStore } from '../store/types.js';
import { MemoryExtractor } from './extraction.js';
import { SqliteMemoryStore, type VectorEngine } from './memory-store.js';
import { HybridMemorySearch } from './search.js';
import type { MemoryStore } from './types.js';

export {
  type ExtractionReport,
  MEMORY_HEADING,
  MemoryExtractor,
  type MemoryExtractorDeps,
  memoryBlock,
} from './extraction.js';
export { SqliteMemoryStore, type SqliteMemoryStoreOptions, type VectorEngine } from './memory-store.js';
export { parseFacts } from './parse-facts.js';
export {
  factText,
  HybridMemorySearch,
  type HybridMemorySearchDeps,
  MAX_VECTOR_DISTANCE,
  type MemorySearchHit,
  type MemorySearchResponse,
  RRF_K,
  reciprocalRankFusion,
} from './search.js';
export * from './types.js';

export interface MemoryDeps {
  /** The open SQLite connection (`createSqliteStores(file).db`), migrated to version 2 or later. */
  db: Database;
  sessions: SessionStore;
  /** The backend for extraction, summaries and embeddings; a function may throw when none is usable. */
  backend: () => LlmBackend;
  /** MEMORY_EXTRACTION_IDLE_MINUTES. */
  idleMinutes: number;
  logger: Logger;
  /** Model for extraction and summaries (default: the backend's default model). */
  model?: string;
  /** Model for embeddings (default: the backend's own choice). */
  embeddingModel?: string;
  now?: () => Date;
  vectorEngine?: VectorEngine | 'auto';
}

export interface Memory {
  store: MemoryStore;
  search: HybridMemorySearch;
  extractor: MemoryExtractor;
  /** For AgentDeps.memoryBlock: `## What I remember about the user` + summary, or null. */
  memoryBlock(): Promise<string | null>;
}

export function createMemory(deps: MemoryDeps): Memory {
  const now = deps.now ?? (() => new Date());
  const store = new SqliteMemoryStore(deps.db, {
    now,
    ...(deps.vectorEngine ? { vectorEngine: deps.vectorEngine } : {}),
  });
  const logger = deps.logger.child({ component: 'memory' });
  const search = new HybridMemorySearch({
    store,
    backend: deps.backend,
    logger,
    now,
    ...(deps.embeddingModel ? { embeddingModel: deps.embeddingModel } : {}),
  });
  const extractor = new MemoryExtractor({
    memory: store,
    sessions: deps.sessions,
    backend: deps.backend,
    idleMinutes: deps.idleMinutes,
    logger,
    now,
    ...(deps.model ? { model: deps.model } : {}),
  });
  return { store, search, extractor, memoryBlock: () => extractor.memoryBlock() };
}
