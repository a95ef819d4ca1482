import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../../test/fake-llm/index.js';
import { testSettings } from '../config/settings.js';
import { CapabilityCache, capabilitiesInfo, describeCapabilities, effectiveContext } from './capabilities.js';
import { createBackendRegistry } from './registry.js';
import type { LlmBackend } from './types.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm({ models: ['small', 'big'] });
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

function backends(url = fake.url) {
  return createBackendRegistry(
    testSettings({
      OLLAMA_HOST: url,
      OLLAMA_DEFAULT_MODEL: 'small',
      OLLAMA_NUM_CTX: '32768',
      OPENAI_BASE_URL: `${url}/v1`,
      OPENAI_MODEL: 'small',
      OPENAI_API_KEY: '',
      OPENAI_NUM_CTX: '16384',
    }),
  );
}
/** The least a backend must have; `probe` is optional in the contract. */
function minimalBackend(id: string, probe?: LlmBackend['probe']): LlmBackend {
  const unused = () => {
    throw new Error(`${id}: not used in these tests`);
  };
  return {
    id,
    defaultModel: 'm',
    contextWindow: 4096,
    describe: () => id,
    streamComplete: unused,
    complete: unused,
    checkHealth: unused,
    ...(probe ? { probe } : {}),
  };
}
const shows = () => fake.requests.filter((r) => r.kind === 'show').length;
const withContext = (contextLength: number, capabilities = ['completion', 'tools']) => ({
  show: {
    capabilities,
    model_info: { 'general.architecture': 'llama', 'llama.context_length': contextLength },
  },
});

describe('CapabilityCache', () => {
  it('asks once for concurrent gets and keeps the answer', async () => {
    fake.setModelInfo('small', withContext(8192));
    const ollama = backends().get('ollama');
    const cache = new CapabilityCache();
    const answers = await Promise.all([
      cache.get(ollama, 'small'),
      cache.get(ollama, 'small'),
      cache.get(ollama, 'small'),
    ]);
    expect(shows()).toBe(1);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[0]).toMatchObject({ tools: true, vision: false, contextLength: 8192 });
    expect(await cache.get(ollama, 'small')).toBe(answers[0]);
    expect(cache.peek(ollama, 'small')).toBe(answers[0]);
    expect(shows()).toBe(1);
  });

  it('keeps models and backends apart', async () => {
    fake.setModelInfo('small', withContext(8192));
    fake.setModelInfo('big', withContext(131072, ['completion']));
    fake.setModelInfo('small', { ...withContext(8192), openai: { max_model_len: 4096 } });
    const registry = backends();
    const cache = new CapabilityCache();
    expect((await cache.get(registry.get('ollama'), 'small')).contextLength).toBe(8192);
    expect((await cache.get(registry.get('ollama'), 'big')).tools).toBe(false);
    expect(await cache.get(registry.get('openai'), 'small')).toEqual({
      contextLength: 4096,
      source: 'openai /models',
    });
    expect(cache.peek(registry.get('openai'), 'big')).toBeUndefined();
  });

  it('asks again after invalidate: everything, one backend, or one model', async () => {
    fake.setModelInfo('small', withContext(8192));
    const ollama = backends().get('ollama');
    const cache = new CapabilityCache();
    await cache.get(ollama, 'small');
    await cache.get(ollama, 'big');
    fake.setModelInfo('small', withContext(4096));
    cache.invalidate('ollama', 'big');
    expect((await cache.get(ollama, 'small')).contextLength).toBe(8192);
    expect(shows()).toBe(2);
    cache.invalidate('ollama', 'small');
    expect((await cache.get(ollama, 'small')).contextLength).toBe(4096);
    cache.invalidate('openai');
    await cache.get(ollama, 'small');
    cache.invalidate('ollama');
    await cache.get(ollama, 'small');
    cache.invalidate();
    await cache.get(ollama, 'big');
    expect(shows()).toBe(5);
  });

  it('asks a backend rebuilt with new settings afresh', async () => {
    fake.setModelInfo('small', withContext(8192));
    const cache = new CapabilityCache();
    const registry = backends();
    await cache.get(registry.get('ollama'), 'small');
    registry.reconfigure(testSettings({ OLLAMA_HOST: fake.url, OLLAMA_DEFAULT_MODEL: 'small' }));
    expect(cache.peek(registry.get('ollama'), 'small')).toBeUndefined();
    await cache.get(registry.get('ollama'), 'small');
    expect(shows()).toBe(2);
  });

  it('remembers an answer that learned nothing only for retryAfterMs', async () => {
    let now = 1_000;
    const cache = new CapabilityCache({ retryAfterMs: 30_000, now: () => now });
    const ollama = backends().get('ollama');
    const missing = await cache.get(ollama, 'absent');
    expect(missing.source).toContain('ollama pull absent');
    now += 29_999;
    await cache.get(ollama, 'absent');
    expect(shows()).toBe(1);
    now += 1;
    expect(cache.peek(ollama, 'absent')).toBeUndefined();
    await cache.get(ollama, 'absent');
    expect(shows()).toBe(2);
  });

  it('retries a server that was down once it may be back', async () => {
    let now = 0;
    const cache = new CapabilityCache({ now: () => now });
    const down = backends(await closedPortUrl()).get('ollama');
    expect((await cache.get(down, 'small')).source).toContain('Cannot reach');
    now += 30_000;
    expect((await cache.get(down, 'small')).source).toContain('Cannot reach');
  });

  it("stops one caller's wait on abort while the shared probe goes on for the others", async () => {
    fake.setEndpointError('show', { hang: true });
    const registry = createBackendRegistry(
      testSettings({ OLLAMA_HOST: fake.url, LLM_CONNECT_TIMEOUT_MS: '300' }),
    );
    const ollama = registry.get('ollama');
    const cache = new CapabilityCache();
    const patient = cache.get(ollama, 'small');
    const controller = new AbortController();
    const hasty = cache.get(ollama, 'small', controller.signal);
    await fake.waitForRequests(1);
    controller.abort();
    expect(await hasty).toEqual({ source: expect.stringContaining('the caller gave up') });
    expect((await patient).source).toContain('LLM_CONNECT_TIMEOUT_MS');
    expect(shows()).toBe(1);
    expect(await cache.get(ollama, 'small', AbortSignal.abort())).toEqual({
      source: expect.stringContaining('the caller gave up'),
    });
  });

  it('answers for a backend that cannot be asked, and for one whose probe breaks its promise', async () => {
    const cache = new CapabilityCache();
    expect(await cache.get(minimalBackend('mute'), 'm')).toEqual({
      source: 'mute cannot say what a model can do',
    });
    const broken = minimalBackend('broken', () => Promise.reject(new Error('kaput')));
    expect(await cache.get(broken, 'm')).toEqual({ source: 'broken probe failed: kaput' });
  });

  it('clamps the context to what the model takes, and gives the REST shape', () => {
    const ollama = backends().get('ollama');
    expect(effectiveContext(ollama, { contextLength: 8192, source: 's' })).toBe(8192);
    expect(effectiveContext(ollama, { contextLength: 131072, source: 's' })).toBe(32768);
    expect(effectiveContext(ollama, { source: 's' })).toBe(32768);
    expect(capabilitiesInfo({ tools: false, contextLength: 2048, source: 'ollama /api/show' })).toEqual({
      tools: false,
      thinking: null,
      vision: null,
      context_length: 2048,
      source: 'ollama /api/show',
    });
  });
});

describe('describeCapabilities', () => {
  it('says each capability in one line, or that none is known', () => {
    expect(
      describeCapabilities('qwen3:8b', {
        tools: true,
        thinking: false,
        contextLength: 40960,
        source: 'ollama /api/show',
      }),
    ).toBe('model qwen3:8b: tools yes, thinking no, vision unknown, context 40960 (ollama /api/show)');
    expect(describeCapabilities('m', { source: 'openai /models' })).toBe(
      'model m: capabilities unknown (openai /models)',
    );
  });
});
