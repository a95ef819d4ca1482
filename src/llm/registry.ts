/**
 * The LLM backends, built once at start-up from settings. `llamacpp` (embedded node-llama-cpp)
 * is not part of this build: asking for it explains how to use ollama or openai instead.
 */
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { FetchLike } from './http.js';
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
  | 'LLM_CONNECT_TIMEOUT_MS'
  | 'LLM_IDLE_TIMEOUT_MS'
>;

export interface BackendDeps {
  fetch?: FetchLike;
  logger?: Logger;
}

export function createBackendRegistry(initial: BackendSettings, deps: BackendDeps = {}): BackendRegistry {
  let settings = initial;
  const backends = new Map<string, LlmBackend>();
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
  };
  build();

  const get = (id: string): LlmBackend => {
    const found = backends.get(id);
    if (found) return found;
    if (id === 'llamacpp') {
      throw new Error(
        `The llamacpp backend (embedded node-llama-cpp, model file ${settings.LLAMACPP_MODEL_PATH}) is not available in this build. ` +
          `Use a server instead: run Ollama and set DEFAULT_LLM_BACKEND=ollama (OLLAMA_HOST=${settings.OLLAMA_HOST}, ` +
          `then \`ollama pull ${settings.OLLAMA_DEFAULT_MODEL}\`), or set DEFAULT_LLM_BACKEND=openai with OPENAI_BASE_URL ` +
          `and OPENAI_API_KEY for any OpenAI-compatible server.`,
      );
    }
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
