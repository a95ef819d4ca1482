/**
 * Whether the default model answers, as the web client keeps it (web/src/lib/llm-health.ts):
 * what the banner and the header read from `GET /llm/status`, the re-check interval a page's
 * address may set, which failed runs ask again (and which hints of lib/failed-turn.ts point at
 * the LLM server), and the checks that run only while the page is visible. The status comes from a stand-in load function behind the real LlmStatusWatch; the
 * timers are vitest's fake ones, so nothing waits on the clock.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LlmStatus } from '../../src/protocol/llm.js';
import { errorHint, retryHint } from '../../web/src/lib/failed-turn.js';
import {
  checkIntervalMs,
  DEFAULT_CHECK_MS,
  describeInterval,
  isLlmFailure,
  LlmHealth,
  modelHealth,
  type PageVisibility,
} from '../../web/src/lib/llm-health.js';
import { LlmStatusWatch } from '../../web/src/lib/setup.js';

function status(ready: boolean, detail: string): LlmStatus {
  return {
    default_backend: 'ollama',
    default_model: 'gemma4:e2b',
    needs_setup: !ready,
    backends: [
      { id: 'openai', ready: false, detail: 'openai: not configured', default_model: '' },
      { id: 'ollama', ready, detail, default_model: 'gemma4:e2b' },
    ],
    ollama_detected: null,
    capabilities: null,
  };
}

const DOWN = 'Cannot reach the Ollama server at http://127.0.0.1:11434 (connection refused).';

class Page implements PageVisibility {
  visibilityState: DocumentVisibilityState = 'visible';
  private listeners: (() => void)[] = [];
  addEventListener(_type: 'visibilitychange', listener: () => void): void {
    this.listeners.push(listener);
  }
  removeEventListener(_type: 'visibilitychange', listener: () => void): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }
  show(state: DocumentVisibilityState): void {
    this.visibilityState = state;
    for (const listener of this.listeners) listener();
  }
  get listening(): number {
    return this.listeners.length;
  }
}

describe('modelHealth', () => {
  it('is unknown before the first answer', () => {
    expect(modelHealth(null)).toEqual({ state: 'unknown', backend: null, model: '', detail: '' });
  });

  it("names the default backend, its model and that backend's own sentence", () => {
    expect(modelHealth(status(false, DOWN))).toEqual({
      state: 'unreachable',
      backend: 'ollama',
      model: 'gemma4:e2b',
      detail: DOWN,
    });
    expect(
      modelHealth(status(true, 'ollama at http://127.0.0.1:11434: model gemma4:e2b is available')).state,
    ).toBe('ready');
  });

  it('says nothing it does not know when the default backend is missing from the list', () => {
    const odd = { ...status(false, DOWN), default_backend: 'llamacpp' as const, default_model: '' };
    expect(modelHealth(odd)).toEqual({ state: 'unreachable', backend: 'llamacpp', model: '', detail: '' });
  });
});

describe('checkIntervalMs', () => {
  it('is 30 s unless the address names another interval', () => {
    expect(DEFAULT_CHECK_MS).toBe(30_000);
    expect(checkIntervalMs('')).toBe(30_000);
    expect(checkIntervalMs('?other=1')).toBe(30_000);
    expect(checkIntervalMs('?llm_check_ms=500')).toBe(500);
  });

  it('ignores what is not a whole number, and keeps a number within bounds', () => {
    for (const bad of ['abc', '-5', '1e3', '12.5', '', ' 500', '0x20', '<script>'])
      expect(checkIntervalMs(`?llm_check_ms=${encodeURIComponent(bad)}`), bad).toBe(30_000);
    expect(checkIntervalMs('?llm_check_ms=0')).toBe(100);
    expect(checkIntervalMs(`?llm_check_ms=${'9'.repeat(400)}`)).toBe(3_600_000);
  });
});

describe('describeInterval', () => {
  it('says how often in words', () => {
    expect(describeInterval(300)).toBe('every 300 ms');
    expect(describeInterval(30_000)).toBe('every 30 s');
    expect(describeInterval(600_000)).toBe('every 10 min');
  });
});

describe('isLlmFailure', () => {
  it("is true for failures on the model's side only", () => {
    for (const code of [
      'LLM_UNREACHABLE',
      'LLM_TIMEOUT',
      'LLM_AUTH',
      'LLM_MODEL_NOT_FOUND',
      'LLM_UNAVAILABLE',
      'LLM_HTTP_ERROR',
      'LLM_MALFORMED',
    ])
      expect(isLlmFailure(code), code).toBe(true);
    for (const code of [
      undefined,
      '',
      'RUN_ACTIVE',
      'CONTEXT_OVERFLOW',
      'IMAGES_UNSUPPORTED',
      'llm_unreachable',
    ])
      expect(isLlmFailure(code), String(code)).toBe(false);
  });
});

describe('the hints of a failed turn and of a refusal', () => {
  it('point at the LLM server (navi doctor) for the failures on its side, and at nothing else', () => {
    expect(retryHint('LLM_HTTP_ERROR')).toContain('npx navi doctor');
    expect(errorHint('LLM_UNREACHABLE', false)).toContain('npx navi doctor');
    expect(retryHint('CONTEXT_OVERFLOW')).toContain('larger context window');
    expect(retryHint(undefined)).not.toContain('navi doctor');
    expect(errorHint('RUN_ACTIVE', false)).not.toContain('navi doctor');
    expect(errorHint('LLM_UNREACHABLE', true)).toBe(
      'Nothing was lost: fix what the message says and try again.',
    );
  });
});

describe('LlmHealth', () => {
  let answers: LlmStatus[];
  let asked: number;
  let page: Page;
  let health: LlmHealth;

  beforeEach(() => {
    vi.useFakeTimers();
    answers = [status(false, DOWN)];
    asked = 0;
    page = new Page();
    const watch = new LlmStatusWatch(
      async () => {
        asked += 1;
        const next = answers.length > 1 ? answers.shift() : answers[0];
        if (!next) throw new Error('no status scripted');
        return next;
      },
      (err) => String(err),
    );
    health = new LlmHealth(watch, 1000, page);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks every interval while started and the page is visible, and follows the answer', async () => {
    answers = [status(false, DOWN), status(true, 'ollama at x: model gemma4:e2b is available')];
    const stop = health.start();
    expect(asked).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked).toBe(1);
    expect(health.state).toMatchObject({ state: 'unreachable', detail: DOWN });
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked).toBe(2);
    expect(health.state.state).toBe('ready');
    stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(asked).toBe(2);
    expect(page.listening).toBe(0);
  });

  it('does not ask while the page is hidden, and asks at once when it is shown again', async () => {
    const stop = health.start();
    page.show('hidden');
    await vi.advanceTimersByTimeAsync(3000);
    expect(asked).toBe(0);
    page.show('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toBe(1);
    stop();
  });

  it('asks at once after a run failed on the model, and not after other failures', async () => {
    health.runFailed('RUN_ACTIVE');
    health.runFailed(undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toBe(0);
    health.runFailed('LLM_UNREACHABLE');
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toBe(1);
    expect(health.state.state).toBe('unreachable');
  });
});
