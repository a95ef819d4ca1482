/**
 * A model file loaded into llama.cpp with its chat context: the context is as large as
 * LLAMACPP_NUM_CTX asks, but never larger than what the model was trained for or what fits the
 * memory left (node-llama-cpp measures that and picks the largest size that fits).
 */
import type { Logger } from 'pino';
import { LlmError } from '../types.js';
import type { LlamaChat, LlamaContext, LlamaEmbeddingContext, LlamaModel } from './binding-types.js';
import { readGgufMetadata } from './gguf-metadata.js';
import type { GpuSetting, LlamacppRuntime } from './runtime.js';

export interface LoadedModel {
  path: string;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
  /** Made on the first `embed()`. */
  embedding?: LlamaEmbeddingContext;
}

export interface LoadOptions {
  runtime: LlamacppRuntime;
  numCtx: number;
  threads: number;
  gpu: GpuSetting;
  logger?: Logger;
}

export async function loadModel(path: string, options: LoadOptions): Promise<LoadedModel> {
  // A file that is not GGUF, or cut short, is refused here with a clear message, before the
  // native loader sees it.
  await readGgufMetadata(path);
  const mod = await options.runtime.load();
  const llama = await options.runtime.llama(options.gpu).catch((err: unknown) => {
    throw new LlmError({
      code: 'unsupported',
      message:
        `The llama.cpp runtime in ${options.runtime.dir} could not start (${(err as Error).message}). ` +
        'Reinstall it with npx navi llamacpp install, or set LLAMACPP_GPU=off if a GPU is the trouble.',
    });
  });
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath: path });
  } catch (err) {
    throw new LlmError({
      code: 'unsupported',
      message:
        `llama.cpp could not load the model file ${path} (${(err as Error).message}). ` +
        'The file may be damaged, or of an architecture this runtime does not know: download it again with npx navi model pull, or choose another model.',
    });
  }
  const max = Math.max(1, Math.min(options.numCtx, model.trainContextSize || options.numCtx));
  let context: LlamaContext;
  try {
    context = await model.createContext({
      contextSize: { max },
      ...(options.threads > 0 ? { threads: options.threads } : {}),
    });
  } catch (err) {
    await model.dispose().catch(() => undefined);
    throw new LlmError({
      code: 'unsupported',
      message:
        `There is not enough memory for model ${path} with a context of up to ${max} tokens (${(err as Error).message}). ` +
        'Lower LLAMACPP_NUM_CTX, close other programs, or choose a smaller model.',
    });
  }
  const chat = new mod.LlamaChat({ contextSequence: context.getSequence() });
  options.logger?.info(
    {
      model: path,
      contextSize: context.contextSize,
      asked: options.numCtx,
      trained: model.trainContextSize,
      gpu: llama.gpu || 'none',
      chatFormat: chat.chatWrapper.wrapperName,
    },
    'llamacpp: model loaded',
  );
  return { path, model, context, chat };
}

/** Frees what the model holds; errors are ignored (it is going away either way). */
export async function unloadModel(loaded: LoadedModel): Promise<void> {
  loaded.chat.dispose();
  await loaded.embedding?.dispose().catch(() => undefined);
  await loaded.context.dispose().catch(() => undefined);
  await loaded.model.dispose().catch(() => undefined);
}
