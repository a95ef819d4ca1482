/**
 * `GET /llm/status`, `GET /llm/models` and `POST /llm/test` on a real Navi against fake LLM
 * servers: no backend at all (the setup screen), a detected Ollama, a backend down among the
 * models, every step of a connection test failing and passing, and a test refused to a client
 * without the person's consent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionTestResult, LlmModelList, LlmStatus } from '../../src/protocol/llm.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';

const KEY = 'sk-status-test-key-0123';

/** Where Ollama listens by default: the status looks there too. */
async function defaultOllamaAnswers(): Promise<boolean> {
  return fetch('http://127.0.0.1:11434/api/tags', { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.ok,
    () => false,
  );
}

async function getJson<T>(navi: NaviHandle, path: string): Promise<T> {
  const res = await fetch(`${navi.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

describe('GET /llm/status', () => {
  it('with no backend reachable: needs setup, says why, detects nothing', async () => {
    const nowhere = await closedPortUrl();
    const navi = await startNavi({ settings: { OLLAMA_HOST: nowhere } });
    try {
      const status = await getJson<LlmStatus>(navi, '/llm/status');
      expect(status.needs_setup).toBe(true);
      expect(status.default_backend).toBe('ollama');
      const own = status.backends.find((b) => b.id === 'ollama');
      expect(own?.ready).toBe(false);
      expect(own?.detail).toContain(nowhere);
      expect(status.capabilities).toBeNull();
      if (await defaultOllamaAnswers()) expect(status.ollama_detected?.url).toBe('http://127.0.0.1:11434');
      else expect(status.ollama_detected).toBeNull();
    } finally {
      await navi.close();
    }
  });

  it('with a fake Ollama: ready, detected with its models, and the default model described', async () => {
    const fake = await startFakeLlm({
      models: ['test-model', 'qwen3:4b'],
      modelInfo: {
        'test-model': {
          show: {
            capabilities: ['completion', 'tools'],
            model_info: { 'general.architecture': 'llama', 'llama.context_length': 8192 },
          },
        },
      },
    });
    const navi = await startNavi({
      settings: { OLLAMA_HOST: fake.ollamaUrl, OLLAMA_DEFAULT_MODEL: 'test-model' },
    });
    try {
      const tagReads = () => fake.requests.filter((r) => r.method === 'GET' && r.path === '/api/tags').length;
      const before = tagReads();
      const status = await getJson<LlmStatus>(navi, '/llm/status');
      expect(status.needs_setup).toBe(false);
      expect(status.default_model).toBe('test-model');
      expect(status.ollama_detected).toEqual({ url: fake.ollamaUrl, models: ['test-model', 'qwen3:4b'] });
      // The health check's read of the model list serves the detection too.
      expect(tagReads() - before).toBe(1);
      expect(status.backends.find((b) => b.id === 'ollama')).toMatchObject({ ready: true });
      expect(status.capabilities).toMatchObject({
        tools: true,
        thinking: false,
        vision: false,
        context_length: 8192,
      });
      expect(status.capabilities?.source).toMatch(/api\/show/);
    } finally {
      await navi.close();
      await fake.close();
    }
  });

  it('follows the default backend the client saves', async () => {
    const fake = await startFakeLlm({ models: ['gpt-fake'] });
    const navi = await startNavi({ settings: { OLLAMA_HOST: await closedPortUrl() } });
    try {
      expect((await getJson<LlmStatus>(navi, '/llm/status')).needs_setup).toBe(true);
      const res = await fetch(`${navi.url}/llm/settings`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', cookie: await navi.pair() },
        body: JSON.stringify({
          DEFAULT_LLM_BACKEND: 'openai',
          OPENAI_BASE_URL: fake.openaiUrl,
          OPENAI_MODEL: 'gpt-fake',
        }),
      });
      expect(res.status).toBe(200);
      const status = await getJson<LlmStatus>(navi, '/llm/status');
      expect(status).toMatchObject({
        needs_setup: false,
        default_backend: 'openai',
        default_model: 'gpt-fake',
      });
    } finally {
      await navi.close();
      await fake.close();
    }
  });
});

describe('GET /llm/models', () => {
  it('lists the models of every backend that answers, and a problem for one that is down', async () => {
    const fake = await startFakeLlm({ models: ['test-model', 'qwen3:4b'] });
    const down = await closedPortUrl();
    const navi = await startNavi({
      settings: {
        OLLAMA_HOST: fake.ollamaUrl,
        OLLAMA_DEFAULT_MODEL: 'qwen3:4b',
        OPENAI_BASE_URL: `${down}/v1`,
      },
    });
    try {
      const list = await getJson<LlmModelList>(navi, '/llm/models');
      expect(list.models.filter((m) => m.backend === 'ollama').map((m) => [m.model, m.is_default])).toEqual([
        ['test-model', false],
        ['qwen3:4b', true],
      ]);
      expect(list.models.some((m) => m.backend === 'openai')).toBe(false);
      expect(list.problems).toEqual([{ backend: 'openai', message: expect.stringContaining(down) }]);
    } finally {
      await navi.close();
      await fake.close();
    }
  });
});

describe('POST /llm/test', () => {
  let ollama: FakeLlm;
  let openai: FakeLlm;
  let other: FakeLlm;
  let navi: NaviHandle;
  /** The consent cookie of a paired client: a test may send the saved key anywhere it names. */
  let cookie: string;
  let odd: Server;
  let oddUrl: string;

  beforeAll(async () => {
    ollama = await startFakeLlm({ models: ['test-model', 'qwen3:4b'] });
    openai = await startFakeLlm({ models: ['gpt-fake'], apiKey: KEY });
    other = await startFakeLlm({ models: ['gpt-fake'], apiKey: KEY });
    // A server that never answers under /hang, and redirects under /moved.
    odd = createServer((req, res) => {
      if (req.url?.startsWith('/moved'))
        res.writeHead(302, { location: 'https://elsewhere.example/v1' }).end();
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    navi = await startNavi({
      settings: {
        OLLAMA_HOST: ollama.ollamaUrl,
        OPENAI_BASE_URL: openai.openaiUrl,
        OPENAI_API_KEY: KEY,
        // How long a test waits for a server that does not answer.
        LLM_CONNECT_TIMEOUT_MS: '400',
      },
    });
    cookie = await navi.pair();
  });
  afterAll(async () => {
    await navi?.close();
    odd?.closeAllConnections();
    await new Promise((resolve) => odd?.close(resolve));
    await Promise.all([ollama?.close(), openai?.close(), other?.close()]);
  });

  function post(body: string): Promise<Response> {
    return fetch(`${navi.url}/llm/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body,
    });
  }

  async function test(body: unknown): Promise<ConnectionTestResult> {
    const res = await post(JSON.stringify(body));
    expect(res.status).toBe(200);
    return (await res.json()) as ConnectionTestResult;
  }

  it('passes for an Ollama that has the model, and lists its models', async () => {
    const result = await test({ backend: 'ollama', base_url: `${ollama.ollamaUrl}/`, model: 'qwen3:4b' });
    expect(result).toMatchObject({ ok: true, step: 'model', models: ['test-model', 'qwen3:4b'] });
    expect(
      await test({ backend: 'ollama', base_url: ollama.ollamaUrl, model: 'test-model:latest' }),
    ).toMatchObject({
      ok: true,
    });
    expect(await test({ backend: 'ollama', base_url: ollama.ollamaUrl })).toMatchObject({
      ok: true,
      step: 'models',
    });
  });

  it('passes for an OpenAI-compatible server with the right key', async () => {
    const result = await test({
      backend: 'openai',
      base_url: other.openaiUrl,
      api_key: KEY,
      model: 'gpt-fake',
    });
    expect(result).toMatchObject({ ok: true, step: 'model', models: ['gpt-fake'] });
  });

  it('fails at connect for a refused port, naming the URL and what to do', async () => {
    const nowhere = await closedPortUrl();
    const result = await test({ backend: 'ollama', base_url: nowhere });
    expect(result).toMatchObject({ ok: false, step: 'connect' });
    expect(result.message).toContain(`Nothing answers at ${nowhere} (ECONNREFUSED)`);
    expect(result.message).toContain('ollama serve');
  });

  it('fails at connect, after the time limit, for a server that never answers', async () => {
    const result = await test({ backend: 'openai', base_url: `${oddUrl}/hang/v1`, api_key: 'k' });
    expect(result).toMatchObject({ ok: false, step: 'connect' });
    expect(result.message).toMatch(/did not answer within 0\.4 s/);
  });

  it('fails at connect for a redirect, naming where it points', async () => {
    const result = await test({ backend: 'openai', base_url: `${oddUrl}/moved/v1` });
    expect(result).toMatchObject({ ok: false, step: 'connect' });
    expect(result.message).toContain('https://elsewhere.example/v1');
  });

  it('fails at auth for a missing or refused key', async () => {
    const none = await test({ backend: 'openai', base_url: other.openaiUrl });
    expect(none).toMatchObject({ ok: false, step: 'auth' });
    expect(none.message).toMatch(/HTTP 401: the server wants an API key/);
    const wrong = await test({ backend: 'openai', base_url: other.openaiUrl, api_key: 'sk-wrong' });
    expect(wrong).toMatchObject({ ok: false, step: 'auth' });
    expect(wrong.message).toMatch(/refused the API key/);
  });

  it('uses the saved key for the server it was saved for only', async () => {
    expect(await test({ backend: 'openai', base_url: openai.openaiUrl, model: 'gpt-fake' })).toMatchObject({
      ok: true,
    });
    const request = openai.requests.at(-1);
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    // Same key, another address: it is not carried there.
    expect(await test({ backend: 'openai', base_url: other.openaiUrl })).toMatchObject({ step: 'auth' });
    expect(other.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('fails at models for an address that is not the server it claims', async () => {
    const noV1 = await test({ backend: 'openai', base_url: openai.url, api_key: KEY });
    expect(noV1).toMatchObject({ ok: false, step: 'models' });
    expect(noV1.message).toMatch(/HTTP 404.*usually ends in \/v1/);
    const notOllama = await test({ backend: 'ollama', base_url: openai.openaiUrl });
    expect(notOllama).toMatchObject({ ok: false, step: 'models' });
    expect(notOllama.message).toMatch(/not an Ollama server/);
  });

  it('fails at model for a model the server does not have, listing the ones it has', async () => {
    const result = await test({ backend: 'ollama', base_url: ollama.ollamaUrl, model: 'llama3.2:3b' });
    expect(result).toMatchObject({ ok: false, step: 'model', models: ['test-model', 'qwen3:4b'] });
    expect(result.message).toContain('run ollama pull llama3.2:3b on that machine');
    expect(result.message).toContain('it has: test-model, qwen3:4b');
  });

  it('refuses bad requests with what was wrong', async () => {
    const cases: [unknown, RegExp][] = [
      [{ backend: 'ollama', base_url: 'file:///etc/passwd' }, /not an http:\/\/ or https:\/\/ URL/],
      [{ backend: 'ollama', base_url: 'http://user:secret@localhost:11434' }, /without user:password@/],
      [{ backend: 'ollama', base_url: 'not a url' }, /not an http/],
      [
        { backend: 'llamacpp', base_url: 'http://localhost:1' },
        /backend must be equal to one of the allowed values/,
      ],
      [{ base_url: 'http://localhost:1' }, /must have required property 'backend'/],
      [{ backend: 'ollama' }, /must have required property 'base_url'/],
      [{ backend: 'ollama', base_url: 42 }, /base_url must be string/],
      [
        { backend: 'ollama', base_url: `http://h/${'a'.repeat(3000)}` },
        /must NOT have more than 2048 characters/,
      ],
      [
        { backend: 'ollama', base_url: 'http://h', model: 'm'.repeat(201) },
        /model must NOT have more than 200/,
      ],
      [{ backend: 'ollama', base_url: 'http://h', headers: { x: 1 } }, /additional properties \("headers"\)/],
    ];
    for (const [body, words] of cases) {
      const res = await post(JSON.stringify(body));
      const answer = (await res.json()) as { error: string; code: string };
      expect({ status: res.status, code: answer.code, body }).toEqual({
        status: 400,
        code: 'BAD_REQUEST',
        body,
      });
      expect(answer.error).toMatch(words);
    }
    const broken = await post('{"backend": "ollama",');
    expect(broken.status).toBe(400);
  });

  it('refuses a client that is not paired (403 CONSENT_REQUIRED) and reaches no server', async () => {
    const asked = openai.requests.length;
    for (const cookieHeader of [undefined, 'navi_consent=forged-secret']) {
      const res = await fetch(`${navi.url}/llm/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookieHeader ? { cookie: cookieHeader } : {}) },
        // The saved key goes to the saved server: exactly what a foreign client must not trigger.
        body: JSON.stringify({ backend: 'openai', base_url: openai.openaiUrl, model: 'gpt-fake' }),
      });
      const answer = (await res.json()) as { error: string; code: string };
      expect({ status: res.status, code: answer.code }).toEqual({ status: 403, code: 'CONSENT_REQUIRED' });
      expect(answer.error).toContain('navi pair');
    }
    expect(openai.requests).toHaveLength(asked);
  });
});
