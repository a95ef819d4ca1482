import { describe, expect, it } from 'vitest';
import type { LlmBackend } from '../llm/types.js';
import { backendLocation } from './sampler.js';

const backend = (id: string, description: string) => ({ id, describe: () => description }) as LlmBackend;

describe('backendLocation', () => {
  it('is local for the embedded backend and a loopback address, remote for any other host', () => {
    expect(backendLocation(backend('llamacpp', 'llamacpp (embedded llama.cpp, model m)'))).toBe('local');
    expect(backendLocation(backend('ollama', 'ollama at http://127.0.0.1:11434 (model m)'))).toBe('local');
    expect(backendLocation(backend('ollama', 'ollama at http://localhost:11434 (model m)'))).toBe('local');
    expect(backendLocation(backend('openai', 'openai at http://[::1]:8080/v1 (model m)'))).toBe('local');
    expect(backendLocation(backend('openai', 'openai at https://api.openai.com/v1 (model m)'))).toBe(
      'remote',
    );
    expect(backendLocation(backend('ollama', 'ollama at http://192.168.1.10:11434 (model m)'))).toBe(
      'remote',
    );
    expect(backendLocation(backend('other', 'a backend somewhere'))).toBeUndefined();
  });
});
