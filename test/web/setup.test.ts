/**
 * The setup screen's logic (web/src/lib/setup.ts): sizes and progress as shown, the steps of a
 * connection test, what choosing a model saves and when the environment forbids it, the checks
 * of the forms (missing, wrong, oversized and hostile input), the repeating status poll, and the
 * status watch, where a newer answer wins over a slower older one.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LlmSettingsView, LlmStatus, ModelDownload } from '../../src/protocol/llm.js';
import {
  contextText,
  downloadFormProblem,
  downloadProgress,
  LlmStatusWatch,
  localChoice,
  modelSize,
  ollamaChoice,
  openAiChoice,
  openAiFormProblem,
  planSave,
  repeat,
  serverUrlProblem,
  testSteps,
} from '../../web/src/lib/setup.js';

const view = (locked: LlmSettingsView['locked'] = []): LlmSettingsView => ({
  values: {
    DEFAULT_LLM_BACKEND: 'ollama',
    OLLAMA_HOST: 'http://127.0.0.1:11434',
    OLLAMA_DEFAULT_MODEL: 'qwen3:4b',
    OPENAI_BASE_URL: 'https://api.openai.com/v1',
    OPENAI_API_KEY: '',
    OPENAI_MODEL: 'gpt-4o-mini',
    LLAMACPP_MODEL_PATH: '',
  },
  api_key_set: false,
  locked,
});

const download = (over: Partial<ModelDownload>): ModelDownload => ({
  id: 'd1',
  source: 'qwen2.5-3b',
  file_name: 'qwen2.5-3b.gguf',
  state: 'running',
  bytes: 0,
  total_bytes: null,
  ...over,
});

const status = (over: Partial<LlmStatus> = {}): LlmStatus => ({
  default_backend: 'ollama',
  default_model: 'qwen3:4b',
  needs_setup: true,
  backends: [],
  ollama_detected: null,
  capabilities: null,
  ...over,
});

describe('sizes and context', () => {
  it('shows model sizes in decimal units as model hubs do', () => {
    expect(modelSize(2_104_932_768)).toBe('2.1 GB');
    expect(modelSize(808_000_000)).toBe('808 MB');
    expect(modelSize(12_345_678)).toBe('12.3 MB');
    expect(modelSize(999)).toBe('999 B');
    expect(modelSize(1000)).toBe('1 KB');
  });

  it('shows "?" for a size that is not a size', () => {
    expect(modelSize(Number.NaN)).toBe('?');
    expect(modelSize(-5)).toBe('?');
  });

  it('writes a context length in thousands of tokens', () => {
    expect(contextText(32_768)).toBe('32k');
    expect(contextText(131_072)).toBe('128k');
    expect(contextText(512)).toBe('512');
  });
});

describe('downloadProgress', () => {
  it('gives bytes of total and a whole percent, rounded down', () => {
    const p = downloadProgress(download({ bytes: 999_000_000, total_bytes: 1_000_000_000 }));
    expect(p.percent).toBe('99%');
    expect(p.fraction).toBeCloseTo(0.999);
    expect(p.text).toBe('999 MB of 1.0 GB (99%)');
  });

  it('says the size is not known yet when the server has not told it', () => {
    const p = downloadProgress(download({ bytes: 5_000_000, total_bytes: null }));
    expect(p.fraction).toBeNull();
    expect(p.percent).toBe('');
    expect(p.text).toContain('5.0 MB so far');
  });

  it('is full when done, and never beyond full when the server sends more than it announced', () => {
    expect(downloadProgress(download({ state: 'done', bytes: 10, total_bytes: 10 })).fraction).toBe(1);
    expect(downloadProgress(download({ bytes: 20, total_bytes: 10 })).fraction).toBe(1);
    expect(downloadProgress(download({ bytes: 10, total_bytes: 0 })).fraction).toBeNull();
  });
});

describe('testSteps', () => {
  it('marks the steps before a failed auth as passed, auth failed and the rest not reached', () => {
    const steps = testSteps({ ok: false, step: 'auth', message: 'HTTP 401' });
    expect(steps.map((s) => [s.step, s.state])).toEqual([
      ['connect', 'passed'],
      ['auth', 'failed'],
      ['models', 'not-reached'],
      ['model', 'not-reached'],
    ]);
  });

  it('ends at the model list when no model was asked for', () => {
    const steps = testSteps({ ok: true, step: 'models', message: 'lists 3 models' });
    expect(steps.map((s) => s.state)).toEqual(['passed', 'passed', 'passed', 'not-reached']);
  });

  it('passes every step when the model is there', () => {
    expect(testSteps({ ok: true, step: 'model', message: 'ok' }).every((s) => s.state === 'passed')).toBe(
      true,
    );
  });
});

describe('planSave', () => {
  it('saves a choice whole when nothing is locked', () => {
    const plan = planSave(ollamaChoice('http://127.0.0.1:4000', 'fake:1b'), view());
    expect(plan).toEqual({
      ok: true,
      update: {
        DEFAULT_LLM_BACKEND: 'ollama',
        OLLAMA_HOST: 'http://127.0.0.1:4000',
        OLLAMA_DEFAULT_MODEL: 'fake:1b',
      },
    });
  });

  it('drops a locked setting the choice keeps as it is', () => {
    const plan = planSave(ollamaChoice('http://127.0.0.1:11434', 'llama3.2'), view(['OLLAMA_HOST']));
    expect(plan).toEqual({
      ok: true,
      update: { DEFAULT_LLM_BACKEND: 'ollama', OLLAMA_DEFAULT_MODEL: 'llama3.2' },
    });
  });

  it('refuses a choice that needs a locked setting changed, naming it, its value and what to do', () => {
    const plan = planSave(ollamaChoice('http://10.0.0.5:11434', 'llama3.2'), view(['OLLAMA_HOST']));
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.problem).toContain('OLLAMA_HOST');
    expect(plan.problem).toContain('http://127.0.0.1:11434');
    expect(plan.problem).toContain('http://10.0.0.5:11434');
    expect(plan.problem).toContain('restart Navi');
  });

  it('refuses a new key when the environment fixes the key, and lets an empty one through', () => {
    const locked = view(['OPENAI_API_KEY']);
    const withKey = planSave(openAiChoice({ baseUrl: 'http://x/v1', apiKey: 'sk-1', model: 'm' }), locked);
    expect(withKey.ok).toBe(false);
    const withoutKey = planSave(openAiChoice({ baseUrl: 'http://x/v1', apiKey: '  ', model: 'm' }), locked);
    expect(withoutKey).toEqual({
      ok: true,
      update: { DEFAULT_LLM_BACKEND: 'openai', OPENAI_BASE_URL: 'http://x/v1', OPENAI_MODEL: 'm' },
    });
  });

  it('saves everything when the settings could not be read (the server decides)', () => {
    expect(planSave(localChoice('tiny.gguf'), null)).toEqual({
      ok: true,
      update: { DEFAULT_LLM_BACKEND: 'llamacpp', LLAMACPP_MODEL_PATH: 'tiny.gguf' },
    });
  });
});

describe('the OpenAI-compatible form', () => {
  const form = { baseUrl: 'http://localhost:8080/v1', apiKey: '', model: 'qwen' };

  it('accepts a full form, and one without a model for a test', () => {
    expect(openAiFormProblem(form, true)).toBeNull();
    expect(openAiFormProblem({ ...form, model: '' }, false)).toBeNull();
  });

  it('asks for what is missing', () => {
    expect(openAiFormProblem({ ...form, baseUrl: '  ' }, false)).toContain("Enter the server's address");
    expect(openAiFormProblem({ ...form, model: ' ' }, true)).toContain('Enter the model');
  });

  it('refuses what is not an http address, with an example', () => {
    expect(openAiFormProblem({ ...form, baseUrl: 'localhost:8080' }, false)).toContain('http://');
    expect(openAiFormProblem({ ...form, baseUrl: 'not a url' }, false)).toContain('not an address');
    expect(openAiFormProblem({ ...form, baseUrl: 'javascript:alert(1)' }, false)).toContain(
      'must start with http:// or https://',
    );
    expect(openAiFormProblem({ ...form, baseUrl: 'file:///etc/passwd' }, false)).toContain('http://');
  });

  it('refuses credentials in the address: the key has its own field', () => {
    expect(serverUrlProblem('https://user:secret@example.org/v1', 'x')).toContain('API key field');
  });

  it('refuses oversized values, naming the field', () => {
    expect(openAiFormProblem({ ...form, baseUrl: `http://a/${'x'.repeat(3000)}` }, false)).toContain(
      'characters',
    );
    expect(openAiFormProblem({ ...form, apiKey: 'k'.repeat(5000) }, false)).toContain('API key');
    expect(openAiFormProblem({ ...form, model: 'm'.repeat(300) }, true)).toContain('model name');
  });

  it('trims what it saves and keeps the saved key when the field is empty', () => {
    expect(openAiChoice({ baseUrl: ' http://h/v1 ', apiKey: ' sk ', model: ' m ' })).toEqual({
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_BASE_URL: 'http://h/v1',
      OPENAI_MODEL: 'm',
      OPENAI_API_KEY: 'sk',
    });
    expect(openAiChoice({ baseUrl: 'http://h/v1', apiKey: '', model: 'm' })).not.toHaveProperty(
      'OPENAI_API_KEY',
    );
  });
});

describe('downloadFormProblem', () => {
  it('asks for a source and accepts one with or without a checksum', () => {
    expect(downloadFormProblem(' ', '')).toContain('Enter what to download');
    expect(downloadFormProblem('hf:org/repo/m.gguf', '')).toBeNull();
    expect(downloadFormProblem('hf:org/repo/m.gguf', 'A'.repeat(64))).toBeNull();
  });

  it('refuses a checksum that is not a SHA-256, and an oversized source', () => {
    expect(downloadFormProblem('hf:o/r/m.gguf', 'abc')).toContain('64 hexadecimal');
    expect(downloadFormProblem('hf:o/r/m.gguf', `${'a'.repeat(63)}g`)).toContain('64 hexadecimal');
    expect(downloadFormProblem(`https://x/${'a'.repeat(3000)}.gguf`, '')).toContain('characters long');
  });
});

describe('repeat', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at once, then again only after the run before has finished, until stopped', async () => {
    vi.useFakeTimers();
    let running = 0;
    let most = 0;
    let runs = 0;
    let finish: () => void = () => {};
    const stop = repeat(async () => {
      runs += 1;
      running += 1;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      running -= 1;
    }, 1000);
    expect(runs).toBe(1);
    // Time passes while the first run is still going: no second run starts.
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(2);
    stop();
    finish();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(2);
    expect(most).toBe(1);
  });

  it('keeps going after a run that failed', async () => {
    vi.useFakeTimers();
    let runs = 0;
    const stop = repeat(async () => {
      runs += 1;
      throw new Error('server down');
    }, 1000);
    await vi.advanceTimersByTimeAsync(2500);
    expect(runs).toBe(3);
    stop();
  });
});

describe('LlmStatusWatch', () => {
  it('keeps the answer of the newest request when an older one arrives later', async () => {
    const answers: ((s: LlmStatus) => void)[] = [];
    const watch = new LlmStatusWatch(
      () => new Promise<LlmStatus>((resolve) => answers.push(resolve)),
      (e) => String(e),
    );
    const first = watch.refresh();
    const second = watch.refresh();
    answers[1]?.(status({ needs_setup: false }));
    await second;
    answers[0]?.(status({ needs_setup: true }));
    await first;
    expect(watch.state.status?.needs_setup).toBe(false);
  });

  it('reports why the status could not be asked and keeps the last one it had', async () => {
    let fail = false;
    const watch = new LlmStatusWatch(
      async () => {
        if (fail) throw new Error('The Navi server cannot be reached.');
        return status();
      },
      (e) => (e as Error).message,
    );
    await watch.refresh();
    fail = true;
    await watch.refresh();
    expect(watch.state.error).toBe('The Navi server cannot be reached.');
    expect(watch.state.status?.default_model).toBe('qwen3:4b');
  });
});
