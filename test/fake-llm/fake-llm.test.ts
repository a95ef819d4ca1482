/** The fake server's own behaviour, checked over raw HTTP so it does not lean on the backends. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cosine, fakeEmbedding } from './embeddings.js';
import { type FakeLlm, startFakeLlm } from './index.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm({ models: ['a', 'b'], embeddingDimension: 16 });
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('fake LLM server', () => {
  it('answers HTTP 500 naming the empty script when no reply is queued', async () => {
    const res = await post(`${fake.ollamaUrl}/api/chat`, { model: 'a', messages: [] });
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('fake LLM: no scripted reply left');
  });

  it('plays queued replies in order, then the default, and records each request', async () => {
    fake.enqueue({ text: 'first' });
    fake.setDefault((req) => ({ text: `default for ${req.format}` }));
    const one = await post(`${fake.openaiUrl}/chat/completions`, {
      model: 'a',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
    });
    const two = await post(`${fake.ollamaUrl}/api/chat`, {
      model: 'a',
      messages: [],
      stream: false,
      think: true,
    });
    expect(await one.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'first' }, finish_reason: 'stop' }],
    });
    expect(await two.json()).toMatchObject({ done: true, message: { content: 'default for ollama' } });
    expect(fake.requests.map((r) => [r.format, r.kind, r.body.stream, r.aborted])).toEqual([
      ['openai', 'chat', false, false],
      ['ollama', 'chat', false, false],
    ]);
    expect(fake.requests[1]?.body.think).toBe(true);
  });

  it('streams Ollama NDJSON lines with a final done line', async () => {
    fake.enqueue({ thinking: 'th', text: 'hello', chunkSize: 2, usage: { prompt: 3, completion: 4 } });
    const res = await post(`${fake.ollamaUrl}/api/chat`, { model: 'a', messages: [] });
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.message)).toMatchObject([
      { thinking: 'th' },
      { content: 'he' },
      { content: 'll' },
      { content: 'o' },
      {},
    ]);
    expect(lines[lines.length - 1]).toMatchObject({
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 3,
      eval_count: 4,
    });
  });

  it('streams OpenAI SSE with tool-call arguments split into several fragments', async () => {
    fake.enqueue({ toolCalls: [{ name: 'f', arguments: { query: 'a fairly long argument value' } }] });
    const res = await post(`${fake.openaiUrl}/chat/completions`, { model: 'a', messages: [], stream: true });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    const fragments = [...text.matchAll(/"function":\{"arguments":"((?:[^"\\]|\\.)*)"\}/g)].map((m) => m[1]);
    expect(fragments.length).toBeGreaterThanOrEqual(3);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).toContain('"finish_reason":"tool_calls"');
    // No usage chunk unless stream_options.include_usage asked for one.
    expect(text).not.toContain('"usage"');
  });

  it('lists models and embeds deterministically in both formats', async () => {
    expect(await (await fetch(`${fake.ollamaUrl}/api/tags`)).json()).toMatchObject({
      models: [{ name: 'a' }, { name: 'b' }],
    });
    expect(await (await fetch(`${fake.openaiUrl}/models`)).json()).toMatchObject({
      data: [{ id: 'a' }, { id: 'b' }],
    });
    const ollama = (await (
      await post(`${fake.ollamaUrl}/api/embed`, { model: 'e', input: 'red apple' })
    ).json()) as {
      embeddings: number[][];
    };
    const openai = (await (
      await post(`${fake.openaiUrl}/embeddings`, { model: 'e', input: ['red apple'] })
    ).json()) as {
      data: { embedding: number[] }[];
    };
    expect(ollama.embeddings[0]).toEqual(fakeEmbedding('red apple', 16));
    expect(openai.data[0]?.embedding).toEqual(ollama.embeddings[0]);
  });

  it('makes texts sharing words more similar than unrelated ones', () => {
    const a = fakeEmbedding('my cat likes fish');
    expect(cosine(a, fakeEmbedding('the cat likes fish a lot'))).toBeGreaterThan(
      cosine(a, fakeEmbedding('tax return deadline')),
    );
    expect(cosine(a, a)).toBeCloseTo(1);
    expect(fakeEmbedding('')).toHaveLength(64);
  });

  it('answers scripted endpoint errors and 404 for unknown routes', async () => {
    fake.setEndpointError('models', { status: 503, body: 'warming up' });
    const res = await fetch(`${fake.ollamaUrl}/api/tags`);
    expect([res.status, await res.text()]).toEqual([503, 'warming up']);
    expect((await fetch(`${fake.url}/nope`)).status).toBe(404);
  });

  it('records a client that gives up on a hanging request', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    const request = fetch(`${fake.ollamaUrl}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'a', messages: [] }),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await fake.waitForRequests(1);
    expect(fake.activeConnections()).toBeGreaterThan(0);
    expect(fake.requests[0]?.aborted).toBe(false);
    controller.abort();
    expect(await request).toMatchObject({ name: 'AbortError' });
    await fake.waitForAborted(1);
    expect(fake.abortedRequests).toBe(1);
  });
});

describe('fake LLM server: models and strict chat templates', () => {
  it('answers /api/show with every capability the fake has, 404 for a model it lacks', async () => {
    const res = await post(`${fake.ollamaUrl}/api/show`, { model: 'a' });
    expect(await res.json()).toMatchObject({
      capabilities: ['completion', 'tools', 'thinking', 'vision'],
      model_info: { 'general.architecture': 'fake' },
    });
    const missing = await post(`${fake.ollamaUrl}/api/show`, { model: 'zz' });
    expect([missing.status, await missing.json()]).toEqual([404, { error: "model 'zz' not found" }]);
    expect(fake.requests.map((r) => r.kind)).toEqual(['show', 'show']);
  });

  it('says what a test sets about a model, until reset', async () => {
    fake.setModelInfo('b', { show: { capabilities: ['completion'] }, openai: { max_model_len: 2048 } });
    expect(await (await post(`${fake.ollamaUrl}/api/show`, { model: 'b' })).json()).toEqual({
      capabilities: ['completion'],
    });
    const list = (await (await fetch(`${fake.openaiUrl}/models`)).json()) as { data: unknown[] };
    expect(list.data).toEqual([
      { id: 'a', object: 'model', created: 0, owned_by: 'fake' },
      { id: 'b', object: 'model', created: 0, owned_by: 'fake', max_model_len: 2048 },
    ]);
    fake.reset();
    expect(await (await post(`${fake.ollamaUrl}/api/show`, { model: 'b' })).json()).toMatchObject({
      capabilities: ['completion', 'tools', 'thinking', 'vision'],
    });
  });

  it('leaves a show request hanging when told to', async () => {
    fake.setEndpointError('show', { hang: true });
    const controller = new AbortController();
    const hanging = fetch(`${fake.ollamaUrl}/api/show`, {
      method: 'POST',
      body: JSON.stringify({ model: 'a' }),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await fake.waitForRequests(1);
    expect(fake.requests[0]?.aborted).toBe(false);
    controller.abort();
    expect(await hanging).toMatchObject({ name: 'AbortError' });
    await fake.waitForAborted(1);
  });

  it('refuses, when strict, two user or assistant messages in a row, or a late system message', async () => {
    const strict = await startFakeLlm({ strictRoles: true, defaultReply: { text: 'fine' } });
    try {
      const send = (format: 'ollama' | 'openai', roles: string[]) =>
        post(format === 'ollama' ? `${strict.ollamaUrl}/api/chat` : `${strict.openaiUrl}/chat/completions`, {
          model: 'a',
          stream: false,
          messages: roles.map((role, i) => ({ role, content: `m${i}` })),
        });
      const twoUsers = await send('ollama', ['system', 'user', 'user']);
      expect([twoUsers.status, await twoUsers.json()]).toEqual([
        400,
        { error: 'Conversation roles must alternate user/assistant/user/assistant/...' },
      ]);
      const twoAssistants = await send('openai', ['user', 'assistant', 'assistant']);
      expect(twoAssistants.status).toBe(400);
      expect(await twoAssistants.json()).toMatchObject({
        error: { message: 'Conversation roles must alternate user/assistant/user/assistant/...' },
      });
      const lateSystem = await send('openai', ['user', 'system']);
      expect(await lateSystem.json()).toMatchObject({
        error: { message: 'System message must be at the beginning.' },
      });
      // Parallel tool results, and a user message right after them, are fine.
      const fine = await send('openai', ['system', 'user', 'assistant', 'tool', 'tool', 'user']);
      expect(fine.status).toBe(200);
      // Not strict: the default fake takes anything.
      fake.enqueue({ text: 'taken' });
      const lax = await post(`${fake.ollamaUrl}/api/chat`, {
        model: 'a',
        stream: false,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      });
      expect(lax.status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
