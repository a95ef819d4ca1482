/**
 * The LLM backend contract (docs/architecture.md#llm-backends). Backends speak their wire
 * format (Ollama NDJSON, OpenAI-compatible SSE) and hand the agent one stream of `LlmChunk`s.
 *
 * Contract of `streamComplete`: it never throws and never rejects. Every failure — connection
 * refused, HTTP error, malformed stream, timeout — ends the stream with one `done` chunk whose
 * `reason` is `error` and whose `error` says what happened in words a person can act on.
 * Cancellation through `signal` ends it with reason `aborted` and aborts the HTTP request, so
 * the model stops generating. Exactly one `done` chunk closes every stream.
 */

export type JsonSchema = Record<string, unknown>;

export interface ChatToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  /** Base64 images without a data: prefix. */
  images?: string[];
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  /** Tool name on tool results. */
  name?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface CompletionRequest {
  messages: ChatMessage[];
  /** Defaults to the backend's configured model. */
  model?: string;
  tools?: ToolSpec[];
  temperature?: number;
  /** Ask for reasoning where the backend supports it; defaults to the backend's setting. */
  think?: boolean;
  /** Upper bound on generated tokens, where the backend supports one. */
  maxTokens?: number;
  /**
   * Context window to use for this call, already clamped to what the model supports
   * (`ModelCapabilities.contextLength`); defaults to the backend's `contextWindow`.
   */
  contextWindow?: number;
  signal?: AbortSignal;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'aborted' | 'error';

export type LlmErrorCode =
  | 'unreachable' // connection refused, DNS failure
  | 'timeout' // no answer or no progress within the backend's time limits
  | 'http' // the server answered with an HTTP error status
  | 'auth' // 401/403: missing or wrong API key
  | 'model_not_found'
  | 'context_overflow'
  | 'malformed' // the stream could not be parsed or was cut off
  | 'unsupported'; // e.g. embeddings on a backend that has none

export interface LlmFailure {
  code: LlmErrorCode;
  /** What happened, which backend and URL, and what to do about it. */
  message: string;
  status?: number;
}

export type LlmChunk =
  | { type: 'thinking'; delta: string }
  | { type: 'text'; delta: string }
  /** One complete tool call (fragmented argument deltas are assembled by the backend). */
  | { type: 'tool_call'; call: ChatToolCall }
  | { type: 'done'; reason: FinishReason; usage?: TokenUsage; error?: LlmFailure };

export interface CompletionResult {
  content: string;
  thinking: string;
  toolCalls: ChatToolCall[];
  reason: FinishReason;
  usage?: TokenUsage;
}

export interface EmbeddingResult {
  model: string;
  vectors: number[][];
}

export interface HealthReport {
  ok: boolean;
  /** e.g. "ollama at http://localhost:11434: model gemma4:e2b-it-q8_0 is available". */
  detail: string;
  /** The models the server listed while it was checked, when the check read its list. */
  models?: string[];
}

/**
 * What a model can do, as its backend reports it (Ollama's `/api/show`, an OpenAI-compatible
 * `/models`, a GGUF file's metadata). A field the backend could not learn is `undefined`, and
 * Navi then assumes the model can (it offers tools, sends images) rather than hold it back.
 */
export interface ModelCapabilities {
  tools?: boolean;
  thinking?: boolean;
  vision?: boolean;
  /** The longest context the model was trained for, in tokens. */
  contextLength?: number;
  /** Where the answer came from, for `navi doctor` and logs (e.g. "ollama /api/show"). */
  source: string;
}

/** A model a backend can run right now (installed in Ollama, served by the server, on disk). */
export interface ModelListing {
  name: string;
  sizeBytes?: number;
}

export interface LlmBackend {
  /** Registry key: `ollama`, `openai` or `llamacpp`. */
  readonly id: string;
  readonly defaultModel: string;
  /** Context window in tokens assumed for this backend (OLLAMA_NUM_CTX, OPENAI_NUM_CTX). */
  readonly contextWindow: number;
  /** Human description naming the backend and where it lives, used in error messages. */
  describe(): string;
  streamComplete(request: CompletionRequest): AsyncIterable<LlmChunk>;
  /** Whole answer at once; rejects with `LlmError` on failure. */
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /** Present only when the backend can embed; rejects with `LlmError` on failure. */
  embed?(input: string[], options?: { model?: string; signal?: AbortSignal }): Promise<EmbeddingResult>;
  checkHealth(signal?: AbortSignal): Promise<HealthReport>;
  /**
   * What `model` can do. Never rejects: a backend that cannot tell returns only `source`
   * (saying why), and Navi assumes the model can do everything.
   */
  probe?(model: string, signal?: AbortSignal): Promise<ModelCapabilities>;
  /** The models this backend can run now; rejects with `LlmError` when it cannot be asked. */
  listModels?(signal?: AbortSignal): Promise<ModelListing[]>;
}

/** The error `complete()` and `embed()` reject with. */
export class LlmError extends Error {
  readonly code: LlmErrorCode;
  readonly status?: number;
  constructor(failure: LlmFailure) {
    super(failure.message);
    this.name = 'LlmError';
    this.code = failure.code;
    if (failure.status !== undefined) this.status = failure.status;
  }
  toFailure(): LlmFailure {
    return {
      code: this.code,
      message: this.message,
      ...(this.status !== undefined ? { status: this.status } : {}),
    };
  }
}
