/**
 * Whether Navi's default model answers, for the whole app: the banner above the chat says so
 * before the person types, and the chat header shows it beside the connection. While the banner
 * shows, `GET /llm/status` is asked again every 30 s when the page is visible (`?llm_check_ms=`
 * in the page's address changes that, for tests) and at once when the page comes back into
 * view; the banner goes once the model answers. A run that fails with an LLM error has it asked
 * at once too, which is how a model that stops answering is noticed.
 */

import type { InjectionKey } from 'vue';
import type { LlmBackendId, LlmStatus } from '../../../src/protocol/llm.js';
import type { LlmStatusWatch } from './setup.js';

/** How often the status is asked while the page is visible. */
export const DEFAULT_CHECK_MS = 30_000;
const MIN_CHECK_MS = 100;
const MAX_CHECK_MS = 3_600_000;

/** What the banner and the header say about the default model. */
export interface ModelHealth {
  /** `unknown` until the first answer, or when Navi itself could not be asked. */
  state: 'unknown' | 'ready' | 'unreachable';
  backend: LlmBackendId | null;
  model: string;
  /** The backend's own sentence: where it looked and what is wrong. */
  detail: string;
}

export function modelHealth(status: LlmStatus | null): ModelHealth {
  if (!status) return { state: 'unknown', backend: null, model: '', detail: '' };
  const own = status.backends.find((b) => b.id === status.default_backend);
  return {
    state: status.needs_setup ? 'unreachable' : 'ready',
    backend: status.default_backend,
    model: status.default_model || own?.default_model || '',
    detail: own?.detail ?? '',
  };
}

/** The re-check interval: `llm_check_ms` of the page's query string when it is a sane number. */
export function checkIntervalMs(search: string): number {
  const raw = new URLSearchParams(search).get('llm_check_ms');
  if (raw === null || !/^\d+$/.test(raw)) return DEFAULT_CHECK_MS;
  return Math.min(MAX_CHECK_MS, Math.max(MIN_CHECK_MS, Number(raw)));
}

/** "every 30 s", "every 2 min": how often, in the banner's words. */
export function describeInterval(ms: number): string {
  if (ms < 1000) return `every ${ms} ms`;
  if (ms < 120_000) return `every ${Math.round(ms / 1000)} s`;
  return `every ${Math.round(ms / 60_000)} min`;
}

/**
 * Codes of a failed run that say the model's server is missing, gone or wrong: worth asking
 * again, and what the failed turn's hint points at (`navi doctor`).
 */
const LLM_FAILURES: ReadonlySet<string> = new Set([
  'LLM_UNAVAILABLE',
  'LLM_UNREACHABLE',
  'LLM_TIMEOUT',
  'LLM_AUTH',
  'LLM_MODEL_NOT_FOUND',
  'LLM_HTTP_ERROR',
  'LLM_MALFORMED',
]);

export function isLlmFailure(code: string | undefined): boolean {
  return code !== undefined && LLM_FAILURES.has(code);
}

/** The part of `document` the checks look at (a stand-in in unit tests). */
export interface PageVisibility {
  readonly visibilityState: DocumentVisibilityState;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

export class LlmHealth {
  constructor(
    private readonly watch: Pick<LlmStatusWatch, 'refresh' | 'state'>,
    readonly intervalMs: number,
    private readonly page: PageVisibility,
  ) {}

  get state(): ModelHealth {
    return modelHealth(this.watch.state.status);
  }

  /** Asks the server now; the banner and the header follow its answer. */
  async recheck(): Promise<void> {
    await this.watch.refresh();
  }

  /** A run ended with this error code: when it points at the model, ask again at once. */
  runFailed(code: string | undefined): void {
    if (isLlmFailure(code)) void this.recheck();
  }

  /** Asks every `intervalMs` while the page is visible, and when it comes back into view. */
  start(): () => void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(tick, this.intervalMs);
    };
    const tick = () => {
      if (this.page.visibilityState === 'visible') void this.recheck().finally(schedule);
      else schedule();
    };
    const onVisibility = () => {
      if (this.page.visibilityState === 'visible') {
        clearTimeout(timer);
        tick();
      }
    };
    this.page.addEventListener('visibilitychange', onVisibility);
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
      this.page.removeEventListener('visibilitychange', onVisibility);
    };
  }
}

/** How the chat reaches the app's `LlmHealth` (absent outside the app, e.g. in a lone component). */
export const llmHealthKey: InjectionKey<LlmHealth> = Symbol('llm-health');
