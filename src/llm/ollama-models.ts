/**
 * What an Ollama server says about its models: `POST /api/show` (one model's `capabilities` and
 * `model_info`) and `GET /api/tags` (the installed models with their sizes).
 */
import { isRecord } from '../util/is-record.js';
import type { ModelCapabilities, ModelListing } from './types.js';

/**
 * Reads an `/api/show` answer. `capabilities` lists what the model does ("completion", "tools",
 * "thinking", "vision", "embedding"…); servers older than that list leave the three flags unknown.
 * The trained context is `model_info["<general.architecture>.context_length"]`.
 */
export function capabilitiesFromShow(body: unknown): Omit<ModelCapabilities, 'source'> {
  if (!isRecord(body)) return {};
  const out: Omit<ModelCapabilities, 'source'> = {};
  const listed = body.capabilities;
  if (Array.isArray(listed)) {
    const names = listed.filter((c): c is string => typeof c === 'string');
    out.tools = names.includes('tools');
    out.thinking = names.includes('thinking');
    out.vision = names.includes('vision');
  }
  const context = contextFromModelInfo(body.model_info);
  if (context !== undefined) out.contextLength = context;
  return out;
}

function contextFromModelInfo(info: unknown): number | undefined {
  if (!isRecord(info)) return undefined;
  const arch = info['general.architecture'];
  if (typeof arch === 'string') {
    const named = positiveInt(info[`${arch}.context_length`]);
    if (named !== undefined) return named;
  }
  // Without the architecture key: the one "<arch>.context_length" there is (not "….rope.…_length").
  for (const [key, value] of Object.entries(info)) {
    if (/^[^.]+\.context_length$/.test(key)) {
      const found = positiveInt(value);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Reads a `/api/tags` answer; undefined when it holds no `models` list. */
export function listingsFromTags(body: unknown): ModelListing[] | undefined {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined;
  const out: ModelListing[] = [];
  const seen = new Set<string>();
  for (const m of body.models) {
    if (!isRecord(m)) continue;
    const name = typeof m.name === 'string' && m.name !== '' ? m.name : m.model;
    if (typeof name !== 'string' || name === '' || seen.has(name)) continue;
    seen.add(name);
    const size = positiveInt(m.size);
    out.push(size === undefined ? { name } : { name, sizeBytes: size });
  }
  return out;
}

/** A whole number above zero, or undefined. */
export function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
