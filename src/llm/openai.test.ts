import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, collect, type FakeLlm, startFakeLlm } from '../../test/fake-llm/index.js';
import { type SettingName, testSettings } from '../config/settings.js';
import { createBackendRegistry } from './registry.js';
import type { LlmChunk } from './types.js';

const KEY = 'sk-test-123';
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm({ models: ['gpt-fake'], apiKey: KEY });
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

function openai(url = fake.openaiUrl, overrides: Partial<Record<SettingName, string>> = {}) {
  const settings = testSettings({
    OPENAI_BASE_URL: url,
    OPENAI_MODEL: 'gpt-fake',
    OPENAI_API_KEY: KEY,
    ...overrides,
  });
  return createBackendRegistry(settings).get('openai');
}

const user = (content: string) => [{ role: 'user' as const, content }];
const last = (chunks: LlmChunk[]) => chunks[chunks.length - 1];
const deltas = (chunks: LlmChunk[], type: 'text' | 'thinking') =>
  chunks.flatMap((c) => (c.type === type ? [c.delta] : []));

describe('OpenAiBackend against the fake server', () => {
  it('streams reasoning_content then text, reports usage, and sends the key and stream options', async () => {
    fake.enqueue({ thinking: 'Pondering…', text: 'Bonjour, ça va ?', usage: { prompt: 30, completion: 7 } });
    const chunks = await collect(
      openai().streamComplete({ messages: user('hi'), temperature: 0.2, maxTokens: 99 }),
    );
    expect(deltas(chunks, 'thinking').join('')).toBe('Pondering…');
    expect(deltas(chunks, 'text').join('')).toBe('Bonjour, ça va ?');
    expect(chunks.filter((c) => c.type === 'done')).toEqual([
      { type: 'done', reason: 'stop', usage: { promptTokens: 30, completionTokens: 7 } },
    ]);
    const request = fake.requests[0];
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toMatchObject({
      model: 'gpt-fake',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 99,
    });
  });

  it('reads reasoning from the `reasoning` field too', async () => {
    fake.enqueue({ thinking: 'alt field', text: 'ok', reasoningField: 'reasoning' });
    const chunks = await collect(openai().streamComplete({ messages: user('hi') }));
    expect(deltas(chunks, 'thinking').join('')).toBe('alt field');
  });

  it('streams one character per chunk', async () => {
    fake.enqueue({ text: 'héllo', chunkSize: 1 });
    const chunks = await collect(openai().streamComplete({ messages: user('x') }));
    expect(deltas(chunks, 'text')).toEqual(['h', 'é', 'l', 'l', 'o']);
  });

  it('assembles tool-call arguments sent in fragments, in index order', async () => {
    const args = {
      path: '/home/user/notes.md',
      options: { lines: [1, 2, 3], follow: true },
      note: 'ünïcode',
    };
    fake.enqueue({
      text: 'Reading.',
      chunkSize: 4,
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: args },
        { name: 'list_dir', arguments: { dir: '.' } },
      ],
    });
    const chunks = await collect(
      openai().streamComplete({
        messages: user('go'),
        tools: [{ name: 'read_file', description: 'Reads', parameters: { type: 'object' } }],
      }),
    );
    const calls = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
    expect(calls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: args },
      { id: expect.stringMatching(/^call_/), name: 'list_dir', arguments: { dir: '.' } },
    ]);
    expect(last(chunks)).toMatchObject({ type: 'done', reason: 'tool_calls' });
    expect(fake.requests[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read_file', description: 'Reads', parameters: { type: 'object' } },
      },
    ]);
  });

  it('keeps unparseable tool arguments under _raw', async () => {
    // A hand-written SSE body: the fake's scripted calls always carry valid JSON.
    const body =
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c9","type":"function","function":{"name":"t","arguments":"{\\"a\\": "}}]}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    fake.enqueue({ httpError: { status: 200, body } });
    const result = await openai().complete({ messages: user('x') });
    expect(result.toolCalls).toEqual([{ id: 'c9', name: 't', arguments: { _raw: '{"a": ' } }]);
  });

  it('sends images as image_url parts and tool history with ids', async () => {
    fake.enqueue({ text: 'a cat' });
    const jpeg = '/9j/4AAQSkZJRg==';
    await openai().complete({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'what is it?', images: [jpeg] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', name: 'look', arguments: { at: 'img' } }],
        },
        { role: 'tool', content: 'looked', tool_call_id: 'c1', name: 'look' },
      ],
    });
    expect(fake.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is it?' },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg}` } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"at":"img"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'looked' },
    ]);
  });

  it('reports finish_reason length', async () => {
    fake.enqueue({ text: 'cut by max tokens', finishReason: 'length' });
    expect((await openai().complete({ messages: user('x') })).reason).toBe('length');
  });

  it('ends with aborted and closes the connection when the caller aborts mid-stream', async () => {
    fake.enqueue({ text: 'abcdefghijklmnop', chunkSize: 2, stallAfterChunks: 4 });
    const controller = new AbortController();
    const chunks: LlmChunk[] = [];
    for await (const chunk of openai().streamComplete({ messages: user('x'), signal: controller.signal })) {
      chunks.push(chunk);
      if (chunk.type === 'text') controller.abort();
    }
    expect(chunks).toEqual([
      { type: 'text', delta: 'ab' },
      { type: 'done', reason: 'aborted' },
    ]);
    await fake.waitForAborted(1);
    expect(fake.abortedRequests).toBe(1);
  });

  it('ends at once with aborted when the signal is already aborted', async () => {
    const chunks = await collect(
      openai().streamComplete({ messages: user('x'), signal: AbortSignal.abort() }),
    );
    expect(chunks).toEqual([{ type: 'done', reason: 'aborted' }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('maps a wrong API key to auth, naming OPENAI_API_KEY and the URL', async () => {
    const chunks = await collect(
      openai(fake.openaiUrl, { OPENAI_API_KEY: 'wrong' }).streamComplete({ messages: user('x') }),
    );
    expect(last(chunks)).toMatchObject({
      type: 'done',
      reason: 'error',
      error: { code: 'auth', status: 401 },
    });
    const message = JSON.stringify(last(chunks));
    expect(message).toContain('OPENAI_API_KEY');
    expect(message).toContain(fake.openaiUrl);
    expect(message).toContain('Incorrect API key');
  });

  it('maps 404 about the model to model_not_found and a bare 404 to http with base-URL advice', async () => {
    fake.enqueue({
      httpError: {
        status: 404,
        body: '{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}}',
      },
    });
    await expect(openai().complete({ messages: user('x'), model: 'gpt-9' })).rejects.toMatchObject({
      code: 'model_not_found',
      status: 404,
      message: expect.stringContaining('OPENAI_MODEL'),
    });
    const chunks = await collect(openai(fake.url).streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'http', status: 404 } });
    expect(JSON.stringify(last(chunks))).toContain('/v1');
  });

  it('maps context_length_exceeded to context_overflow and a 500 to http with the body', async () => {
    fake.enqueue(
      {
        httpError: {
          status: 400,
          body: '{"error":{"message":"This model\'s maximum context length is 8192 tokens.","code":"context_length_exceeded"}}',
        },
      },
      { httpError: { status: 500, body: 'upstream exploded' } },
    );
    const overflow = await collect(openai().streamComplete({ messages: user('x') }));
    expect(last(overflow)).toMatchObject({
      reason: 'error',
      error: { code: 'context_overflow', status: 400 },
    });
    const failed = await collect(openai().streamComplete({ messages: user('x') }));
    expect(last(failed)).toMatchObject({ reason: 'error', error: { code: 'http', status: 500 } });
    expect(JSON.stringify(last(failed))).toContain('upstream exploded');
  });

  it('reports an unreachable server with the URL', async () => {
    const url = await closedPortUrl();
    const chunks = await collect(openai(`${url}/v1`).streamComplete({ messages: user('x') }));
    expect(chunks).toHaveLength(1);
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'unreachable' } });
    expect(JSON.stringify(last(chunks))).toContain(`Cannot reach the OpenAI-compatible server at ${url}/v1`);
  });

  it('reports a stream cut half-way and an invalid event as malformed', async () => {
    fake.enqueue(
      { text: 'one two three four', chunkSize: 3, cutAfterChunks: 4 },
      { text: 'abcdefgh', malformed: true, chunkSize: 2 },
    );
    const cut = await collect(openai().streamComplete({ messages: user('x') }));
    expect(deltas(cut, 'text').length).toBeGreaterThan(0);
    expect(last(cut)).toMatchObject({ reason: 'error', error: { code: 'malformed' } });
    expect(JSON.stringify(last(cut))).toContain('the stream ended early');
    const bad = await collect(openai().streamComplete({ messages: user('x') }));
    expect(last(bad)).toMatchObject({ reason: 'error', error: { code: 'malformed' } });
    expect(bad.filter((c) => c.type === 'done')).toHaveLength(1);
  });

  it('reports an error event inside the stream', async () => {
    fake.enqueue({
      httpError: { status: 200, body: 'data: {"error":{"message":"rate limited, slow down"}}\n\n' },
    });
    const chunks = await collect(openai().streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'http' } });
    expect(JSON.stringify(last(chunks))).toContain('rate limited');
  });

  it('times out when the stream goes silent', async () => {
    fake.enqueue({ text: 'abcdef', chunkSize: 1, stallAfterChunks: 3 });
    const backend = openai(fake.openaiUrl, { LLM_IDLE_TIMEOUT_MS: '200', LLM_CONNECT_TIMEOUT_MS: '100' });
    const chunks = await collect(backend.streamComplete({ messages: user('x') }));
    expect(last(chunks)).toMatchObject({ reason: 'error', error: { code: 'timeout' } });
    expect(JSON.stringify(last(chunks))).toContain(fake.openaiUrl);
  });

  it('embeds through /embeddings: similar texts get similar vectors', async () => {
    const result = await openai().embed?.([
      'the cat sat on the mat',
      'the cat sat on a mat',
      'quantum chromodynamics',
    ]);
    expect(result?.vectors).toHaveLength(3);
    const [a, b, c] = result?.vectors ?? [];
    const dot = (x: number[] = [], y: number[] = []) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
    expect(fake.requests[0]).toMatchObject({ path: '/v1/embeddings', body: { model: 'gpt-fake' } });
  });

  it('checks health through /models', async () => {
    expect(await openai().checkHealth()).toEqual({
      ok: true,
      detail: `openai at ${fake.openaiUrl}: model gpt-fake is available`,
    });
    const other = await openai(fake.openaiUrl, { OPENAI_MODEL: 'unlisted' }).checkHealth();
    expect(other.ok).toBe(true);
    expect(other.detail).toContain('not in its /models list');
    const denied = await openai(fake.openaiUrl, { OPENAI_API_KEY: '' }).checkHealth();
    expect(denied.ok).toBe(false);
    expect(denied.detail).toContain('Set OPENAI_API_KEY');
  });

  it("does not call OpenAI's own API when no key is set: nobody configured it", async () => {
    let calls = 0;
    const settings = testSettings({ OPENAI_API_KEY: '' });
    const backend = createBackendRegistry(settings, {
      fetch: async () => {
        calls++;
        throw new Error('no network expected');
      },
    }).get('openai');
    const health = await backend.checkHealth();
    expect(health).toEqual({
      ok: false,
      detail: expect.stringContaining('not configured; set OPENAI_API_KEY'),
    });
    expect((await backend.probe?.('gpt-4o-mini'))?.source).toContain('not configured');
    await expect(backend.listModels?.()).rejects.toThrow(/set OPENAI_API_KEY/);
    expect(calls).toBe(0);
  });
});

describe('OpenAiBackend: what a model can do, and which models there are', () => {
  let many: FakeLlm;
  beforeAll(async () => {
    many = await startFakeLlm({
      models: [
        'router/tools-vision',
        'router/plain',
        'vllm-model',
        'lms-vlm',
        'lms-llm',
        'lms-embed',
        'bare',
      ],
      modelInfo: {
        // OpenRouter: the endpoint that serves it may take less than the model does.
        'router/tools-vision': {
          openai: {
            context_length: 200000,
            top_provider: { context_length: 128000 },
            architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] },
            supported_parameters: ['tools', 'tool_choice', 'reasoning', 'temperature'],
          },
        },
        'router/plain': {
          openai: {
            context_length: 8192,
            architecture: { input_modalities: ['text'] },
            supported_parameters: ['temperature', 'max_tokens'],
          },
        },
        'vllm-model': { openai: { owned_by: 'vllm', max_model_len: 32768 } },
        'lms-vlm': { openai: { type: 'vlm', max_context_length: 32768, capabilities: ['tool_use'] } },
        'lms-llm': { openai: { type: 'llm', max_context_length: 131072, loaded_context_length: 4096 } },
        'lms-embed': { openai: { type: 'embeddings', max_context_length: 2048 } },
      },
    });
  });
  afterAll(() => many.close());
  afterEach(() => many.reset());

  const at = (model: string, overrides: Partial<Record<SettingName, string>> = {}) =>
    openai(many.openaiUrl, { OPENAI_MODEL: model, OPENAI_API_KEY: '', ...overrides });
  const probe = (model: string) => at(model).probe?.(model);

  it('reads OpenRouter fields: tools and reasoning parameters, image input, the smaller context', async () => {
    expect(await probe('router/tools-vision')).toEqual({
      tools: true,
      thinking: true,
      vision: true,
      contextLength: 128000,
      source: 'openai /models',
    });
    expect(await probe('router/plain')).toEqual({
      tools: false,
      thinking: false,
      vision: false,
      contextLength: 8192,
      source: 'openai /models',
    });
    expect(many.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  it("reads vLLM's max_model_len and LM Studio's type, capabilities and loaded context", async () => {
    expect(await probe('vllm-model')).toEqual({ contextLength: 32768, source: 'openai /models' });
    expect(await probe('lms-vlm')).toEqual({
      tools: true,
      vision: true,
      contextLength: 32768,
      source: 'openai /models',
    });
    // Loaded with 4096 tokens: a longer request would fail however long the model could go.
    expect(await probe('lms-llm')).toEqual({ vision: false, contextLength: 4096, source: 'openai /models' });
  });

  it('leaves everything unknown when the server says nothing but the id', async () => {
    expect(await probe('bare')).toEqual({ source: 'openai /models' });
  });

  it('says a model is not listed, naming what is', async () => {
    const caps = await probe('gpt-9');
    expect(caps).toEqual({
      source: expect.stringContaining('does not list model "gpt-9" (it lists router/tools-vision'),
    });
  });

  it('answers for the one model of a single-model server under any name (llama-server)', async () => {
    fake.setModelInfo('gpt-fake', {
      openai: { owned_by: 'llamacpp', meta: { n_ctx_train: 131072, n_ctx: 8192 } },
    });
    const caps = await openai().probe?.('whatever-i-call-it');
    expect(caps).toEqual({
      contextLength: 8192,
      source: 'openai /models, the one model it serves (gpt-fake)',
    });
  });

  it('says why it could not tell: wrong key, broken JSON, no list, server down, server silent', async () => {
    const denied = await openai(fake.openaiUrl, { OPENAI_API_KEY: 'wrong' }).probe?.('gpt-fake');
    expect(denied?.source).toContain('openai /models could not tell');
    expect(denied?.source).toContain('OPENAI_API_KEY');

    many.setEndpointError('models', { status: 200, body: '{"data": [' });
    expect((await probe('bare'))?.source).toContain('/models did not answer JSON');
    many.setEndpointError('models', { status: 200, body: '{"object": "list"}' });
    expect((await probe('bare'))?.source).toBe('openai /models did not answer a list of models');
    many.setEndpointError('models', { status: 404, body: 'Not Found' });
    expect((await probe('bare'))?.source).toContain('it usually ends in /v1');

    const url = await closedPortUrl();
    expect((await openai(`${url}/v1`).probe?.('x'))?.source).toContain(
      `Cannot reach the OpenAI-compatible server at ${url}/v1`,
    );

    const silent = await startFakeLlm();
    silent.setEndpointError('models', { hang: true });
    const caps = await openai(silent.openaiUrl, { OPENAI_API_KEY: '', LLM_CONNECT_TIMEOUT_MS: '150' })
      .probe?.('x')
      .finally(() => silent.close());
    expect(caps?.source).toContain('did not answer');
    expect(caps?.source).toContain('LLM_CONNECT_TIMEOUT_MS=150');
  });

  it('lists the models without the embedding ones, with sizes where the server gives them', async () => {
    expect(await at('bare').listModels?.()).toEqual([
      { name: 'router/tools-vision' },
      { name: 'router/plain' },
      { name: 'vllm-model' },
      { name: 'lms-vlm' },
      { name: 'lms-llm' },
      { name: 'bare' },
    ]);
    fake.setModelInfo('gpt-fake', { openai: { meta: { size: 4_920_734_016 } } });
    expect(await openai().listModels?.()).toEqual([{ name: 'gpt-fake', sizeBytes: 4_920_734_016 }]);
    many.setEndpointError('models', { status: 200, body: '{"object": "list"}' });
    await expect(at('bare').listModels?.()).rejects.toMatchObject({ name: 'LlmError', code: 'malformed' });
    await expect(openai(fake.openaiUrl, { OPENAI_API_KEY: '' }).listModels?.()).rejects.toMatchObject({
      code: 'auth',
    });
    await expect(openai().listModels?.(AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('merges neighbours of the same role before sending, for strict chat templates', async () => {
    fake.enqueue({ text: 'ok' });
    await openai().complete({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'I will look.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'look', arguments: {} }] },
        { role: 'tool', content: 'seen', tool_call_id: 'c1', name: 'look' },
        { role: 'tool', content: 'seen too', tool_call_id: 'c2', name: 'look' },
      ],
    });
    expect(fake.requests[0]?.body.messages?.map((m) => [m.role, m.content])).toEqual([
      ['system', 'sys'],
      ['user', 'hi'],
      ['assistant', 'I will look.'],
      ['tool', 'seen'],
      ['tool', 'seen too'],
    ]);
    expect(fake.requests[0]?.body.messages?.[2]?.tool_calls).toHaveLength(1);
  });
});
