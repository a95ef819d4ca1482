/**
 * What a model can do, asked once: `CapabilityCache` remembers each backend's answer about each
 * model, so the agent, the REST API and `navi doctor` never wait for the same question twice.
 * Plus the small conversions everybody needs: the context a call may use, the REST shape, and
 * the one line logs and `navi doctor` print.
 */
import type { ModelCapabilitiesInfo } from '../protocol/llm.js';
import { raceAbort } from '../util/race-abort.js';
import type { ServerInfo } from './failures.js';
import { CallerAbort } from './http.js';
import { failureOf } from './stream-guard.js';
import type { LlmBackend, ModelCapabilities } from './types.js';

export interface CapabilityCacheOptions {
  /**
   * How long a probe that learned nothing (server down, model unknown, a server that says
   * nothing) is remembered before the next `get` asks again. Default 30 s.
   */
  retryAfterMs?: number;
  /** Milliseconds now (tests move time by hand). */
  now?: () => number;
}

interface Entry {
  /** The backend object asked: a backend rebuilt with new settings is asked afresh. */
  backend: LlmBackend;
  promise: Promise<ModelCapabilities>;
  settled?: ModelCapabilities;
  /** When the answer stops counting; infinite while the probe runs and once it learned something. */
  expires: number;
}

const DEFAULT_RETRY_MS = 30_000;

/** What a caller that stopped waiting gets; the probe goes on for the others. */
const GAVE_UP: ModelCapabilities = Object.freeze({
  source: 'not asked to the end: the caller gave up waiting',
});

export class CapabilityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly retryAfterMs: number;
  private readonly now: () => number;

  constructor(options: CapabilityCacheOptions = {}) {
    this.retryAfterMs = options.retryAfterMs ?? DEFAULT_RETRY_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * What `model` of `backend` can do. Never rejects. Callers asking at the same time share one
   * probe; an answer that learned something is kept until `invalidate`, one that learned nothing
   * for `retryAfterMs`. `signal` only stops this caller's wait (resolving with a source saying
   * so): the probe itself goes on for the others, bounded by the backend's own time limit.
   */
  get(backend: LlmBackend, model: string, signal?: AbortSignal): Promise<ModelCapabilities> {
    const key = keyOf(backend.id, model);
    let entry = this.entries.get(key);
    if (!entry || entry.backend !== backend || entry.expires <= this.now()) {
      entry = this.start(key, backend, model);
    }
    return signal ? raceAbort(entry.promise, signal, GAVE_UP) : entry.promise;
  }

  /** The answer already known for `model`, without asking; undefined while none is. */
  peek(backend: LlmBackend, model: string): ModelCapabilities | undefined {
    const entry = this.entries.get(keyOf(backend.id, model));
    if (!entry || entry.backend !== backend || entry.expires <= this.now()) return undefined;
    return entry.settled;
  }

  /**
   * Forgets answers so the next `get` asks again: all of them, a backend's (`backendId`), or one
   * model's. For when a model was pulled, replaced or removed.
   */
  invalidate(backendId?: string, model?: string): void {
    if (backendId === undefined) {
      this.entries.clear();
      return;
    }
    if (model !== undefined) {
      this.entries.delete(keyOf(backendId, model));
      return;
    }
    for (const key of [...this.entries.keys()]) {
      if (key.startsWith(`${backendId}\u0000`)) this.entries.delete(key);
    }
  }

  private start(key: string, backend: LlmBackend, model: string): Entry {
    const entry: Entry = {
      backend,
      promise: Promise.resolve({ source: '' }),
      expires: Number.POSITIVE_INFINITY,
    };
    entry.promise = askBackend(backend, model).then((caps) => {
      entry.settled = caps;
      entry.expires = learnedSomething(caps) ? Number.POSITIVE_INFINITY : this.now() + this.retryAfterMs;
      return caps;
    });
    this.entries.set(key, entry);
    return entry;
  }
}

/** The context window a call may use: the backend's setting, never more than the model takes. */
export function effectiveContext(
  backend: Pick<LlmBackend, 'contextWindow'>,
  caps: ModelCapabilities,
): number {
  return Math.min(backend.contextWindow, caps.contextLength ?? Number.POSITIVE_INFINITY);
}

/** The REST shape: `null` where the backend could not tell. */
export function capabilitiesInfo(caps: ModelCapabilities): ModelCapabilitiesInfo {
  return {
    tools: caps.tools ?? null,
    thinking: caps.thinking ?? null,
    vision: caps.vision ?? null,
    context_length: caps.contextLength ?? null,
    source: caps.source,
  };
}

/** Whether the probe found out anything at all. */
export function learnedSomething(caps: ModelCapabilities): boolean {
  return (
    caps.tools !== undefined ||
    caps.thinking !== undefined ||
    caps.vision !== undefined ||
    caps.contextLength !== undefined
  );
}

/**
 * One line for logs, e.g.
 * "model qwen3:8b: tools yes, thinking yes, vision no, context 40960 (ollama /api/show)".
 */
export function describeCapabilities(model: string, caps: ModelCapabilities): string {
  return `model ${model}: ${capabilitySummary(caps)}`;
}

/** The part of `describeCapabilities` after the model's name (`navi doctor` names it apart). */
export function capabilitySummary(caps: ModelCapabilities): string {
  if (!learnedSomething(caps)) return `capabilities unknown (${caps.source})`;
  const yesNo = (v: boolean | undefined) => (v === undefined ? 'unknown' : v ? 'yes' : 'no');
  const context = caps.contextLength === undefined ? 'unknown' : String(caps.contextLength);
  return `tools ${yesNo(caps.tools)}, thinking ${yesNo(caps.thinking)}, vision ${yesNo(caps.vision)}, context ${context} (${caps.source})`;
}

/**
 * What a backend's `probe` answers when it could not ask: only `source`, saying where it asked
 * and why that failed, in the words of the backend's failure messages.
 */
export function probeFailure(source: string, server: ServerInfo, error: unknown): ModelCapabilities {
  if (error instanceof CallerAbort) return { source: `${source}: not asked, the caller gave up waiting` };
  return { source: `${source} could not tell: ${failureOf(server, error).message}` };
}

function keyOf(backendId: string, model: string): string {
  return `${backendId}\u0000${model}`;
}

function askBackend(backend: LlmBackend, model: string): Promise<ModelCapabilities> {
  if (!backend.probe) return Promise.resolve({ source: `${backend.id} cannot say what a model can do` });
  // probe promises never to reject; a backend that breaks the promise still must not break callers.
  return backend.probe(model).catch((error: unknown) => ({
    source: `${backend.id} probe failed: ${error instanceof Error ? error.message : String(error)}`,
  }));
}
