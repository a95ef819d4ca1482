/**
 * The small GGUF models Navi recommends for the embedded llamacpp backend: instruct models whose
 * chat templates know tool calls, small enough for a laptop without a GPU. `navi model pull
 * <alias>` and the setup screen download them by alias; the checksum pins the exact file, so a
 * file changed or swapped on the server is refused instead of loaded.
 *
 * Sizes and SHA-256 checksums are those Hugging Face lists for the files (their Git LFS
 * metadata). The first entry is the one the setup screen suggests.
 */
import type { RecommendedModel } from '../../protocol/llm.js';

export interface CatalogModel {
  alias: string;
  name: string;
  /** `hf:org/repo/file.gguf`. */
  source: string;
  /** The name the file gets in the models folder: the last part of `source`. */
  fileName: string;
  sizeBytes: number;
  /** The context window the model was trained for (tokens). */
  contextLength: number;
  goodAt: string[];
  sha256: string;
}

function entry(model: Omit<CatalogModel, 'fileName'>): CatalogModel {
  const fileName = model.source.slice(model.source.lastIndexOf('/') + 1);
  return { ...model, fileName };
}

export const CATALOG: readonly CatalogModel[] = [
  entry({
    alias: 'qwen2.5-3b',
    name: 'Qwen2.5 3B Instruct (Q4_K_M)',
    source: 'hf:Qwen/Qwen2.5-3B-Instruct-GGUF/qwen2.5-3b-instruct-q4_k_m.gguf',
    sizeBytes: 2_104_932_768,
    contextLength: 32_768,
    goodAt: ['tool calling', 'many languages', 'a good balance of speed and quality on a CPU'],
    sha256: '626b4a6678b86442240e33df819e00132d3ba7dddfe1cdc4fbb18e0a9615c62d',
  }),
  entry({
    alias: 'qwen3-4b',
    name: 'Qwen3 4B (Q4_K_M)',
    source: 'hf:Qwen/Qwen3-4B-GGUF/Qwen3-4B-Q4_K_M.gguf',
    sizeBytes: 2_497_280_256,
    contextLength: 32_768,
    goodAt: ['tool calling', 'reasoning (thinking mode)', 'many languages', 'harder tasks'],
    sha256: '7485fe6f11af29433bc51cab58009521f205840f5b4ae3a32fa7f92e8534fdf5',
  }),
  entry({
    alias: 'llama3.2-3b',
    name: 'Llama 3.2 3B Instruct (Q4_K_M)',
    source: 'hf:bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    sizeBytes: 2_019_377_696,
    contextLength: 131_072,
    goodAt: ['tool calling', 'English', 'long conversations (128k context)'],
    sha256: '6c1a2b41161032677be168d354123594c0e6e67d2b9227c84f296ad037c728ff',
  }),
  entry({
    alias: 'qwen3-1.7b',
    name: 'Qwen3 1.7B (Q8_0)',
    source: 'hf:Qwen/Qwen3-1.7B-GGUF/Qwen3-1.7B-Q8_0.gguf',
    sizeBytes: 1_834_426_016,
    contextLength: 32_768,
    goodAt: ['tool calling', 'reasoning (thinking mode)', 'fast on a CPU'],
    sha256: '061b54daade076b5d3362dac252678d17da8c68f07560be70818cace6590cb1a',
  }),
  entry({
    alias: 'qwen2.5-1.5b',
    name: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
    source: 'hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    sizeBytes: 1_117_320_736,
    contextLength: 32_768,
    goodAt: ['simple tool calls', 'many languages', 'fast on a CPU', 'machines with little memory'],
    sha256: '6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e',
  }),
  entry({
    alias: 'llama3.2-1b',
    name: 'Llama 3.2 1B Instruct (Q4_K_M)',
    source: 'hf:bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    sizeBytes: 807_694_464,
    contextLength: 131_072,
    goodAt: ['the smallest download', 'fastest on a CPU', 'simple chat in English'],
    sha256: '6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83',
  }),
];

/** The catalog entry of an alias (case does not matter), if it is one. */
export function catalogByAlias(alias: string): CatalogModel | undefined {
  const wanted = alias.toLowerCase();
  return CATALOG.find((m) => m.alias === wanted);
}

/** The catalog entry whose file has this name in the models folder, if any. */
export function catalogByFileName(fileName: string): CatalogModel | undefined {
  return CATALOG.find((m) => m.fileName === fileName);
}

/** The catalog entry downloaded from this `hf:` source, if any. */
export function catalogBySource(source: string): CatalogModel | undefined {
  return CATALOG.find((m) => m.source === source);
}

/** The REST shape of a catalog entry. */
export function toRecommended(model: CatalogModel): RecommendedModel {
  return {
    alias: model.alias,
    name: model.name,
    size_bytes: model.sizeBytes,
    context_length: model.contextLength,
    good_at: [...model.goodAt],
    source: model.source,
  };
}
