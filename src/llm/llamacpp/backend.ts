/**
 * The embedded backend (`llamacpp`): a GGUF model run inside Navi's process by node-llama-cpp,
 * no server needed. Building it loads nothing; the first call imports the runtime, loads the
 * model and makes its context, and later calls reuse them. The context has one sequence, so
 * calls take turns. Inference runs on llama.cpp's native threads: the event loop stays free
 * for HTTP while a model generates (`npm run bench` measures it).
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import { AsyncQueue } from '../../util/async-queue.js';
import { raceAbort } from '../../util/race-abort.js';
import { ModelStore } from '../models/model-store.js';
import { foldStream } from '../stream-guard.js';
import { newToolCallId, parseToolArguments } from '../tool-args.js';
import {
  type CompletionRequest,
  type CompletionResult,
  type EmbeddingResult,
  type FinishReason,
  type HealthReport,
  type LlmBackend,
  type LlmChunk,
  LlmError,
  type LlmFailure,
  type ModelCapabilities,
  type ModelListing,
} from '../types.js';
import { toLlamaFunctions, toLlamaHistory } from './chat-history.js';
import { GgufError, ggufInteger, ggufString, readGgufMetadata } from './gguf-metadata.js';
import { type LoadedModel, loadModel, unloadModel } from './loaded-model.js';
import { defaultModelName, ModelFileError, resolveModelFile } from './model-file.js';
import { type GpuSetting, type LlamacppRuntime, RuntimeMissingError } from './runtime.js';
import { TurnAbandoned, Turns } from './turns.js';

const ABANDONED = Symbol('abandoned');

/**
 * Tokens kept free beyond the rendered prompt: node-llama-cpp may render a few tokens more than
 * the template alone (a function-call prefix), and a full window would make it drop history.
 */
const WINDOW_MARGIN = 16;

export interface LlamacppBackendOptions {
  runtime: LlamacppRuntime;
  /** NAVI_MODELS_DIR. */
  modelsDir: string;
  /** LLAMACPP_MODEL_PATH: a path, a file name in the models folder, or empty for the first file. */
  modelPath: string;
  /** LLAMACPP_NUM_CTX: the context asked for; less when the model or the memory allow less. */
  numCtx: number;
  /** LLAMACPP_THREADS; 0 lets node-llama-cpp choose. */
  threads: number;
  /** LLAMACPP_GPU. */
  gpu: GpuSetting;
  logger?: Logger;
}

export class LlamacppBackend implements LlmBackend {
  readonly id = 'llamacpp';
  private readonly turns = new Turns();
  private current: { path: string; loading: Promise<LoadedModel> } | undefined;
  private loadedContextSize: number | undefined;
  /** Why the last load of a file failed, for `checkHealth` (cleared by a load that works). */
  private loadFailure: { path: string; message: string } | undefined;
  private disposed = false;

  constructor(private readonly options: LlamacppBackendOptions) {}

  /** LLAMACPP_MODEL_PATH, else the first `.gguf` file of the models folder ("" when there is none). */
  get defaultModel(): string {
    return defaultModelName(this.options.modelPath, this.options.modelsDir);
  }

  /** The loaded context's size once a model is loaded; LLAMACPP_NUM_CTX before. */
  get contextWindow(): number {
    return this.loadedContextSize ?? this.options.numCtx;
  }

  describe(): string {
    return `llamacpp (embedded llama.cpp, model ${this.defaultModel || 'none yet'}, models folder ${this.options.modelsDir})`;
  }

  streamComplete(request: CompletionRequest): AsyncIterable<LlmChunk> {
    return this.guarded(request);
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return foldStream(this.streamComplete(request), this.describe());
  }

  /** Vectors from the model's embedding context (made on first use, beside the chat context). */
  async embed(
    input: string[],
    options: { model?: string; signal?: AbortSignal } = {},
  ): Promise<EmbeddingResult> {
    const release = await this.turns.acquire(options.signal).catch((err: unknown) => {
      throw this.embedFailure(err, options.signal);
    });
    try {
      const loaded = await this.load(options.model);
      loaded.embedding ??= await loaded.model.createEmbeddingContext({
        contextSize: { max: loaded.context.contextSize },
        ...(this.options.threads > 0 ? { threads: this.options.threads } : {}),
      });
      const vectors: number[][] = [];
      for (const text of input) {
        if (options.signal?.aborted) throw new TurnAbandoned();
        const embedding = await loaded.embedding.getEmbeddingFor(text);
        vectors.push(Array.from(embedding.vector));
      }
      return { model: basename(loaded.path), vectors };
    } catch (err) {
      throw this.embedFailure(err, options.signal);
    } finally {
      release();
    }
  }

  /** `embed` rejects like the other backends: with the signal's reason when the caller aborted. */
  private embedFailure(err: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason;
    return this.failure(err);
  }

  /** What the GGUF file's metadata says: trained context, and tools or thinking in its chat template. */
  async probe(model: string): Promise<ModelCapabilities> {
    try {
      const path = this.pathOf(model);
      const meta = await readGgufMetadata(path);
      const arch = ggufString(meta, 'general.architecture');
      const contextLength = arch ? ggufInteger(meta, `${arch}.context_length`) : undefined;
      const template = ggufString(meta, 'tokenizer.chat_template') ?? '';
      return {
        tools: /\btools\b/.test(template),
        thinking: /<\/?think>|enable_thinking|reasoning_content/.test(template),
        // Images need a projector file (mmproj) beside the model, which Navi does not load.
        vision: false,
        ...(contextLength && contextLength > 0 ? { contextLength } : {}),
        source: `GGUF metadata of ${basename(path)}`,
      };
    } catch (err) {
      return { source: `the GGUF metadata could not be read: ${(err as Error).message}` };
    }
  }

  /** The `.gguf` files of the models folder, and LLAMACPP_MODEL_PATH when it is a file elsewhere. */
  async listModels(): Promise<ModelListing[]> {
    // The folder as /llm/local lists it (one stat a file); a folder that cannot be read lists nothing.
    const inFolder = await new ModelStore(this.options.modelsDir).list().catch(() => []);
    const listed: ModelListing[] = inFolder.map((m) => ({ name: m.name, sizeBytes: m.size_bytes }));
    const configured = this.options.modelPath.trim();
    if (configured && !listed.some((m) => m.name === configured)) {
      try {
        const path = resolveModelFile(configured, this.options.modelsDir);
        listed.push({ name: configured, sizeBytes: statSync(path).size });
      } catch {
        // A configured file that is missing is what checkHealth reports; the list shows what exists.
      }
    }
    return listed;
  }

  /** Ready when the runtime is installed and the model file is there and reads as GGUF; loads nothing. */
  async checkHealth(): Promise<HealthReport> {
    const prefix = 'llamacpp (embedded llama.cpp)';
    const version = this.options.runtime.version();
    if (!version) {
      return {
        ok: false,
        detail: `${prefix}: the runtime is not installed in ${this.options.runtime.dir} (LLAMACPP_RUNTIME_DIR); run npx navi llamacpp install`,
      };
    }
    let path: string;
    try {
      path = this.pathOf(undefined);
      await readGgufMetadata(path);
    } catch (err) {
      return { ok: false, detail: `${prefix}: ${(err as Error).message}` };
    }
    if (this.loadFailure?.path === path)
      return { ok: false, detail: `${prefix}: ${this.loadFailure.message}` };
    const state =
      this.current?.path === path && this.loadedContextSize !== undefined
        ? `loaded, context ${this.loadedContextSize} tokens`
        : 'loads on the first message';
    return { ok: true, detail: `${prefix}: runtime ${version}, model ${basename(path)} (${state})` };
  }

  /** Frees the model once the calls under way are done (the backend was replaced or Navi closes). */
  async dispose(): Promise<void> {
    // Calls that came before take their turns first; calls after find the backend gone.
    const release = await this.turns.acquire();
    this.disposed = true;
    try {
      const current = this.current;
      this.current = undefined;
      if (current) await current.loading.then(unloadModel, () => undefined);
    } finally {
      release();
    }
  }

  /** `streamComplete`'s contract: never throws, and ends with exactly one `done`. */
  private async *guarded(request: CompletionRequest): AsyncGenerator<LlmChunk> {
    try {
      yield* this.produce(request);
    } catch (err) {
      if (request.signal?.aborted || err instanceof TurnAbandoned) {
        yield { type: 'done', reason: 'aborted' };
        return;
      }
      yield { type: 'done', reason: 'error', error: this.failure(err).toFailure() };
    }
  }

  private async *produce(request: CompletionRequest): AsyncGenerator<LlmChunk> {
    const release = await this.turns.acquire(request.signal);
    try {
      // A stop while the model loads ends the call at once; the load goes on for the next one.
      const load = this.load(request.model);
      const loaded = request.signal ? await raceAbort(load, request.signal, ABANDONED) : await load;
      if (loaded === ABANDONED) throw new TurnAbandoned();
      yield* this.generate(loaded, request);
    } finally {
      release();
    }
  }

  private async *generate(loaded: LoadedModel, request: CompletionRequest): AsyncGenerator<LlmChunk> {
    const { signal } = request;
    const history = toLlamaHistory(request.messages);
    const tools = request.tools && request.tools.length > 0 ? toLlamaFunctions(request.tools) : undefined;
    const functions = tools ? { functions: tools, documentFunctionParams: true } : {};
    // The prompt as the template renders it: its length bounds the answer, so the answer ends
    // ("length") where the window does, instead of llama.cpp dropping the start of the conversation.
    const promptTokens = loaded.chat.chatWrapper
      .generateContextState({
        chatHistory: history,
        ...(tools ? { availableFunctions: tools, documentFunctionParams: true } : {}),
      })
      .contextText.tokenize(loaded.model.tokenizer).length;
    const window = Math.min(loaded.context.contextSize, request.contextWindow ?? Number.POSITIVE_INFINITY);
    const room = window - promptTokens - WINDOW_MARGIN;
    if (room <= 0) {
      throw new LlmError({
        code: 'context_overflow',
        message:
          `The conversation takes ${promptTokens} tokens with its instructions and tools, and the context of the embedded model holds ${window}. ` +
          'Start a new session, let the context be compressed, or raise LLAMACPP_NUM_CTX (up to what the model was trained for).',
      });
    }
    const chunks = new AsyncQueue<LlmChunk>();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const meter = loaded.chat.sequence.tokenMeter;
    const generatedBefore = meter.usedOutputTokens;
    const usage = () => ({ promptTokens, completionTokens: meter.usedOutputTokens - generatedBefore });
    const generation = loaded.chat.generateResponse(history, {
      signal: stop.signal,
      stopOnAbortSignal: true,
      maxTokens: Math.min(request.maxTokens ?? room, room),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      // The model's template presents the functions; a call ends the answer, and Navi runs it.
      ...functions,
      onResponseChunk: (chunk) => {
        if (chunk.text === '') return;
        chunks.push(
          chunk.type === 'segment'
            ? { type: 'thinking', delta: chunk.text }
            : { type: 'text', delta: chunk.text },
        );
      },
    });
    generation.then(
      (result) => {
        const calls = result.functionCalls ?? [];
        for (const call of calls) {
          const parsed = parseToolArguments(call.params);
          chunks.push({
            type: 'tool_call',
            call: { id: newToolCallId(), name: call.functionName, arguments: parsed.arguments },
          });
        }
        let reason: FinishReason = 'stop';
        if (signal?.aborted) reason = 'aborted';
        else if (calls.length > 0) reason = 'tool_calls';
        else if (result.metadata.stopReason === 'maxTokens') reason = 'length';
        chunks.push({ type: 'done', reason, usage: usage() });
        chunks.close();
      },
      (err: unknown) => chunks.close(err),
    );
    try {
      for await (const chunk of chunks) {
        // Text already generated must not outrun an abort that came while the consumer held a chunk.
        if (signal?.aborted) {
          yield { type: 'done', reason: 'aborted', usage: usage() };
          return;
        }
        yield chunk;
      }
    } finally {
      // The consumer may leave early: the model stops, and the turn passes on only once it has.
      stop.abort();
      signal?.removeEventListener('abort', onAbort);
      await generation.catch(() => undefined);
    }
  }

  /** The model `name` means, loaded once and kept; another model replaces it. Call within a turn. */
  private async load(name: string | undefined): Promise<LoadedModel> {
    if (this.disposed)
      throw new LlmError({ code: 'unsupported', message: 'this llamacpp backend was replaced' });
    const path = this.pathOf(name);
    if (this.current?.path === path) return this.current.loading;
    const previous = this.current;
    this.current = undefined;
    this.loadedContextSize = undefined;
    if (previous) await previous.loading.then(unloadModel, () => undefined);
    const loading = loadModel(path, this.options).then((loaded) => {
      this.loadedContextSize = loaded.context.contextSize;
      this.loadFailure = undefined;
      return loaded;
    });
    this.current = { path, loading };
    // A failed load is tried again on the next call (the file may have been replaced).
    loading.catch((err: unknown) => {
      if (this.current?.loading === loading) this.current = undefined;
      if (!(err instanceof RuntimeMissingError))
        this.loadFailure = { path, message: this.failure(err).message };
    });
    return loading;
  }

  /** The file of a model name: LLAMACPP_MODEL_PATH may be a path, any other name is a file of the folder. */
  private pathOf(name: string | undefined): string {
    const configured = this.options.modelPath.trim();
    const wanted = name?.trim() || configured;
    return resolveModelFile(wanted, this.options.modelsDir, wanted === configured);
  }

  private failure(err: unknown): LlmError {
    return err instanceof LlmError ? err : new LlmError(failureOf(err));
  }
}

function failureOf(err: unknown): LlmFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RuntimeMissingError) return { code: 'unsupported', message };
  if (err instanceof ModelFileError) return { code: 'model_not_found', message };
  if (err instanceof GgufError)
    return {
      code: 'unsupported',
      message: `${message}. Download the model again (npx navi model pull), or choose another.`,
    };
  if (/too long|context size|exceeds/i.test(message))
    return {
      code: 'context_overflow',
      message: `The text does not fit the model's context (${message}). Start a new session, or raise LLAMACPP_NUM_CTX.`,
    };
  return {
    code: 'malformed',
    message: `llama.cpp failed while generating: ${message}. Retry; if it keeps failing, try another model.`,
  };
}
