/**
 * What OpenAI-compatible servers say about their models in `GET /models`. OpenAI itself says
 * nothing beyond the id; other servers add fields of their own, read here where they exist:
 * - OpenRouter: `context_length`, `top_provider.context_length`, `supported_parameters` ("tools",
 *   "reasoning"), `architecture.input_modalities` ("image");
 * - vLLM: `max_model_len`; Groq: `context_window`;
 * - LM Studio: `max_context_length`, `loaded_context_length`, `type` ("llm", "vlm",
 *   "embeddings"), `capabilities` (["tool_use"], or {vision, trained_for_tool_use});
 * - Mistral: `max_context_length`, `capabilities` {function_calling, vision, reasoning}, `aliases`;
 * - llama.cpp's llama-server: `meta.n_ctx_train` and `meta.n_ctx`, `meta.size`, and beside `data`
 *   a `models` list whose `capabilities` name "multimodal" when it can see images.
 * A field no server sent stays unknown.
 */
import { isRecord } from '../util/is-record.js';
import { positiveInt } from './ollama-models.js';
import type { ModelCapabilities, ModelListing } from './types.js';

type Entry = Record<string, unknown>;
type Learned = Omit<ModelCapabilities, 'source'>;

/** Every model entry of a `/models` answer: `data`, a bare array, and a `models` list. */
export function modelEntries(body: unknown): Entry[] | undefined {
  if (Array.isArray(body)) return body.filter(isRecord);
  if (!isRecord(body)) return undefined;
  const lists = [body.data, body.models].filter(Array.isArray);
  if (lists.length === 0) return undefined;
  return lists.flat().filter(isRecord);
}

/**
 * What `/models` says about `model`. A server listing a single model answers for it whatever
 * name it is called by (llama-server serves its one file under any name), so that one is read
 * when the name is not listed; otherwise an unlisted model is unknown.
 */
export function capabilitiesFromModels(body: unknown, model: string, source: string): ModelCapabilities {
  const entries = modelEntries(body);
  if (!entries) return { source: `${source} did not answer a list of models` };
  // The same model may have an entry in `data` and in `models`, found there under an alias.
  const ids = new Set([model, ...entries.flatMap((e) => (namesOf(e).includes(model) ? namesOf(e) : []))]);
  let matches = entries.filter((e) => namesOf(e).some((n) => ids.has(n)));
  let where = source;
  if (matches.length === 0) {
    const listed = distinctIds(entries);
    if (listed.length !== 1) {
      const some = listed.slice(0, 8).join(', ') || 'none';
      return { source: `${source} does not list model "${model}" (it lists ${some})` };
    }
    matches = entries;
    where = `${source}, the one model it serves (${listed[0]})`;
  }
  const learned: Learned = {};
  for (const entry of matches) {
    const read = readEntry(entry);
    learned.tools ??= read.tools;
    learned.thinking ??= read.thinking;
    learned.vision ??= read.vision;
    if (read.contextLength !== undefined)
      learned.contextLength = Math.min(learned.contextLength ?? read.contextLength, read.contextLength);
  }
  return { ...withoutUndefined(learned), source: where };
}

/** The models of a `/models` answer, without embedding models; undefined when it holds no list. */
export function listingsFromModels(body: unknown): ModelListing[] | undefined {
  const entries = modelEntries(body);
  if (!entries) return undefined;
  const out: ModelListing[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const name = primaryId(entry);
    if (name === undefined || seen.has(name) || /^embeddings?$/.test(String(entry.type))) continue;
    seen.add(name);
    const meta = isRecord(entry.meta) ? entry.meta : {};
    const size = positiveInt(meta.size) ?? positiveInt(entry.size_bytes);
    out.push(size === undefined ? { name } : { name, sizeBytes: size });
  }
  return out;
}

function readEntry(entry: Entry): Learned {
  const meta = isRecord(entry.meta) ? entry.meta : {};
  const provider = isRecord(entry.top_provider) ? entry.top_provider : {};
  // What the model was trained for and what the server runs it with: a request must fit both.
  const lengths = [
    entry.context_length,
    entry.max_model_len,
    entry.context_window,
    entry.max_context_length,
    entry.loaded_context_length,
    meta.n_ctx_train,
    meta.n_ctx,
    provider.context_length,
  ].flatMap((v) => positiveInt(v) ?? []);
  return withoutUndefined({
    tools: toolsOf(entry),
    thinking: thinkingOf(entry),
    vision: visionOf(entry),
    contextLength: lengths.length > 0 ? Math.min(...lengths) : undefined,
  });
}

/** `capabilities` as a list of words (LM Studio, llama-server) or as named flags (Mistral, LM Studio's own API). */
function capabilitiesOf(entry: Entry): { list?: string[]; flags?: Record<string, unknown> } {
  const list = strings(entry.capabilities);
  if (list) return { list };
  return isRecord(entry.capabilities) ? { flags: entry.capabilities } : {};
}

function toolsOf(entry: Entry): boolean | undefined {
  const params = strings(entry.supported_parameters);
  if (params) return params.includes('tools');
  const { list, flags } = capabilitiesOf(entry);
  const stated = bool(flags?.function_calling);
  if (stated !== undefined) return stated;
  // Only a yes counts: LM Studio runs tools with models not trained for them, and
  // llama-server lists no tools even when its template has them.
  if (flags?.trained_for_tool_use === true || list?.includes('tools') || list?.includes('tool_use'))
    return true;
  return undefined;
}

function thinkingOf(entry: Entry): boolean | undefined {
  const params = strings(entry.supported_parameters);
  if (params) return params.includes('reasoning') || params.includes('include_reasoning');
  const { list, flags } = capabilitiesOf(entry);
  const stated = bool(flags?.reasoning);
  if (stated !== undefined) return stated;
  return list?.includes('thinking') || list?.includes('reasoning') ? true : undefined;
}

function visionOf(entry: Entry): boolean | undefined {
  const architecture = isRecord(entry.architecture) ? entry.architecture : {};
  const inputs = strings(architecture.input_modalities);
  if (inputs) return inputs.includes('image');
  const { list, flags } = capabilitiesOf(entry);
  const stated = bool(flags?.vision);
  if (stated !== undefined) return stated;
  if (entry.type === 'vlm') return true;
  if (entry.type === 'llm') return false;
  if (list?.includes('vision') || list?.includes('multimodal')) return true;
  // A list naming "completion" uses Ollama's words and names everything the model does.
  return list?.includes('completion') ? false : undefined;
}

function namesOf(entry: Entry): string[] {
  const names = [entry.id, entry.key, entry.model, entry.name, ...(strings(entry.aliases) ?? [])];
  return names.filter((n): n is string => typeof n === 'string' && n !== '');
}

/** The name a client sends for this model: `id` (OpenAI), `key` (LM Studio), `model`/`name` (llama-server's list). */
function primaryId(entry: Entry): string | undefined {
  for (const v of [entry.id, entry.key, entry.model, entry.name]) {
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function distinctIds(entries: Entry[]): string[] {
  return [...new Set(entries.flatMap((e) => primaryId(e) ?? []))];
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

function bool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

function withoutUndefined(learned: Learned): Learned {
  const out: Learned = {};
  if (learned.tools !== undefined) out.tools = learned.tools;
  if (learned.thinking !== undefined) out.thinking = learned.thinking;
  if (learned.vision !== undefined) out.vision = learned.vision;
  if (learned.contextLength !== undefined) out.contextLength = learned.contextLength;
  return out;
}
