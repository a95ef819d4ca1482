/**
 * Navi thinking with the embedded llamacpp backend: a real Navi (real SQLite, real port) whose
 * default backend is llamacpp, running the tiny random-weight GGUF fixture on the installed
 * llama.cpp runtime. What the model says is noise; what is checked is the path around it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grammarSchema } from '../../src/llm/llamacpp/chat-history.js';
import type { LlmChunk } from '../../src/llm/types.js';
import type { LlamacppRuntimeStatus, LlmModelList, LlmStatus } from '../../src/protocol/llm.js';
import type { MessageReply } from '../../src/protocol/rest.js';
import { writeTinyGguf } from '../fixtures/tiny-gguf.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { llamacppRuntimeDir, needsLlamacppRuntime } from '../support/requirements.js';
import { postMessage } from '../support/rest.js';

describe.skipIf(!needsLlamacppRuntime('Navi on the llamacpp backend'))('Navi on the llamacpp backend', () => {
  let navi: NaviHandle;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'navi-llamacpp-it-'));
    const models = join(dir, 'data', 'models');
    mkdirSync(models, { recursive: true });
    // Every character is a token of this vocabulary: Navi's system prompt and tools need room.
    writeTinyGguf(join(models, 'tiny.gguf'), { contextLength: 32768 });
    writeTinyGguf(join(models, 'zz-endless.gguf'), { contextLength: 32768, neverEnds: true });
    navi = await startNavi({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'llamacpp',
        LLAMACPP_MODEL_PATH: 'tiny.gguf',
        LLAMACPP_RUNTIME_DIR: llamacppRuntimeDir(),
        LLAMACPP_NUM_CTX: '32768',
        LLAMACPP_THREADS: '1',
        LLAMACPP_GPU: 'off',
      },
    });
  });
  afterAll(async () => {
    await navi?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${navi.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };

  it('reports the runtime, the model and what it can do', async () => {
    expect(await get<LlamacppRuntimeStatus>('/llm/runtime')).toMatchObject({
      installed: true,
      installing: false,
    });
    const status = await get<LlmStatus>('/llm/status');
    expect(status).toMatchObject({
      default_backend: 'llamacpp',
      default_model: 'tiny.gguf',
      needs_setup: false,
    });
    expect(status.capabilities).toMatchObject({ tools: true, vision: false, context_length: 32768 });
    const models = await get<LlmModelList>('/llm/models');
    expect(models.models.filter((m) => m.backend === 'llamacpp')).toEqual([
      { backend: 'llamacpp', model: 'tiny.gguf', size_bytes: expect.any(Number), is_default: true },
      { backend: 'llamacpp', model: 'zz-endless.gguf', size_bytes: expect.any(Number), is_default: false },
    ]);
  });

  it('answers a message over REST with the tiny model', async () => {
    const session = await navi.createSession();
    const res = await postMessage(navi, session, 'Hello, who are you?');
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const reply = JSON.parse(text) as MessageReply;
    expect(reply.stopped).toBe(false);
    expect(typeof reply.content).toBe('string');
  });

  it('every tool schema Navi offers becomes a grammar llama.cpp accepts', async () => {
    const runtime = navi.services.llamacppRuntime;
    if (!runtime) throw new Error('the services have no llama.cpp runtime');
    const llama = (await runtime.llama('off')) as unknown as {
      createGrammarForJsonSchema(schema: unknown): Promise<unknown>;
    };
    const failures: string[] = [];
    for (const { tool } of navi.services.tools.list()) {
      const schema = grammarSchema(tool.parameters);
      if (!schema) continue;
      await llama.createGrammarForJsonSchema(schema).catch((err: unknown) => {
        failures.push(`${tool.name}: ${(err as Error).message}`);
      });
    }
    expect(failures).toEqual([]);
    expect(navi.services.tools.list().length).toBeGreaterThan(10);
  });

  it('keeps the event loop free while the model generates: /health answers mid-answer', async () => {
    const backend = navi.services.llm?.backends.get('llamacpp');
    if (!backend) throw new Error('no llamacpp backend');
    const controller = new AbortController();
    let health: number | undefined;
    const chunks: LlmChunk[] = [];
    for await (const chunk of backend.streamComplete({
      model: 'zz-endless.gguf',
      messages: [{ role: 'user', content: 'Tell me a long story.' }],
      signal: controller.signal,
    })) {
      chunks.push(chunk);
      if (chunk.type === 'text' && health === undefined) {
        health = (await fetch(`${navi.url}/health`)).status;
        controller.abort();
      }
    }
    expect(health).toBe(200);
    const done = chunks.at(-1) as Extract<LlmChunk, { type: 'done' }>;
    expect(done).toMatchObject({ type: 'done', reason: 'aborted' });
    // This model never ends on its own: had the loop been blocked until the window was full
    // (32768 tokens), /health could only have answered after that, and the abort come too late.
    expect(done.usage?.completionTokens ?? Number.POSITIVE_INFINITY).toBeLessThan(16_000);
  });
});
