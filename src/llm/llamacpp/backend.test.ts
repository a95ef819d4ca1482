import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHATML_WITH_TOOLS,
  TINY_EMBEDDING_LENGTH,
  tinyGguf,
  writeTinyGguf,
} from '../../../test/fixtures/tiny-gguf.js';
import { llamacppRuntimeDir, needsLlamacppRuntime } from '../../../test/support/requirements.js';
import type { CompletionRequest, LlmChunk, ToolSpec } from '../types.js';
import { LlamacppBackend, type LlamacppBackendOptions } from './backend.js';
import { LlamacppRuntime } from './runtime.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-llamacpp-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function backend(options: Partial<LlamacppBackendOptions> & { runtime: LlamacppRuntime }): LlamacppBackend {
  return new LlamacppBackend({
    modelsDir: join(dir, 'models'),
    modelPath: '',
    numCtx: 1024,
    threads: 1,
    gpu: 'off',
    ...options,
  });
}

async function collect(stream: AsyncIterable<LlmChunk>): Promise<LlmChunk[]> {
  const chunks: LlmChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const lastOf = (chunks: LlmChunk[]) => chunks.at(-1) as Extract<LlmChunk, { type: 'done' }>;
const hello: CompletionRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello there' },
  ],
};

describe('LlamacppBackend without a model or runtime', () => {
  it('a missing model file ends the stream with model_not_found, naming navi model pull', async () => {
    const b = backend({
      runtime: new LlamacppRuntime(join(dir, 'no-runtime')),
      modelsDir: join(dir, 'empty'),
    });
    expect(b.defaultModel).toBe('');
    const chunks = await collect(b.streamComplete(hello));
    expect(chunks).toHaveLength(1);
    expect(lastOf(chunks)).toMatchObject({
      type: 'done',
      reason: 'error',
      error: { code: 'model_not_found' },
    });
    expect(lastOf(chunks).error?.message).toMatch(/no \.gguf file.*navi model pull/s);
    await expect(b.complete(hello)).rejects.toMatchObject({ code: 'model_not_found' });
  });

  it('a missing runtime ends the stream with unsupported, naming navi llamacpp install', async () => {
    const models = join(dir, 'models-for-missing-runtime');
    mkdirSync(models, { recursive: true });
    writeTinyGguf(join(models, 'tiny.gguf'));
    const b = backend({ runtime: new LlamacppRuntime(join(dir, 'no-runtime')), modelsDir: models });
    const chunks = await collect(b.streamComplete(hello));
    expect(lastOf(chunks)).toMatchObject({ type: 'done', reason: 'error', error: { code: 'unsupported' } });
    expect(lastOf(chunks).error?.message).toContain('navi llamacpp install');
    expect(await b.checkHealth()).toMatchObject({ ok: false });
    expect((await b.checkHealth()).detail).toContain('navi llamacpp install');
  });

  it('a runtime that cannot start ends the stream with unsupported, saying to reinstall it', async () => {
    const models = join(dir, 'models-for-broken-runtime');
    mkdirSync(models, { recursive: true });
    writeTinyGguf(join(models, 'tiny.gguf'));
    const runtimeDir = join(dir, 'broken-runtime');
    const pkg = join(runtimeDir, 'node_modules', 'node-llama-cpp');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: 'node-llama-cpp',
        version: '3.22.1',
        type: 'module',
        exports: { '.': './dist/index.js' },
      }),
    );
    writeFileSync(
      join(pkg, 'dist', 'index.js'),
      'export const getLlama = async () => { throw new Error("no binary for this CPU"); }; export class LlamaChat {}',
    );
    const b = backend({ runtime: new LlamacppRuntime(runtimeDir), modelsDir: models });
    const done = lastOf(await collect(b.streamComplete(hello)));
    expect(done).toMatchObject({ reason: 'error', error: { code: 'unsupported' } });
    expect(done.error?.message).toMatch(/could not start \(no binary for this CPU\).*navi llamacpp install/);
    expect(await b.checkHealth()).toMatchObject({
      ok: false,
      detail: expect.stringContaining('could not start'),
    });
  });

  it('a file that is not GGUF, or is cut short, is refused before it is loaded', async () => {
    const models = join(dir, 'bad-models');
    mkdirSync(models, { recursive: true });
    writeFileSync(join(models, 'page.gguf'), '<html>Sign in to download</html>');
    writeFileSync(join(models, 'cut.gguf'), tinyGguf().subarray(0, 300));
    const runtime = new LlamacppRuntime(join(dir, 'no-runtime'));
    for (const [name, wording] of [
      ['page.gguf', /not a GGUF file/],
      ['cut.gguf', /cut short/],
    ] as const) {
      const b = backend({ runtime, modelsDir: models, modelPath: name });
      const done = lastOf(await collect(b.streamComplete(hello)));
      expect(done).toMatchObject({ reason: 'error', error: { code: 'unsupported' } });
      expect(done.error?.message).toMatch(wording);
      expect(done.error?.message).toContain('navi model pull');
      expect((await b.checkHealth()).ok).toBe(false);
    }
  });

  it('probe reads the GGUF metadata without the runtime, and never rejects', async () => {
    const models = join(dir, 'probe-models');
    mkdirSync(models, { recursive: true });
    writeTinyGguf(join(models, 'tools.gguf'), { contextLength: 4096 });
    writeTinyGguf(join(models, 'think.gguf'), { chatTemplate: `${CHATML_WITH_TOOLS}{# <think> #}` });
    writeTinyGguf(join(models, 'plain.gguf'), { chatTemplate: '{{ messages[0].content }}' });
    const b = backend({ runtime: new LlamacppRuntime(join(dir, 'no-runtime')), modelsDir: models });
    expect(await b.probe('tools.gguf')).toEqual({
      tools: true,
      thinking: false,
      vision: false,
      contextLength: 4096,
      source: 'GGUF metadata of tools.gguf',
    });
    expect(await b.probe('think.gguf')).toMatchObject({ tools: true, thinking: true, contextLength: 2048 });
    expect(await b.probe('plain.gguf')).toMatchObject({ tools: false, thinking: false });
    const missing = await b.probe('nothere.gguf');
    expect(missing).toEqual({ source: expect.stringContaining('could not be read') });
    // A per-call model name is a file of the models folder, never a path of the client's choosing.
    expect(await b.probe('../../etc/passwd')).toEqual({ source: expect.stringContaining('models folder') });
  });

  it('lists the .gguf files of the models folder with their sizes, and a configured file elsewhere', async () => {
    const models = join(dir, 'list-models');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(models, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    writeTinyGguf(join(models, 'b.gguf'));
    writeTinyGguf(join(models, 'a.gguf'));
    writeFileSync(join(models, 'notes.txt'), 'not a model');
    writeFileSync(join(models, 'c.gguf.partial'), 'half');
    writeTinyGguf(join(elsewhere, 'own.gguf'));
    const size = tinyGguf().length;
    const b = backend({ runtime: new LlamacppRuntime(join(dir, 'no-runtime')), modelsDir: models });
    expect(b.defaultModel).toBe('a.gguf');
    expect(await b.listModels()).toEqual([
      { name: 'a.gguf', sizeBytes: size },
      { name: 'b.gguf', sizeBytes: size },
    ]);
    const own = join(elsewhere, 'own.gguf');
    const configured = backend({
      runtime: new LlamacppRuntime(join(dir, 'no-runtime')),
      modelsDir: models,
      modelPath: own,
    });
    expect(configured.defaultModel).toBe(own);
    expect((await configured.listModels()).map((m) => m.name)).toEqual(['a.gguf', 'b.gguf', own]);
  });
});

describe.skipIf(!needsLlamacppRuntime('llamacpp backend'))('LlamacppBackend on the llama.cpp runtime', () => {
  let runtime: LlamacppRuntime;
  let b: LlamacppBackend;
  beforeAll(() => {
    mkdirSync(join(dir, 'models'), { recursive: true });
    // Greedy decoding never picks this model's end token: answers run to maxTokens, the window or an abort.
    writeTinyGguf(join(dir, 'models', 'tiny.gguf'), { neverEnds: true, contextLength: 8192 });
    runtime = new LlamacppRuntime(llamacppRuntimeDir());
    // Every character of this vocabulary is a token of its own: tool documentation takes room.
    b = backend({ runtime, numCtx: 4096 });
  });
  afterAll(async () => {
    await b?.dispose();
    await runtime?.close();
  });

  it('loads the model on first use, streams text, and reports usage and the finish reason', async () => {
    expect(b.contextWindow).toBe(4096);
    expect((await b.checkHealth()).detail).toContain('loads on the first message');
    const chunks = await collect(b.streamComplete({ ...hello, maxTokens: 12 }));
    const texts = chunks.filter((c) => c.type === 'text');
    expect(texts.length).toBeGreaterThan(0);
    const done = lastOf(chunks);
    expect(done).toMatchObject({ type: 'done', reason: 'length', usage: { completionTokens: 12 } });
    expect(done.usage?.promptTokens).toBeGreaterThan(5);
    expect(chunks.filter((c) => c.type === 'done')).toHaveLength(1);
    // The window is the context actually made: at most LLAMACPP_NUM_CTX.
    expect(b.contextWindow).toBeLessThanOrEqual(4096);
    expect((await b.checkHealth()).detail).toMatch(/loaded, context \d+ tokens/);
  });

  it('ends with "length" when the context window is full instead of forgetting the conversation', async () => {
    const done = lastOf(await collect(b.streamComplete(hello)));
    expect(done.reason).toBe('length');
    const { promptTokens, completionTokens } = done.usage ?? { promptTokens: 0, completionTokens: 0 };
    expect(promptTokens + completionTokens).toBeGreaterThanOrEqual(b.contextWindow - 20);
    expect(promptTokens + completionTokens).toBeLessThanOrEqual(b.contextWindow);
  });

  it("a call's own, smaller window bounds it too; a conversation larger than the window is refused", async () => {
    const small = lastOf(await collect(b.streamComplete({ ...hello, contextWindow: 200 })));
    expect(small.reason).toBe('length');
    expect((small.usage?.promptTokens ?? 0) + (small.usage?.completionTokens ?? 0)).toBeLessThanOrEqual(200);
    const long = lastOf(
      await collect(b.streamComplete({ messages: [{ role: 'user', content: 'word '.repeat(2000) }] })),
    );
    expect(long).toMatchObject({ reason: 'error', error: { code: 'context_overflow' } });
    expect(long.error?.message).toMatch(/takes \d+ tokens.*holds 4096.*LLAMACPP_NUM_CTX/s);
  });

  it('stops generating when the signal fires: the stream ends "aborted" and no text follows', async () => {
    const controller = new AbortController();
    const chunks: LlmChunk[] = [];
    let textsAfterAbort = 0;
    for await (const chunk of b.streamComplete({ ...hello, signal: controller.signal })) {
      chunks.push(chunk);
      if (controller.signal.aborted && chunk.type === 'text') textsAfterAbort++;
      if (chunks.length === 3) controller.abort();
    }
    expect(textsAfterAbort).toBe(0);
    const done = lastOf(chunks);
    expect(done).toMatchObject({ type: 'done', reason: 'aborted' });
    // It did not run on to the end of the window (the previous test shows how far that is).
    expect(done.usage?.completionTokens ?? 0).toBeLessThan(b.contextWindow / 4);
    // The turn passed on: the next call runs.
    expect(lastOf(await collect(b.streamComplete({ ...hello, maxTokens: 2 }))).reason).toBe('length');
  });

  it('a consumer that stops reading stops the model too, and the next call runs', async () => {
    for await (const chunk of b.streamComplete(hello)) {
      if (chunk.type === 'text') break;
    }
    expect(lastOf(await collect(b.streamComplete({ ...hello, maxTokens: 2 }))).reason).toBe('length');
  });

  it('an abort before the call starts ends it at once', async () => {
    const chunks = await collect(b.streamComplete({ ...hello, signal: AbortSignal.abort() }));
    expect(chunks).toEqual([{ type: 'done', reason: 'aborted' }]);
  });

  it('concurrent calls take turns: one answer is whole before the next starts', async () => {
    const order: string[] = [];
    const run = async (tag: string) => {
      for await (const chunk of b.streamComplete({ ...hello, maxTokens: 6 }))
        order.push(`${tag}:${chunk.type}`);
    };
    await Promise.all([run('a'), run('b'), run('c')]);
    const owners = order.map((o) => o.split(':')[0]);
    // Each caller's chunks are one unbroken run ending in its done.
    const runs = owners.filter((o, i) => i === 0 || owners[i - 1] !== o);
    expect(runs.sort()).toEqual(['a', 'b', 'c']);
    for (const tag of ['a', 'b', 'c'])
      expect(order.filter((o) => o.startsWith(`${tag}:`)).at(-1)).toBe(`${tag}:done`);
  });

  it('passes tool definitions (nested, optional, anyOf, patterns) to the model without error', async () => {
    const tools: ToolSpec[] = [
      {
        name: 'read_file',
        description: 'Read a file',
        parameters: {
          type: 'object',
          properties: {
            path: { type: 'string', pattern: '^/', minLength: 1 },
            range: {
              type: 'object',
              properties: { from: { type: 'integer', minimum: 0 }, to: { type: 'integer' } },
            },
            mode: { anyOf: [{ const: 'text' }, { const: 'base64' }] },
            tags: { type: 'array', items: { type: 'string' } },
            extra: {},
          },
          required: ['path'],
          additionalProperties: false,
        },
      },
      { name: 'now', description: 'The time', parameters: { type: 'object', properties: {} } },
    ];
    const done = lastOf(await collect(b.streamComplete({ ...hello, tools, maxTokens: 8 })));
    expect(done.error).toBeUndefined();
    expect(done).toMatchObject({ reason: 'length' });
  });

  it('continues an answer after tool results (the history ends in the model turn holding the calls)', async () => {
    const done = lastOf(
      await collect(
        b.streamComplete({
          messages: [
            { role: 'user', content: 'What time is it?' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'now', arguments: {} }] },
            { role: 'tool', content: '12:00', tool_call_id: 'c1', name: 'now' },
          ],
          maxTokens: 4,
        }),
      ),
    );
    expect(done).toMatchObject({ reason: 'length', usage: { completionTokens: 4 } });
  });

  it('embeds: one vector per input, as long as the model embedding', async () => {
    const result = await b.embed(['hello', 'a longer sentence about Navi']);
    expect(result.model).toBe('tiny.gguf');
    expect(result.vectors).toHaveLength(2);
    for (const vector of result.vectors) {
      expect(vector).toHaveLength(TINY_EMBEDDING_LENGTH);
      expect(vector.every(Number.isFinite)).toBe(true);
    }
    await expect(b.embed(['x'], { signal: AbortSignal.abort() })).rejects.toBeDefined();
  });

  it('a model name of the call is a file of the models folder; another one is loaded in its place', async () => {
    writeTinyGguf(join(dir, 'models', 'other.gguf'), { seed: 7, contextLength: 512 });
    const done = lastOf(await collect(b.streamComplete({ ...hello, model: 'other.gguf', maxTokens: 3 })));
    expect(done.reason).not.toBe('error');
    expect(b.contextWindow).toBeLessThanOrEqual(512);
    const missing = lastOf(await collect(b.streamComplete({ ...hello, model: 'gone.gguf' })));
    expect(missing).toMatchObject({ reason: 'error', error: { code: 'model_not_found' } });
    const hostile = lastOf(await collect(b.streamComplete({ ...hello, model: 'x'.repeat(5000) })));
    expect(hostile).toMatchObject({ reason: 'error', error: { code: 'model_not_found' } });
    expect(hostile.error?.message.length).toBeLessThan(600);
    const outside = lastOf(await collect(b.streamComplete({ ...hello, model: '/etc/passwd' })));
    expect(outside).toMatchObject({ reason: 'error', error: { code: 'model_not_found' } });
    expect(outside.error?.message).toContain('models folder');
  });
});
