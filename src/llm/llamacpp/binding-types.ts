/**
 * The part of node-llama-cpp Navi uses, typed here: the package is installed on demand outside
 * the project (`navi llamacpp install`), so its own types are not available to the compiler.
 * Kept to what the backend calls; the shapes follow node-llama-cpp 3.x.
 */

export type LlamaLogLevel = 'disabled' | 'fatal' | 'error' | 'warn' | 'info' | 'log' | 'debug';

export interface GetLlamaOptions {
  gpu: 'auto' | false;
  build: 'never';
  skipDownload: true;
  progressLogs: false;
  logLevel: LlamaLogLevel;
  logger(level: LlamaLogLevel, message: string): void;
  maxThreads?: number;
}

export interface Llama {
  /** The GPU in use, or false for the CPU. */
  readonly gpu: string | false;
  loadModel(options: { modelPath: string; gpuLayers?: 'auto' | number }): Promise<LlamaModel>;
  dispose(): Promise<void>;
}

/** node-llama-cpp's tokenizer function, only passed back to it. */
export type LlamaTokenizer = (text: string) => readonly number[];

export interface LlamaModel {
  /** The context the model was trained for (`<arch>.context_length`). */
  readonly trainContextSize: number;
  readonly tokenizer: LlamaTokenizer;
  readonly embeddingVectorSize: number;
  createContext(options: {
    /** `max`: the largest size that fits memory, up to this. */
    contextSize: { min?: number; max: number };
    threads?: number;
    sequences?: number;
  }): Promise<LlamaContext>;
  createEmbeddingContext(options: {
    contextSize: { max: number };
    threads?: number;
  }): Promise<LlamaEmbeddingContext>;
  dispose(): Promise<void>;
}

export interface LlamaContext {
  readonly contextSize: number;
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}

export interface LlamaContextSequence {
  /** Tokens evaluated in the sequence so far: the prompt, then each generated token. */
  readonly nextTokenIndex: number;
  /** Tokens evaluated and generated over the sequence's life. */
  readonly tokenMeter: { readonly usedInputTokens: number; readonly usedOutputTokens: number };
}

export interface LlamaEmbeddingContext {
  getEmbeddingFor(text: string): Promise<{ readonly vector: readonly number[] }>;
  dispose(): Promise<void>;
}

/** node-llama-cpp's JSON for a function's parameters (a subset of JSON Schema). */
export type FunctionParams = Readonly<Record<string, unknown>>;

export type LlamaChatHistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: LlamaModelResponsePart[] };

export type LlamaModelResponsePart =
  | string
  | { type: 'functionCall'; name: string; params: unknown; result: unknown; startsNewChunk?: boolean }
  | { type: 'segment'; segmentType: 'thought' | 'comment'; text: string; ended: boolean };

export type LlamaChatFunctions = Record<string, { description?: string; params?: FunctionParams }>;

export interface LlamaResponseChunk {
  /** `undefined` for the answer itself, `"segment"` for a thought or comment. */
  type: 'segment' | undefined;
  segmentType: 'thought' | 'comment' | undefined;
  text: string;
  tokens: readonly number[];
}

export interface LlamaGenerateOptions {
  onResponseChunk(chunk: LlamaResponseChunk): void;
  signal: AbortSignal;
  stopOnAbortSignal: true;
  maxTokens?: number;
  temperature?: number;
  functions?: LlamaChatFunctions;
  documentFunctionParams?: boolean;
}

export interface LlamaGenerateResult {
  response: string;
  functionCalls?: { functionName: string; params: unknown }[];
  metadata: {
    stopReason:
      | 'eogToken'
      | 'stopGenerationTrigger'
      | 'functionCalls'
      | 'maxTokens'
      | 'abort'
      | 'customStopTrigger';
  };
}

export interface LlamaChatWrapper {
  readonly wrapperName: string;
  /** The history rendered through the chat template, as the model will read it. */
  generateContextState(options: {
    chatHistory: readonly LlamaChatHistoryItem[];
    availableFunctions?: LlamaChatFunctions;
    documentFunctionParams?: boolean;
  }): { contextText: { tokenize(tokenizer: LlamaTokenizer): readonly number[] } };
}

export interface LlamaChat {
  readonly chatWrapper: LlamaChatWrapper;
  readonly sequence: LlamaContextSequence;
  generateResponse(
    history: LlamaChatHistoryItem[],
    options: LlamaGenerateOptions,
  ): Promise<LlamaGenerateResult>;
  dispose(): void;
}

/** The module `import('node-llama-cpp')` resolves to, as far as Navi uses it. */
export interface NodeLlamaCpp {
  getLlama(options: GetLlamaOptions): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: LlamaContextSequence }) => LlamaChat;
}
