/**
 * One small JSON GET to an LLM server the setup screen asks about (is an Ollama there, does
 * this server accept the key), with a time limit and a cap on what is read. Every outcome is a
 * value, never a throw, so the caller can say in words which step failed.
 */

export type JsonGetResult =
  | { kind: 'json'; status: number; value: unknown }
  /** Nothing answered: refused, no route, name not found. */
  | { kind: 'unreachable'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'redirect'; status: number; location: string }
  /** An answer that is not 2xx. */
  | { kind: 'status'; status: number; body: string }
  /** A 2xx answer that is not JSON (or is too large to be a model list). */
  | { kind: 'not-json'; status: number };

export interface JsonGetOptions {
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Largest body read. */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

/** Why a connection failed, from undici's error and its `cause` (ECONNREFUSED, ENOTFOUND…). */
function unreachableReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}

async function readCapped(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** GETs `url` and reads its JSON; redirects are reported, not followed (the key stays put). */
export async function getJson(url: string, options: JsonGetOptions): Promise<JsonGetResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  try {
    const response = await fetch(url, {
      method: 'GET',
      headers: { accept: 'application/json', ...options.headers },
      redirect: 'manual',
      signal,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      return { kind: 'redirect', status: response.status, location: response.headers.get('location') ?? '' };
    }
    const text = await readCapped(response, maxBytes);
    if (!response.ok) return { kind: 'status', status: response.status, body: (text ?? '').slice(0, 500) };
    if (text === undefined) return { kind: 'not-json', status: response.status };
    try {
      return { kind: 'json', status: response.status, value: JSON.parse(text) };
    } catch {
      return { kind: 'not-json', status: response.status };
    }
  } catch (err) {
    if (timeout.aborted) return { kind: 'timeout' };
    if (options.signal?.aborted) throw err;
    return { kind: 'unreachable', reason: unreachableReason(err) };
  }
}

/** The model names of an Ollama `/api/tags` answer. */
export function ollamaModelNames(value: unknown): string[] | undefined {
  const models = (value as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return undefined;
  return models
    .map((m) => (m as { name?: unknown; model?: unknown } | null) ?? {})
    .map((m) => (typeof m.name === 'string' ? m.name : typeof m.model === 'string' ? m.model : undefined))
    .filter((n): n is string => n !== undefined);
}

/** The model ids of an OpenAI-compatible `/models` answer (`{data: [{id}]}`). */
export function openAiModelIds(value: unknown): string[] | undefined {
  const data = (value as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  return data
    .map((m) => (m as { id?: unknown } | null)?.id)
    .filter((id): id is string => typeof id === 'string');
}

/** Ollama answers to `name` and to `name:latest` for the same model. */
export function hasOllamaModel(names: readonly string[], wanted: string): boolean {
  return names.some((n) => n === wanted || n === `${wanted}:latest` || `${n}:latest` === wanted);
}
