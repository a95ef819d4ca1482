/**
 * Everything the server needs, assembled once at start-up by `createServices` (the composition
 * root) and handed to `buildApp`. Tests build the same services against temporary folders and a
 * fake LLM server.
 */
import type { Logger } from 'pino';
import type { AgentApi } from '../agent/types.js';
import type { ProfileRegistry } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import type { CapabilityCache } from '../llm/capabilities.js';
import type { LlamacppRuntime } from '../llm/llamacpp/runtime.js';
import type { ModelDownloads } from '../llm/models/downloads.js';
import type { BackendRegistry } from '../llm/registry.js';
import type { LlmBackend } from '../llm/types.js';
import type { McpManager } from '../mcp/manager.js';
import type { MemoryExtractor } from '../memory/extraction.js';
import type { HybridMemorySearch } from '../memory/search.js';
import type { MemoryStore } from '../memory/types.js';
import type { RecallScheduler } from '../recall/scheduler.js';
import type { StoreEngine, StoreReport } from '../store/open-stores.js';
import type { ConsentStore, FileStore, KvStore, SearchStore, SessionStore } from '../store/types.js';
import type { ToolExecutor } from '../tools/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { SecretMasker } from '../util/secret-masker.js';
import type { Vault } from '../vault/types.js';
import type { RunCluster } from './cluster/types.js';
import type { LlmSettingsService } from './llm-settings.js';

export interface NaviServices {
  settings: Settings;
  logger: Logger;
  sessions: SessionStore;
  kv: KvStore;
  files: FileStore;
  /** Pairing codes and paired clients: who holds the person's consent. */
  consent: ConsentStore;
  /** Search across chats: titles and the messages people read (`GET /search`). */
  search: SearchStore;
  /** Which engine holds the stores (SQLite or PostgreSQL), and its report for `navi doctor`. */
  storage?: { engine: StoreEngine; report(): Promise<StoreReport> };
  /** The other navi serve processes on the same PostgreSQL database, whose runs coordinate with this one's. */
  cluster?: RunCluster;
  profiles: ProfileRegistry;
  tools: ToolRegistry;
  executor: ToolExecutor;
  /**
   * Secret values hidden in tool results, tool events and (with `navi serve`'s logger) log
   * lines. Whatever reveals a secret at run time (the vault) registers it here first.
   */
  secrets: SecretMasker;
  /** The secrets vault (opened on first use), shared with the gnexus-creds server through its files. */
  vault: Vault;
  agent: AgentApi;
  /** The backend a profile uses (its `llm_backend`, else DEFAULT_LLM_BACKEND). */
  backendFor(profileId: string): LlmBackend;
  /** Reloads user tools and context providers; resolves to a report for the client. */
  reloadTools(): Promise<{
    loaded: string[];
    providers: string[];
    errors: { origin: string; error: string }[];
  }>;
  /** Long-term memory, when enabled (the REST routes under /memory need it). */
  memory?: { store: MemoryStore; search: HybridMemorySearch; extractor: MemoryExtractor };
  /**
   * Recalls: scheduling, listing, cancelling and skipping them, and firing them once the app
   * is ready (`start` with the run registry's runner).
   */
  recalls?: RecallScheduler;
  /** The MCP servers (status for doctor and /agents/mcp, reload). */
  mcp?: McpManager;
  /**
   * The LLM backends as configured now, and the LLM settings the client may change while Navi
   * runs (REST /llm/...; without it those routes are not served).
   */
  llm?: { backends: BackendRegistry; settings: LlmSettingsService };
  /** What each model can do, asked of its backend once (docs/local-models.md#what-a-model-can-do-capability-probe). */
  capabilities?: CapabilityCache;
  /** Model downloads for the llamacpp backend (`/llm/downloads`); closing cancels them. */
  modelDownloads?: ModelDownloads;
  /** The llama.cpp runtime of the llamacpp backend (`/llm/runtime`); closing stops an install and frees its models. */
  llamacppRuntime?: LlamacppRuntime;
  /** Called after a session is created: starts fact extraction from stale sessions in the background. */
  onSessionCreated?(sessionId: string): void;
  /**
   * Called once a session is deleted: ends what still runs for it (its background processes) and
   * removes what still leads to it (an OpenAI client's conversation key).
   */
  onSessionDeleted?(sessionId: string): Promise<void>;
  /** Stops background work and closes stores, MCP servers and child processes. */
  close(): Promise<void>;
}
