import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, collect, type FakeLlm, startFakeLlm } from '../../test/fake-llm/index.js';
import { type SettingName, testSettings } from '../config/settings.js';
import { createBackendRegistry } from './registry.js';
import { type LlmChunk, LlmError } from './types.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm({ models: ['test-model', 'other:latest'] });
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

function ollama(url = fake.ollamaUrl, overrides: Partial<Record<SettingName, string>> = {}) {
  const settings = testSettings({
    OLLAMA_HOST: url,
    OLLAMA_DEFAULT_MODEL: 'test-model',
    OLLAMA_NUM_CTX: '4096',
    ...overrides,
  });
  return createBackendRegistry(settings).get('ollama');
}

const user = (content: string) => [{ role: 'user' as const, content }];
const last = (chunks: LlmChunk[]) => chunks[chunks.length - 1];
const doneChunks = (chunks: LlmChunk[]) => chunks.filter((c) => c.type === 'done');

describe('OllamaBackend against the fake server', () => {
  it('streams thinking then text, reports usage, and sends num_ctx, temperature and think', async () => {
    fake.enqueue({ thinking: 'Let me think.', text: 'Hello there!', usage: { prompt: 12, completion: 5 } });
    const chunks = await collect(
      ollama().streamComplete({ messages: user('hi'), temperature: 0.3, maxTokens: 50 }),
    );
    const thinking = chunks.flatMap((c) => (c.type === 'thinking' ? [c.delta] : [])).join('');
    const text = chunks.flatMap((c) => (c.type === 'text' ? [c.delta] : [])).join('');
    expect(thinking).toBe('Let me think.');
    expect(text).toBe('Hello there!');
    expect(chunks.findIndex((c) => c.type === 'text')).toBeGreaterThan(
      chunks.findIndex((c) => c.type === 'thinking'),
    );
    expect(doneChunks(chunks)).toEqual([
      { type: 'done', reason: 'stop', usage: { promptTokens: 12, completionTokens: 5 } },
    ]);
    const body = fake.requests[0]?.body;
    expect(fake.requests[0]?.path).toBe('/api/chat');
    expect(body).toMatchObject({ model: 'test-model', stream: true, think: true });
    expect(body?.options).toEqual({ num_ctx: 4096, temperature: 0.3, num_predict: 50 });
  });

  it('streams one character per chunk', async () => {
    fake.enqueue({ text: 'abcdef', chunkSize: 1 });
    const texts = (await collect(ollama().streamComplete({ messages: user('x') }))).filter(
      (c) => c.type === 'text',
    );
    expect(texts.map((c) => (c.type === 'text' ? c.delta : ''))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('yields tool calls with generated ids when the server sends none, and ends with tool_calls', async () => {
    fake.enqueue({
      toolCalls: [
        { name: 'read_file', arguments: { path: '/tmp/a', lines: 3 } },
        { id: 'given', name: 'now', arguments: {} },
      ],
    });
    const chunks = await collect(
      ollama().streamComplete({
        messages: user('read it'),
        tools: [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }],
      }),
    );
    const calls = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ['read_file', { path: '/tmp/a', lines: 3 }],
      ['now', {}],
    ]);
    expect(calls[0]?.id).toMatch(/^call_/);
    expect(calls[1]?.id).toBe('given');
    expect(last(chunks)).toMatchObject({ type: 'done', reason: 'tool_calls' });
    expect(fake.requests[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } },
      },
    ]);
  });

  it('sends images, assistant tool calls and tool results in the native shape', async () => {
    fake.enqueue({ text: 'ok' });
    await ollama().complete({
      think: false,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is this?', images: ['iVBORw0KGgo='] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'look', arguments: { q: 1 } }] },
        { role: 'tool', content: 'a cat', tool_call_id: 'c1', name: 'look' },
      ],
    });
    const body = fake.requests[0]?.body;
    expect(body?.think).toBe(false);
    expect(body?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'what is this?', images: ['iVBORw0KGgo='] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'look', arguments: { q: 1 } } }] },
      { role: 'tool', content: 'a cat', tool_name: 'look' },
    ]);
  });

  it('retries without think when the model cannot think, and remembers it', async () => {
    const noThinking = {
      httpError: { status: 400, body: '{"error":"\\"test-model\\" does not support thinking"}' },
    };
    fake.setDefault((req) => (req.body.think ? noThinking : { text: 'plain answer' }));
    const backend = ollama();
    expect((await backend.complete({ messages: user('a') })).content).toBe('plain answer');
    expect((await backend.complete({ messages: user('b') })).content).toBe('plain answer');
    expect(fake.requests.map((r) => r.body.think)).toEqual([true, false, false]);
  });

  it('complete() folds the stream into one result', async () => {
    fake.enqueue({ thinking: 'hmm', text: 'done', toolCalls: [{ name: 't', arguments: { a: 1 } }] });
    const result = await ollama().complete({ messages: user('x') });
    expect(result).toMatchObject({ content: 'done', thinking: 'hmm', reason: 'tool_calls' });
    expect(result.toolCalls.map((c) => c.name)).toEqual(['t']);
    expect(result.usage?.completionTokens).toBeGreaterThan(0);
  });

  it('ends with aborted and closes the connection when the caller aborts mid-stream', async () => {
    fake.enqueue({ text: 'a long answer that stalls', chunkSize: 2, stallAfterChunks: 3 });
    const controller = new AbortController();
    const chunks: LlmChunk[] = [];
    for await (const chunk of ollama().streamComplete({ messages: user('x'), signal: controller.signal })) {
      chunks.push(chunk);
      if (chunk.type === 'text' && chunks.length === 2) controller.abort();
    }
    expect(doneChunks(chunks)).toEqual([{ type: 'done', reason: 'aborted' }]);
    expect(chunks).toHaveLength(3);
    await fake.waitForAborted(1);
    expect(fake.requests[0]?.aborted).toBe(true);
  });

  it('ends with aborted when the caller aborts before the server answers', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    const pending = collect(ollama().streamComplete({ messages: user('x'), signal: controller.signal }));
    await fake.waitForRequests(1);
    controller.abort();
    expect(await pending).toEqual([{ type: 'done', reason: 'aborted' }]);
    await fake.waitForAborted(1);
  });

  it('reports an unreachable server with the URL and how to fix it', async () => {
    const url = await closedPortUrl();
    const chunks = await collect(ollama(url).streamComplete({ messages: user('x') }));
    expect(chunks).toHaveLength(1);
    const done = last(chunks);
    expect(done).toMatchObject({ type: 'done', reason: 'error', error: { code: 'unreachable' } });
    const message = done?.type === 'done' ? (done.error?.message ?? '') : '';
    expect(message).toContain(`Cannot reach the Ollama server at ${url} (connection refused)`);
    expect(message).toContain('OLLAMA_HOST');
    await expect(ollama(url).complete({ messages: user('x') })).rejects.toMatchObject({
      code: 'unreachable',
    });
  });

  it('maps HTTP 500 with an excerpt of the body, and 404 model not found to ollama pull advice', async () => {
    fake.enqueue({ httpError: { status: 500, body: '{"error":"out of memory loading model"}' } });
    const error = await ollama()
      .complete({ messages: user('x') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: 'http', status: 500 });
    expect((error as LlmError).message).toContain('out of memory loading model');
    expect((error as LlmError).message).toContain(fake.ollamaUrl);

    fake.enqueue({
      httpError: { status: 404, body: '{"error":"model \\"big:70b\\" not found, try pulling it first"}' },
    });
    const chunks = await collect(ollama().streamComplete({ messages: user('x'), model: 'big:70b' }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'model_not_found', status: 404 } });
    expect(JSON.stringify(last(chunks))).toContain('ollama pull big:70b');
  });

  it('maps a 400 about the context length to context_overflow', async () => {
    fake.enqueue({ httpError: { status: 400, body: '{"error":"input length exceeds the context length"}' } });
    const chunks = await collect(ollama().streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'context_overflow', status: 400 } });
  });

  it('reports a stream cut half-way as malformed, after the deltas that arrived', async () => {
    fake.enqueue({ text: 'partial answer here', chunkSize: 4, cutAfterChunks: 2 });
    const chunks = await collect(ollama().streamComplete({ messages: user('x') }));
    expect(chunks.filter((c) => c.type === 'text')).toHaveLength(2);
    expect(doneChunks(chunks)).toHaveLength(1);
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'malformed' } });
    expect(JSON.stringify(last(chunks))).toContain('the stream ended early');
    expect(JSON.stringify(last(chunks))).toContain(fake.ollamaUrl);
  });

  it('reports an invalid JSON line as malformed and closes the connection', async () => {
    fake.enqueue({ text: 'some text to split', chunkSize: 3, malformed: true, stallAfterChunks: 100 });
    const chunks = await collect(ollama().streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'malformed' } });
    expect(JSON.stringify(last(chunks))).toContain('not valid JSON');
  });

  it('reports an error line inside a 200 stream', async () => {
    fake.enqueue({ httpError: { status: 200, body: '{"error":"an unexpected model runner crash"}\n' } });
    const chunks = await collect(ollama().streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'http' } });
    expect(JSON.stringify(last(chunks))).toContain('model runner crash');
  });

  it('times out when the stream goes silent for LLM_IDLE_TIMEOUT_MS', async () => {
    fake.enqueue({ text: 'starts then stalls', chunkSize: 3, stallAfterChunks: 2 });
    const backend = ollama(fake.ollamaUrl, { LLM_IDLE_TIMEOUT_MS: '200', LLM_CONNECT_TIMEOUT_MS: '100' });
    const chunks = await collect(backend.streamComplete({ messages: user('x') }));
    expect(chunks.filter((c) => c.type === 'text')).toHaveLength(2);
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'timeout' } });
    expect(JSON.stringify(last(chunks))).toContain('LLM_IDLE_TIMEOUT_MS');
    await fake.waitForAborted(1);
  });

  it('times out when the server never answers', async () => {
    // A server of its own: under load the abandoned request can reach the server after this
    // test ended, and must not show up among the next test's requests.
    const silent = await startFakeLlm({ defaultReply: { hang: true } });
    const backend = ollama(silent.ollamaUrl, { LLM_IDLE_TIMEOUT_MS: '150', LLM_CONNECT_TIMEOUT_MS: '100' });
    const chunks = await collect(backend.streamComplete({ messages: user('x') })).finally(() =>
      silent.close(),
    );
    expect(chunks).toEqual([
      expect.objectContaining({
        type: 'done',
        reason: 'error',
        error: expect.objectContaining({ code: 'timeout' }),
      }),
    ]);
  });

  it('embeds through /api/embed', async () => {
    const backend = ollama();
    const result = await backend.embed?.(['the cat sat', 'a dog ran'], { model: 'embedder' });
    expect(result?.model).toBe('embedder');
    expect(result?.vectors).toHaveLength(2);
    expect(result?.vectors[0]).toHaveLength(64);
    expect(fake.requests[0]).toMatchObject({
      path: '/api/embed',
      body: { model: 'embedder', input: ['the cat sat', 'a dog ran'] },
    });
  });

  it('rejects embeddings with the abort reason when the caller aborts', async () => {
    await expect(ollama().embed?.(['x'], { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('rejects embeddings with LlmError on an HTTP error', async () => {
    fake.setEndpointError('embed', {
      status: 400,
      body: '{"error":"this model does not support embeddings"}',
    });
    await expect(ollama().embed?.(['x'])).rejects.toMatchObject({
      name: 'LlmError',
      code: 'http',
      status: 400,
    });
  });

  it('checks health: model present, model missing, endpoint failing, server down', async () => {
    expect(await ollama().checkHealth()).toEqual({
      ok: true,
      detail: `ollama at ${fake.ollamaUrl}: model test-model is available`,
      models: expect.arrayContaining(['test-model']),
    });
    expect((await ollama(fake.ollamaUrl, { OLLAMA_DEFAULT_MODEL: 'other' }).checkHealth()).ok).toBe(true);
    const missing = await ollama(fake.ollamaUrl, { OLLAMA_DEFAULT_MODEL: 'absent:7b' }).checkHealth();
    expect(missing.ok).toBe(false);
    expect(missing.detail).toContain('ollama pull absent:7b');
    fake.setEndpointError('models', { status: 502, body: 'bad gateway' });
    const failing = await ollama().checkHealth();
    expect(failing.ok).toBe(false);
    expect(failing.detail).toContain('HTTP 502');
    const url = await closedPortUrl();
    const down = await ollama(url).checkHealth();
    expect(down).toMatchObject({ ok: false });
    expect(down.detail).toContain(url);
  });
});

describe('OllamaBackend: what a model can do, and which models there are', () => {
  const show = (capabilities: string[] | undefined, modelInfo: Record<string, unknown>) => ({
    modelfile: '',
    details: { family: 'x' },
    model_info: modelInfo,
    ...(capabilities ? { capabilities } : {}),
  });

  it('reads tools, thinking, vision and the trained context from /api/show', async () => {
    fake.setModelInfo('test-model', {
      show: show(['completion', 'tools', 'thinking'], {
        'general.architecture': 'qwen3',
        'qwen3.context_length': 40960,
        'qwen3.rope.scaling.original_context_length': 8192,
      }),
    });
    expect(await ollama().probe?.('test-model')).toEqual({
      tools: true,
      thinking: true,
      vision: false,
      contextLength: 40960,
      source: 'ollama /api/show',
    });
    expect(fake.requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/show',
      body: { model: 'test-model' },
    });
  });

  it('tells a model without tools from one with vision, and each context length', async () => {
    fake.setModelInfo('test-model', {
      show: show(['completion', 'vision'], {
        'general.architecture': 'gemma3',
        'gemma3.context_length': 8192,
      }),
    });
    fake.setModelInfo('other:latest', { show: show(['completion'], { 'llama.context_length': 131072 }) });
    expect(await ollama().probe?.('test-model')).toMatchObject({
      tools: false,
      thinking: false,
      vision: true,
      contextLength: 8192,
    });
    // "other" is found as other:latest, as Ollama finds it; no architecture key: the one *.context_length.
    expect(await ollama().probe?.('other')).toMatchObject({
      tools: false,
      vision: false,
      contextLength: 131072,
    });
  });

  it('leaves the flags unknown when the server has no capabilities list (older Ollama)', async () => {
    fake.setModelInfo('test-model', { show: show(undefined, { 'general.architecture': 'llama' }) });
    expect(await ollama().probe?.('test-model')).toEqual({ source: 'ollama /api/show' });
  });

  it('says why it could not tell: unknown model, broken JSON, HTTP error, server down', async () => {
    const unknown = await ollama().probe?.('big:70b');
    expect(unknown?.tools).toBeUndefined();
    expect(unknown?.source).toContain('ollama /api/show could not tell');
    expect(unknown?.source).toContain('ollama pull big:70b');

    fake.setEndpointError('show', { status: 200, body: '{"capabilities": ["tools"' });
    const broken = await ollama().probe?.('test-model');
    expect(broken).toEqual({ source: expect.stringContaining('/api/show did not answer JSON') });

    fake.setEndpointError('show', { status: 500, body: '{"error":"disk on fire"}' });
    expect((await ollama().probe?.('test-model'))?.source).toContain('HTTP 500: disk on fire');

    const url = await closedPortUrl();
    const down = await ollama(url).probe?.('test-model');
    expect(down?.source).toContain(`Cannot reach the Ollama server at ${url}`);
  });

  it('gives up on a server that never answers within LLM_CONNECT_TIMEOUT_MS, and never rejects', async () => {
    // A server of its own: the abandoned request must not show up among the next test's requests.
    const silent = await startFakeLlm();
    silent.setEndpointError('show', { hang: true });
    const backend = ollama(silent.ollamaUrl, { LLM_CONNECT_TIMEOUT_MS: '150' });
    const caps = await backend.probe?.('test-model').finally(() => silent.close());
    expect(caps?.source).toContain('did not answer');
    expect(caps?.source).toContain('LLM_CONNECT_TIMEOUT_MS=150');
  });

  it('stops asking when the caller aborts, and says so', async () => {
    const caps = await ollama().probe?.('test-model', AbortSignal.abort());
    expect(caps).toEqual({ source: expect.stringContaining('the caller gave up') });
  });

  it('lists the installed models with their sizes from /api/tags', async () => {
    expect(await ollama().listModels?.()).toEqual([
      { name: 'test-model', sizeBytes: 1 },
      { name: 'other:latest', sizeBytes: 1 },
    ]);
    fake.setEndpointError('models', { status: 200, body: '{"version":"0.9"}' });
    await expect(ollama().listModels?.()).rejects.toMatchObject({ name: 'LlmError', code: 'malformed' });
    fake.setEndpointError('models', { status: 503, body: 'warming up' });
    await expect(ollama().listModels?.()).rejects.toMatchObject({ code: 'http', status: 503 });
    await expect(ollama().listModels?.(AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('sends the clamped context window of a call as num_ctx', async () => {
    fake.enqueue({ text: 'ok' });
    await ollama().complete({ messages: user('x'), contextWindow: 2048 });
    expect(fake.requests[0]?.body.options?.num_ctx).toBe(2048);
  });

  it('merges neighbours of the same role before sending, for strict chat templates', async () => {
    fake.enqueue({ text: 'ok' });
    await ollama().complete({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'plan' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'now', arguments: {} }] },
        { role: 'tool', content: 'noon', tool_call_id: 'c1', name: 'now' },
      ],
    });
    expect(fake.requests[0]?.body.messages).toEqual([
      { role: 'user', content: 'a\n\nb' },
      { role: 'assistant', content: 'plan', tool_calls: [{ function: { name: 'now', arguments: {} } }] },
      { role: 'tool', content: 'noon', tool_name: 'now' },
    ]);
  });
});
