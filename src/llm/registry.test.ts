import { describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { createBackendRegistry } from './registry.js';

describe('createBackendRegistry', () => {
  it('builds ollama and openai from settings and picks DEFAULT_LLM_BACKEND', () => {
    const registry = createBackendRegistry(
      testSettings({
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_MODEL: 'm1',
        OPENAI_NUM_CTX: '32000',
        OLLAMA_NUM_CTX: '2048',
      }),
    );
    expect(registry.list().map((b) => b.id)).toEqual(['ollama', 'openai']);
    expect(registry.default().id).toBe('openai');
    expect(registry.get('openai')).toMatchObject({ defaultModel: 'm1', contextWindow: 32000 });
    expect(registry.get('ollama')).toMatchObject({ defaultModel: 'gemma4:e2b-it-q8_0', contextWindow: 2048 });
    expect(registry.get('ollama').describe()).toContain('http://localhost:11434');
  });

  it('explains that llamacpp is not in this build and how to configure a server instead', () => {
    const registry = createBackendRegistry(testSettings({ DEFAULT_LLM_BACKEND: 'llamacpp' }));
    expect(registry.has('llamacpp')).toBe(false);
    expect(() => registry.get('llamacpp')).toThrow(
      /not available in this build.*DEFAULT_LLM_BACKEND=ollama.*OPENAI_BASE_URL/s,
    );
    expect(() => registry.default()).toThrow(/llamacpp/);
  });

  it('reconfigure rebuilds the backends and moves the default', () => {
    const registry = createBackendRegistry(testSettings({ OLLAMA_DEFAULT_MODEL: 'before' }));
    const old = registry.get('ollama');
    registry.reconfigure(
      testSettings({
        DEFAULT_LLM_BACKEND: 'openai',
        OLLAMA_DEFAULT_MODEL: 'after',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      }),
    );
    expect(registry.defaultId()).toBe('openai');
    expect(registry.default().describe()).toContain('http://127.0.0.1:9/v1');
    expect(registry.get('ollama')).not.toBe(old);
    expect(registry.get('ollama').defaultModel).toBe('after');
    expect(old.defaultModel).toBe('before');
  });

  it('names the known backends for an unknown id', () => {
    expect(() => createBackendRegistry(testSettings()).get('claude')).toThrow(
      'Unknown LLM backend "claude": choose one of ollama, openai.',
    );
  });
});
