/**
 * OpenAI-compatible chat completions (`POST /chat/completions`, SSE stream): text and reasoning
 * deltas, tool-call deltas assembled by index, images as content parts, usage from the final
 * chunk. Works with OpenAI, llama.cpp's server, vLLM, LM Studio, Ollama's /v1 and the like.
 */
import type { Logger } from 'pino';
import { alternateRoles } from './alternation.js';
import { probeFailure } from './capabilities.js';
import { cutFailure, httpFailure, type ServerInfo } from './failures.js';
import {
  CallerAbort,
  type FetchLike,
  generationLimits,
  type HttpCall,
  isVectorList,
  openHttp,
  readJson,
  rethrowAbort,
} from './http.js';
import { excerpt, StreamParseError } from './ndjson.js';
import { capabilitiesFromModels, listingsFromModels } from './openai-models.js';
import { parseSse } from './sse.js';
import { failureOf, foldStream, guardStream } from './stream-guard.js';
import { functionTools, newToolCallId, parseToolArguments } from './tool-args.js';
import {
  type ChatMessage,
  type CompletionRequest,
  type CompletionResult,
  type EmbeddingResult,
  type FinishReason,
  type HealthReport,
  type LlmBackend,
  type LlmChunk,
  LlmError,
  type ModelCapabilities,
  type ModelListing,
  type TokenUsage,
} from './types.js';

export interface OpenAiBackendOptions {
  /** OPENAI_BASE_URL, e.g. https://api.openai.com/v1, without a trailing slash. */
  baseUrl: string;
  /** OPENAI_API_KEY; sent as a Bearer token when not empty. */
  apiKey?: string;
  /** OPENAI_MODEL. */
  model: string;
  /** OPENAI_NUM_CTX. */
  numCtx: number;
  /** LLM_CONNECT_TIMEOUT_MS: the limit for response headers and for health checks. */
  connectTimeoutMs: number;
  /** LLM_IDLE_TIMEOUT_MS: longest silence while an answer streams. */
  idleTimeoutMs: number;
  /** Model for `embed()` when the call names none: text-embedding-3-small on api.openai.com, else `model`. */
  embeddingModel?: string;
  fetch?: FetchLike;
  logger?: Logger;
}

interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface StreamChunk {
  choices?: {
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ToolCallDelta[];
    };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: unknown;
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

export class OpenAiBackend implements LlmBackend {
  readonly id = 'openai';
  readonly defaultModel: string;
  readonly contextWindow: number;
  private readonly server: ServerInfo;
  private readonly fetch: FetchLike;

  constructor(private readonly options: OpenAiBackendOptions) {
    this.defaultModel = options.model;
    this.contextWindow = options.numCtx;
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.server = {
      label: 'OpenAI-compatible server',
      baseUrl: options.baseUrl,
      hints: {
        unreachable:
          'Start the server, or set OPENAI_BASE_URL / DEFAULT_LLM_BACKEND=ollama with OLLAMA_HOST.',
        auth: options.apiKey
          ? 'Check OPENAI_API_KEY: the server does not accept it.'
          : 'Set OPENAI_API_KEY: the server wants an API key.',
        modelNotFound: () => 'Set OPENAI_MODEL to a model the server offers (GET /models lists them).',
        notFound: 'Check OPENAI_BASE_URL: it usually ends in /v1.',
        contextOverflow:
          'Start a new session, let the context be compressed, or lower OPENAI_NUM_CTX to what the model takes.',
      },
    };
  }

  describe(): string {
    return `openai at ${this.options.baseUrl} (model ${this.defaultModel})`;
  }

  streamComplete(request: CompletionRequest): AsyncIterable<LlmChunk> {
    return guardStream(this.server, request.signal, () => this.produce(request));
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return foldStream(this.streamComplete(request), this.describe());
  }

  private async *produce(request: CompletionRequest): AsyncGenerator<LlmChunk> {
    const model = request.model ?? this.defaultModel;
    const body: Record<string, unknown> = {
      model,
      messages: alternateRoles(request.messages).map(toOpenAiMessage),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.tools && request.tools.length > 0) {
      body.tools = functionTools(request.tools);
    }
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    const response = await openHttp(
      this.call({ path: '/chat/completions', method: 'POST', body, model, signal: request.signal }),
    );

    const calls = new Map<number, PendingCall>();
    let finish: string | undefined;
    let usage: TokenUsage | undefined;
    let sawDone = false;
    let emitted = 0;
    const flushCalls = function* (this: OpenAiBackend): Generator<LlmChunk> {
      for (const [, pending] of [...calls.entries()].sort(([a], [b]) => a - b)) {
        if (!pending.name) {
          this.options.logger?.warn({ id: pending.id }, 'openai: tool call without a name dropped');
          continue;
        }
        const parsed = parseToolArguments(pending.args);
        if (parsed.problem) {
          this.options.logger?.warn(
            { tool: pending.name, problem: parsed.problem },
            'openai: kept raw tool arguments',
          );
        }
        emitted++;
        yield {
          type: 'tool_call',
          call: { id: pending.id, name: pending.name, arguments: parsed.arguments },
        };
      }
      calls.clear();
    }.bind(this);

    try {
      for await (const event of parseSse(response.body)) {
        // Lines already buffered must not outrun an abort that came while the consumer held a chunk.
        if (request.signal?.aborted) throw new CallerAbort();
        // Servers end with [DONE]; reading on to the end of the body lets the connection be reused.
        if (sawDone) continue;
        if (event.data.trim() === '[DONE]') {
          sawDone = true;
          continue;
        }
        let chunk: StreamChunk;
        try {
          chunk = JSON.parse(event.data) as StreamChunk;
        } catch {
          throw new StreamParseError('an event of the stream is not valid JSON', excerpt(event.data));
        }
        if (chunk.error !== undefined && chunk.error !== null) {
          throw new LlmError(httpFailure(this.server, model, undefined, JSON.stringify(chunk)));
        }
        if (chunk.usage) {
          usage = {
            promptTokens: chunk.usage.prompt_tokens ?? 0,
            completionTokens: chunk.usage.completion_tokens ?? 0,
          };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning !== '') yield { type: 'thinking', delta: reasoning };
        if (typeof delta.content === 'string' && delta.content !== '')
          yield { type: 'text', delta: delta.content };
        for (const [position, part] of (delta.tool_calls ?? []).entries()) {
          const index = part.index ?? position;
          let pending = calls.get(index);
          if (!pending) {
            pending = { id: '', name: '', args: '' };
            calls.set(index, pending);
          }
          if (part.id) pending.id = part.id;
          if (part.function?.name && !pending.name) pending.name = part.function.name;
          if (part.function?.arguments) pending.args += part.function.arguments;
        }
        if (choice.finish_reason) {
          finish = choice.finish_reason;
          for (const pending of calls.values()) if (!pending.id) pending.id = newToolCallId();
          yield* flushCalls();
        }
      }
    } catch (error) {
      // After [DONE] the answer is whole; a connection dropped while draining does not spoil it.
      if (!sawDone || error instanceof CallerAbort) throw error;
    }
    if (!sawDone && finish === undefined)
      throw new LlmError(cutFailure(this.server, 'no finish_reason and no [DONE]'));
    for (const pending of calls.values()) if (!pending.id) pending.id = newToolCallId();
    yield* flushCalls();
    const reason: FinishReason = finish === 'length' ? 'length' : emitted > 0 ? 'tool_calls' : 'stop';
    yield { type: 'done', reason, ...(usage ? { usage } : {}) };
  }

  private call(
    parts: Pick<HttpCall, 'path' | 'method' | 'body' | 'model' | 'signal'>,
    health = false,
  ): HttpCall {
    const connect = { ms: this.options.connectTimeoutMs, setting: 'LLM_CONNECT_TIMEOUT_MS' };
    return {
      ...parts,
      fetch: this.fetch,
      server: this.server,
      headers: this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {},
      ...(health
        ? { headersTimeout: connect, idleTimeout: connect }
        : generationLimits(this.options.connectTimeoutMs, this.options.idleTimeoutMs)),
    };
  }

  async embed(
    input: string[],
    options: { model?: string; signal?: AbortSignal } = {},
  ): Promise<EmbeddingResult> {
    const model = options.model ?? this.options.embeddingModel ?? defaultEmbeddingModel(this.options);
    const parsed = await readJson(
      this.call({
        path: '/embeddings',
        method: 'POST',
        body: { model, input },
        model,
        signal: options.signal,
      }),
    ).catch(rethrowAbort(options.signal));
    const data = (parsed as { data?: { embedding?: unknown; index?: number }[] }).data;
    const vectors = Array.isArray(data)
      ? [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding)
      : undefined;
    if (!isVectorList(vectors, input.length)) {
      throw new LlmError({
        code: 'malformed',
        message: `The ${this.server.label} at ${this.options.baseUrl} answered /embeddings without one vector per input. Check that model "${model}" is an embedding model.`,
      });
    }
    return { model, vectors };
  }

  /**
   * OpenAI's own API without a key: nobody configured this backend, so it is not asked at all
   * (the setup screen polls every backend's state, and Navi reaches no server it was not
   * pointed at). The sentence says what to set.
   */
  private unconfigured(): string | undefined {
    if (this.options.apiKey) return undefined;
    try {
      if (new URL(this.options.baseUrl).hostname !== 'api.openai.com') return undefined;
    } catch {
      return undefined;
    }
    return `openai at ${this.options.baseUrl}: not configured; set OPENAI_API_KEY, or OPENAI_BASE_URL for another OpenAI-compatible server`;
  }

  /** `GET /models`: whatever the server says there about `model` (see openai-models.ts). */
  async probe(model: string, signal?: AbortSignal): Promise<ModelCapabilities> {
    const source = 'openai /models';
    const unconfigured = this.unconfigured();
    if (unconfigured) return { source: `${source}: ${unconfigured}` };
    try {
      const parsed = await readJson(this.call({ path: '/models', method: 'GET', model, signal }, true));
      return capabilitiesFromModels(parsed, model, source);
    } catch (error) {
      return probeFailure(source, this.server, error);
    }
  }

  /** `GET /models`: the models the server offers, without embedding models where it marks them. */
  async listModels(signal?: AbortSignal): Promise<ModelListing[]> {
    const unconfigured = this.unconfigured();
    if (unconfigured) throw new LlmError({ code: 'auth', message: unconfigured });
    const parsed = await readJson(
      this.call({ path: '/models', method: 'GET', model: this.defaultModel, signal }, true),
    ).catch(rethrowAbort(signal));
    const listed = listingsFromModels(parsed);
    if (!listed) {
      throw new LlmError({
        code: 'malformed',
        message: `The ${this.server.label} at ${this.options.baseUrl} answered /models without a list of models. Check OPENAI_BASE_URL: it usually ends in /v1.`,
      });
    }
    return listed;
  }

  async checkHealth(signal?: AbortSignal): Promise<HealthReport> {
    const prefix = `openai at ${this.options.baseUrl}`;
    const unconfigured = this.unconfigured();
    if (unconfigured) return { ok: false, detail: unconfigured };
    try {
      const parsed = await readJson(
        this.call({ path: '/models', method: 'GET', model: this.defaultModel, signal }, true),
      );
      const data = (parsed as { data?: { id?: unknown }[] }).data ?? [];
      const ids = data.map((m) => m.id).filter((id): id is string => typeof id === 'string');
      const wanted = this.defaultModel;
      // Many compatible servers list a file name yet answer to any model name, so absence is only a note.
      const note = ids.includes(wanted)
        ? `model ${wanted} is available`
        : `reachable; model ${wanted} is not in its /models list (${ids.slice(0, 8).join(', ') || 'empty'}), the server may still accept it`;
      return { ok: true, detail: `${prefix}: ${note}` };
    } catch (error) {
      if (error instanceof CallerAbort) return { ok: false, detail: `${prefix}: health check aborted` };
      return { ok: false, detail: failureOf(this.server, error).message };
    }
  }
}

function defaultEmbeddingModel(options: OpenAiBackendOptions): string {
  try {
    if (new URL(options.baseUrl).hostname === 'api.openai.com') return 'text-embedding-3-small';
  } catch {
    // Settings validated the URL; fall through to the chat model.
  }
  return options.model;
}

function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.tool_call_id ?? '', content: message.content ?? '' };
  }
  if (message.role === 'assistant') {
    const out: Record<string, unknown> = { role: 'assistant', content: message.content };
    if (message.tool_calls && message.tool_calls.length > 0) {
      out.tool_calls = message.tool_calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      }));
    } else if (message.content === null) out.content = '';
    return out;
  }
  // The chat API takes image parts only in user messages.
  if (message.role === 'user' && message.images && message.images.length > 0) {
    const parts: Record<string, unknown>[] = [];
    if (message.content) parts.push({ type: 'text', text: message.content });
    for (const image of message.images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${imageMime(image)};base64,${image}` } });
    }
    return { role: 'user', content: parts };
  }
  return { role: message.role, content: message.content ?? '' };
}

/** Guesses the MIME type from the first base64 characters (the file's magic bytes). */
export function imageMime(base64: string): string {
  if (base64.startsWith('iVBOR')) return 'image/png';
  if (base64.startsWith('/9j/')) return 'image/jpeg';
  if (base64.startsWith('R0lGOD')) return 'image/gif';
  if (base64.startsWith('UklGR')) return 'image/webp';
  return 'image/png';
}
