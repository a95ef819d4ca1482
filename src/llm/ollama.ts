/**
 * Ollama's native chat API (`POST /api/chat`, NDJSON stream): reasoning through `think`, tools,
 * images, `num_ctx`. Embeddings via `/api/embed`, health via `/api/tags`.
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
import { parseNdjson } from './ndjson.js';
import { capabilitiesFromShow, listingsFromTags } from './ollama-models.js';
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
} from './types.js';

export interface OllamaBackendOptions {
  /** OLLAMA_HOST, without a trailing slash. */
  baseUrl: string;
  /** OLLAMA_DEFAULT_MODEL. */
  model: string;
  /** OLLAMA_NUM_CTX, sent as `options.num_ctx` on every call that names no `contextWindow`. */
  numCtx: number;
  /** OLLAMA_THINK: ask for reasoning unless a request says otherwise. */
  think: boolean;
  /** LLM_CONNECT_TIMEOUT_MS: health checks must answer within it. */
  connectTimeoutMs: number;
  /** LLM_IDLE_TIMEOUT_MS: longest silence while waiting for or streaming an answer. */
  idleTimeoutMs: number;
  /** Model for `embed()` when the call names none; defaults to `model`. */
  embeddingModel?: string;
  fetch?: FetchLike;
  logger?: Logger;
}

interface OllamaToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

interface OllamaLine {
  message?: { content?: string; thinking?: string; tool_calls?: OllamaToolCall[] };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}

export class OllamaBackend implements LlmBackend {
  readonly id = 'ollama';
  readonly defaultModel: string;
  readonly contextWindow: number;
  private readonly server: ServerInfo;
  private readonly fetch: FetchLike;
  /** Models that rejected `think: true`; asked without it from then on. */
  private readonly cannotThink = new Set<string>();

  constructor(private readonly options: OllamaBackendOptions) {
    this.defaultModel = options.model;
    this.contextWindow = options.numCtx;
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.server = {
      label: 'Ollama server',
      baseUrl: options.baseUrl,
      hints: {
        unreachable:
          'Start Ollama (run ollama serve), or set OLLAMA_HOST / DEFAULT_LLM_BACKEND=openai with OPENAI_BASE_URL.',
        auth: 'A proxy in front of Ollama wants credentials; check OLLAMA_HOST.',
        modelNotFound: (model) =>
          `Run ollama pull ${model}, or set OLLAMA_DEFAULT_MODEL to a model it has (ollama list shows them).`,
        notFound: 'Check that OLLAMA_HOST points at an Ollama server (no /v1 or /api suffix).',
        contextOverflow: 'Start a new session, let the context be compressed, or raise OLLAMA_NUM_CTX.',
      },
    };
  }

  describe(): string {
    return `ollama at ${this.options.baseUrl} (model ${this.defaultModel})`;
  }

  streamComplete(request: CompletionRequest): AsyncIterable<LlmChunk> {
    return guardStream(this.server, request.signal, () => this.produce(request));
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return foldStream(this.streamComplete(request), this.describe());
  }

  private async *produce(request: CompletionRequest): AsyncGenerator<LlmChunk> {
    const model = request.model ?? this.defaultModel;
    const think = (request.think ?? this.options.think) && !this.cannotThink.has(model);
    let response: Awaited<ReturnType<typeof openHttp>>;
    try {
      response = await openHttp(this.chatCall(request, model, think));
    } catch (error) {
      // Ollama refuses `think` for models without reasoning; they can still answer without it.
      if (
        !(
          think &&
          error instanceof LlmError &&
          error.status === 400 &&
          /support thinking/i.test(error.message)
        )
      ) {
        throw error;
      }
      this.cannotThink.add(model);
      this.options.logger?.info({ model }, 'ollama: model does not support thinking; asking without it');
      response = await openHttp(this.chatCall(request, model, false));
    }

    let sawToolCall = false;
    let final: LlmChunk | undefined;
    try {
      for await (const value of parseNdjson(response.body)) {
        // Lines already buffered must not outrun an abort that came while the consumer held a chunk.
        if (request.signal?.aborted) throw new CallerAbort();
        // Reading on to the end of the body after `done` lets the connection be reused.
        if (final) continue;
        const line = (value && typeof value === 'object' ? value : {}) as OllamaLine;
        if (typeof line.error === 'string')
          throw new LlmError(httpFailure(this.server, model, undefined, line.error));
        const message = line.message;
        if (message?.thinking) yield { type: 'thinking', delta: message.thinking };
        if (message?.content) yield { type: 'text', delta: message.content };
        for (const call of message?.tool_calls ?? []) {
          const name = call.function?.name;
          if (!name) continue;
          const parsed = parseToolArguments(call.function?.arguments);
          if (parsed.problem)
            this.options.logger?.warn({ tool: name, problem: parsed.problem }, 'ollama: odd tool arguments');
          sawToolCall = true;
          yield {
            type: 'tool_call',
            call: { id: call.id || newToolCallId(), name, arguments: parsed.arguments },
          };
        }
        if (line.done === true) final = doneChunk(line, sawToolCall);
      }
    } catch (error) {
      // Once `done` arrived the answer is whole; a connection dropped while draining does not spoil it.
      if (!final || error instanceof CallerAbort) throw error;
    }
    if (!final) throw new LlmError(cutFailure(this.server, 'no final "done" line'));
    yield final;
  }

  private chatCall(request: CompletionRequest, model: string, think: boolean): HttpCall {
    const options: Record<string, number> = { num_ctx: request.contextWindow ?? this.options.numCtx };
    if (request.temperature !== undefined) options.temperature = request.temperature;
    if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
    const body: Record<string, unknown> = {
      model,
      messages: alternateRoles(request.messages).map(toOllamaMessage),
      stream: true,
      think,
      options,
    };
    if (request.tools && request.tools.length > 0) {
      body.tools = functionTools(request.tools);
    }
    return {
      fetch: this.fetch,
      server: this.server,
      model,
      path: '/api/chat',
      method: 'POST',
      body,
      signal: request.signal,
      ...generationLimits(this.options.connectTimeoutMs, this.options.idleTimeoutMs),
    };
  }

  async embed(
    input: string[],
    options: { model?: string; signal?: AbortSignal } = {},
  ): Promise<EmbeddingResult> {
    const model = options.model ?? this.options.embeddingModel ?? this.defaultModel;
    const parsed = await readJson({
      fetch: this.fetch,
      server: this.server,
      model,
      path: '/api/embed',
      method: 'POST',
      body: { model, input },
      signal: options.signal,
      ...generationLimits(this.options.connectTimeoutMs, this.options.idleTimeoutMs),
    }).catch(rethrowAbort(options.signal));
    const embeddings = (parsed as { embeddings?: unknown }).embeddings;
    if (!isVectorList(embeddings, input.length)) {
      throw new LlmError({
        code: 'malformed',
        message: `The ${this.server.label} at ${this.server.baseUrl} answered /api/embed without one vector per input. Check that model "${model}" can embed.`,
      });
    }
    return { model, vectors: embeddings };
  }

  /** `POST /api/show`: the model's `capabilities` list and trained context length. */
  async probe(model: string, signal?: AbortSignal): Promise<ModelCapabilities> {
    const source = 'ollama /api/show';
    try {
      const parsed = await readJson(this.metadataCall('/api/show', model, signal, { model }));
      return { ...capabilitiesFromShow(parsed), source };
    } catch (error) {
      return probeFailure(source, this.server, error);
    }
  }

  /** `GET /api/tags`: the installed models and their sizes on disk. */
  async listModels(signal?: AbortSignal): Promise<ModelListing[]> {
    const parsed = await readJson(this.metadataCall('/api/tags', this.defaultModel, signal)).catch(
      rethrowAbort(signal),
    );
    const listed = listingsFromTags(parsed);
    if (!listed) {
      throw new LlmError({
        code: 'malformed',
        message: `The ${this.server.label} at ${this.server.baseUrl} answered /api/tags without a "models" list. Check that OLLAMA_HOST points at an Ollama server.`,
      });
    }
    return listed;
  }

  /** A question about models, not a generation: it must be answered within LLM_CONNECT_TIMEOUT_MS. */
  private metadataCall(
    path: string,
    model: string,
    signal: AbortSignal | undefined,
    body?: unknown,
  ): HttpCall {
    const limit = { ms: this.options.connectTimeoutMs, setting: 'LLM_CONNECT_TIMEOUT_MS' };
    return {
      fetch: this.fetch,
      server: this.server,
      model,
      path,
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined ? {} : { body }),
      signal,
      headersTimeout: limit,
      idleTimeout: limit,
    };
  }

  async checkHealth(signal?: AbortSignal): Promise<HealthReport> {
    const prefix = `ollama at ${this.options.baseUrl}`;
    try {
      const parsed = await readJson(this.metadataCall('/api/tags', this.defaultModel, signal));
      const models = (parsed as { models?: { name?: unknown; model?: unknown }[] }).models ?? [];
      const names = models
        .flatMap((m) => [m.name, m.model])
        .filter((n): n is string => typeof n === 'string');
      const wanted = this.defaultModel;
      const present = names.some((n) => n === wanted || n === `${wanted}:latest`);
      if (present)
        return { ok: true, detail: `${prefix}: model ${wanted} is available`, models: [...new Set(names)] };
      return {
        ok: false,
        detail: `${prefix} is running, but model ${wanted} is not pulled: run ollama pull ${wanted} or set OLLAMA_DEFAULT_MODEL (it has: ${names.slice(0, 8).join(', ') || 'no models'})`,
        models: [...new Set(names)],
      };
    } catch (error) {
      if (error instanceof CallerAbort) return { ok: false, detail: `${prefix}: health check aborted` };
      return { ok: false, detail: failureOf(this.server, error).message };
    }
  }
}

function doneChunk(line: OllamaLine, sawToolCall: boolean): LlmChunk {
  const reason: FinishReason = line.done_reason === 'length' ? 'length' : sawToolCall ? 'tool_calls' : 'stop';
  const hasUsage = typeof line.prompt_eval_count === 'number' || typeof line.eval_count === 'number';
  return {
    type: 'done',
    reason,
    ...(hasUsage
      ? { usage: { promptTokens: line.prompt_eval_count ?? 0, completionTokens: line.eval_count ?? 0 } }
      : {}),
  };
}

function toOllamaMessage(message: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: message.role, content: message.content ?? '' };
  if (message.images && message.images.length > 0) out.images = message.images;
  if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
    out.tool_calls = message.tool_calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }));
  }
  if (message.role === 'tool' && message.name) out.tool_name = message.name;
  return out;
}
