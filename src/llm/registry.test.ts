import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { createBackendRegistry } from './registry.js';

describe('createBackendRegistry', () => {
  it('builds ollama, openai and llamacpp from settings and picks DEFAULT_LLM_BACKEND', () => {
    const registry = createBackendRegistry(
      testSettings({
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_MODEL: 'm1',
        OPENAI_NUM_CTX: '32000',
        OLLAMA_NUM_CTX: '2048',
      }),
    );
    expect(registry.list().map((b) => b.id)).toEqual(['ollama', 'openai', 'llamacpp']);
    expect(registry.default().id).toBe('openai');
    expect(registry.get('openai')).toMatchObject({ defaultModel: 'm1', contextWindow: 32000 });
    expect(registry.get('ollama')).toMatchObject({ defaultModel: 'gemma4:e2b-it-q8_0', contextWindow: 2048 });
    expect(registry.get('ollama').describe()).toContain('http://localhost:11434');
  });

  it('builds llamacpp without its runtime: nothing is loaded until a call, which then says how to install it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'navi-registry-'));
    try {
      const registry = createBackendRegistry(
        testSettings({
          DEFAULT_LLM_BACKEND: 'llamacpp',
          LLAMACPP_RUNTIME_DIR: join(empty, 'runtime'),
          NAVI_MODELS_DIR: join(empty, 'models'),
          LLAMACPP_NUM_CTX: '4096',
        }),
      );
      const backend = registry.default();
      expect(backend.id).toBe('llamacpp');
      expect(backend.contextWindow).toBe(4096);
      expect(backend.describe()).toContain(join(empty, 'models'));
      const health = await backend.checkHealth();
      expect(health.ok).toBe(false);
      expect(health.detail).toContain('navi llamacpp install');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('reconfigure keeps the llamacpp backend (and its loaded model) while its settings stay, and replaces it when they change', () => {
    const registry = createBackendRegistry(testSettings({ LLAMACPP_NUM_CTX: '4096' }));
    const first = registry.get('llamacpp');
    registry.reconfigure(testSettings({ LLAMACPP_NUM_CTX: '4096', OLLAMA_DEFAULT_MODEL: 'other' }));
    expect(registry.get('llamacpp')).toBe(first);
    registry.reconfigure(testSettings({ LLAMACPP_NUM_CTX: '4096', LLAMACPP_MODEL_PATH: 'other.gguf' }));
    expect(registry.get('llamacpp')).not.toBe(first);
    expect(registry.get('llamacpp').defaultModel).toBe('other.gguf');
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
      'Unknown LLM backend "claude": choose one of ollama, openai, llamacpp.',
    );
  });
});
