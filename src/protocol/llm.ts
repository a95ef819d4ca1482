/**
 * REST bodies of the models and backends routes, `/llm/...` (docs/local-models.md): which
 * backends are set up and reachable, their models, the settings a client may change, local
 * model downloads and the embedded llama.cpp runtime.
 */

export type LlmBackendId = 'ollama' | 'openai' | 'llamacpp';

/** What a model can do; `null` where its backend could not tell (Navi then assumes it can). */
export interface ModelCapabilitiesInfo {
  tools: boolean | null;
  thinking: boolean | null;
  vision: boolean | null;
  context_length: number | null;
  /** Where the answer came from ("ollama /api/show", "GGUF metadata"…). */
  source: string;
}

/** `GET /llm/models`: one model of one configured backend, for the model picker. */
export interface LlmModelOption {
  backend: LlmBackendId;
  model: string;
  size_bytes?: number;
  /** The backend's default model. */
  is_default: boolean;
}

export interface LlmModelList {
  models: LlmModelOption[];
  /** Backends that could not list their models, and why (the picker shows it). */
  problems: { backend: LlmBackendId; message: string }[];
}

export interface LlmBackendStatus {
  id: LlmBackendId;
  /** It answered (a server) or its runtime and model file are in place (llamacpp). */
  ready: boolean;
  /** One sentence: where it is, and what is wrong when it is not ready. */
  detail: string;
  default_model: string;
}

/** `GET /llm/status`: what the setup screen and the header need to know. */
export interface LlmStatus {
  default_backend: LlmBackendId;
  default_model: string;
  /** True when the default backend is not ready: the client shows the setup screen. */
  needs_setup: boolean;
  backends: LlmBackendStatus[];
  /** An Ollama answering on its default port, with its installed models, when one does. */
  ollama_detected: { url: string; models: string[] } | null;
  /** Capabilities of the default model, when it could be asked. */
  capabilities: ModelCapabilitiesInfo | null;
}

/**
 * The LLM settings the client may save (`GET`/`PUT /llm/settings`). They go to the settings file
 * Navi owns; the environment and `.env` win over it, and what they fix is listed in `locked`.
 */
export interface LlmSettings {
  DEFAULT_LLM_BACKEND: LlmBackendId;
  OLLAMA_HOST: string;
  OLLAMA_DEFAULT_MODEL: string;
  OPENAI_BASE_URL: string;
  /** Never sent back: `GET` answers with `""` and `api_key_set` says whether one is stored. */
  OPENAI_API_KEY: string;
  OPENAI_MODEL: string;
  LLAMACPP_MODEL_PATH: string;
}

export type LlmSettingName = keyof LlmSettings;

export interface LlmSettingsView {
  values: LlmSettings;
  api_key_set: boolean;
  /** Settings the environment or `.env` fixes: a `PUT` that changes one answers 409. */
  locked: LlmSettingName[];
}

/**
 * `PUT /llm/settings`: the settings to change; the others stay. `null` removes a saved value
 * (the default applies again); an empty `OPENAI_API_KEY` keeps the saved key, since `GET`
 * never sends it back.
 */
export type LlmSettingsUpdate = { [K in LlmSettingName]?: LlmSettings[K] | null };

/** `POST /llm/test`: try a server before saving it. */
export interface ConnectionTestRequest {
  backend: 'ollama' | 'openai';
  base_url: string;
  api_key?: string;
  model?: string;
}

export interface ConnectionTestResult {
  ok: boolean;
  /** The step that failed (or the last that passed): connect, auth, list models, find the model. */
  step: 'connect' | 'auth' | 'models' | 'model';
  /** What happened, in words a person can act on. */
  message: string;
  /** The models the server offers, when it listed them. */
  models?: string[];
}

/** A model Navi recommends for the llamacpp backend, downloadable by its alias. */
export interface RecommendedModel {
  alias: string;
  name: string;
  /** The GGUF file's size. */
  size_bytes: number;
  context_length: number;
  /** What it is good at: "tool calling", "many languages", "fast on a CPU"… */
  good_at: string[];
  /** Where it comes from (`hf:org/repo/file.gguf`). */
  source: string;
}

/** A GGUF file in the models folder. */
export interface LocalModel {
  /** The file name, which is also how `LLAMACPP_MODEL_PATH` and `navi model rm` name it. */
  name: string;
  size_bytes: number;
  /** The recommended model it is, when it is one. */
  alias?: string;
}

export type DownloadState = 'running' | 'done' | 'failed' | 'cancelled';

/** A model download (`POST /llm/downloads`), as its progress is polled. */
export interface ModelDownload {
  id: string;
  /** What was asked for: an alias, `hf:org/repo/file.gguf` or an https URL. */
  source: string;
  file_name: string;
  state: DownloadState;
  bytes: number;
  /** Null while the server has not said how large the file is. */
  total_bytes: number | null;
  /** Why it failed, when it did. */
  error?: string;
}

/** `GET /llm/local`: what the setup screen offers for a model without a server. */
export interface LocalModelsView {
  recommended: RecommendedModel[];
  installed: LocalModel[];
  downloads: ModelDownload[];
  runtime: LlamacppRuntimeStatus;
}

/** The node-llama-cpp runtime, installed on demand (`navi llamacpp install`). */
export interface LlamacppRuntimeStatus {
  installed: boolean;
  version: string | null;
  /** An install is running (`POST /llm/runtime`). */
  installing: boolean;
  /** The install's last lines of output, and its error when it failed. */
  log: string[];
  error: string | null;
}
