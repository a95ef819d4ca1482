/**
 * The LLM backends, built at start-up from settings and rebuilt when the client saves new ones:
 * the Ollama and OpenAI-compatible servers, and `llamacpp`, a model run inside Navi (building it
 * loads nothing; its runtime is imported on its first call).
 */
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { FetchLike } from './http.js';
import { LlamacppBackend } from './llamacpp/backend.js';
import { LlamacppRuntime } from './llamacpp/runtime.js';
import { OllamaBackend } from './ollama.js';
import { OpenAiBackend } from './openai.js';
import type { LlmBackend } from './types.js';

export interface BackendRegistry {
  /** The backend registered under `id`; throws an Error saying what to configure instead. */
  get(id: string): LlmBackend;
  has(id: string): boolean;
  list(): LlmBackend[];
  /** The DEFAULT_LLM_BACKEND backend; throws like `get` when it is not available. */
  default(): LlmBackend;
  /** The id of the default backend (it can change while Navi runs). */
  defaultId(): string;
  /** Adds or replaces a backend (e.g. an embedded one loaded later). */
  register(backend: LlmBackend): void;
  /**
   * Rebuilds every backend from `settings` (the client saved new LLM settings): calls made
   * after it use the new servers, models and default; a call already streaming finishes on
   * the backend it started with.
   */
  reconfigure(settings: BackendSettings): void;
}

export type BackendSettings = Pick<
  Settings,
  | 'DEFAULT_LLM_BACKEND'
  | 'OLLAMA_HOST'
  | 'OLLAMA_DEFAULT_MODEL'
  | 'OLLAMA_NUM_CTX'
  | 'OLLAMA_THINK'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'OPENAI_MODEL'
  | 'OPENAI_NUM_CTX'
  | 'LLAMACPP_MODEL_PATH'
  | 'NAVI_MODELS_DIR'
  | 'LLAMACPP_RUNTIME_DIR'
  | 'LLAMACPP_NUM_CTX'
  | 'LLAMACPP_THREADS'
  | 'LLAMACPP_GPU'
  | 'LLM_CONNECT_TIMEOUT_MS'
  | 'LLM_IDLE_TIMEOUT_MS'
>;

export interface BackendDeps {
  fetch?: FetchLike;
  logger?: Logger;
  /** The llama.cpp runtime shared with the rest of Navi; one for LLAMACPP_RUNTIME_DIR otherwise. */
  llamacppRuntime?: LlamacppRuntime;
}

export function createBackendRegistry(initial: BackendSettings, deps: BackendDeps = {}): BackendRegistry {
  let settings = initial;
  const backends = new Map<string, LlmBackend>();
  const runtime = deps.llamacppRuntime ?? new LlamacppRuntime(initial.LLAMACPP_RUNTIME_DIR, deps.logger);
  let llamacpp: { key: string; backend: LlamacppBackend } | undefined;
  const add = (b: LlmBackend) => backends.set(b.id, b);
  const build = () => {
    const shared = {
      connectTimeoutMs: settings.LLM_CONNECT_TIMEOUT_MS,
      idleTimeoutMs: settings.LLM_IDLE_TIMEOUT_MS,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.logger ? { logger: deps.logger } : {}),
    };
    backends.clear();
    add(
      new OllamaBackend({
        ...shared,
        baseUrl: settings.OLLAMA_HOST,
        model: settings.OLLAMA_DEFAULT_MODEL,
        numCtx: settings.OLLAMA_NUM_CTX,
        think: settings.OLLAMA_THINK,
      }),
    );
    add(
      new OpenAiBackend({
        ...shared,
        baseUrl: settings.OPENAI_BASE_URL,
        apiKey: settings.OPENAI_API_KEY,
        model: settings.OPENAI_MODEL,
        numCtx: settings.OPENAI_NUM_CTX,
      }),
    );
    const local = {
      modelsDir: settings.NAVI_MODELS_DIR,
      modelPath: settings.LLAMACPP_MODEL_PATH,
      numCtx: settings.LLAMACPP_NUM_CTX,
      threads: settings.LLAMACPP_THREADS,
      gpu: settings.LLAMACPP_GPU,
    };
    const key = JSON.stringify(local);
    // A loaded model is kept while its settings stay; a replaced backend frees it once its calls end.
    if (llamacpp?.key !== key) {
      llamacpp?.backend.dispose().catch(() => undefined);
      llamacpp = {
        key,
        backend: new LlamacppBackend({ ...local, runtime, ...(deps.logger ? { logger: deps.logger } : {}) }),
      };
    }
    add(llamacpp.backend);
  };
  build();

  const get = (id: string): LlmBackend => {
    const found = backends.get(id);
    if (found) return found;
    throw new Error(`Unknown LLM backend "${id}": choose one of ${[...backends.keys()].join(', ')}.`);
  };

  return {
    get,
    has: (id) => backends.has(id),
    list: () => [...backends.values()],
    default: () => get(settings.DEFAULT_LLM_BACKEND),
    defaultId: () => settings.DEFAULT_LLM_BACKEND,
    register: add,
    reconfigure: (next) => {
      settings = next;
      build();
    },
  };
}
