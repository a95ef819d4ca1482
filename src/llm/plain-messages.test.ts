/**
 * The sentences people read (REST and WebSocket errors, the chat's failed-turn text, the setup
 * screen's and the banner's backend details) are plain text: a command is named as it is typed,
 * never wrapped in Markdown backticks, which the web client and a terminal show as they are.
 * Every error code's message, and every kind of LLM failure of each backend, made for real.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closedPortUrl,
  collect,
  type FakeLlm,
  type ReplyScript,
  startFakeLlm,
} from '../../test/fake-llm/index.js';
import { testSettings } from '../config/settings.js';
import { errorTable } from '../protocol/error-codes.js';
import {
  cutFailure,
  httpFailure,
  malformedFailure,
  type ServerInfo,
  timeoutFailure,
  unreachableFailure,
} from './failures.js';
import { createBackendRegistry } from './registry.js';
import type { LlmChunk } from './types.js';

const BACKTICK = /`/;

/** The texts among `texts` that hold a backtick, with where each came from. */
function withBackticks(texts: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(texts).filter(([, text]) => BACKTICK.test(text)));
}

function failureText(chunks: LlmChunk[]): string {
  const done = chunks.at(-1);
  if (done?.type !== 'done' || !done.error)
    throw new Error(`the stream did not fail: ${JSON.stringify(done)}`);
  return done.error.message;
}

describe('error codes', () => {
  it('have messages without backticks', () => {
    const messages = Object.fromEntries(Object.entries(errorTable).map(([code, e]) => [code, e.message]));
    expect(Object.keys(messages).length).toBeGreaterThan(40);
    expect(withBackticks(messages)).toEqual({});
  });

  it('name npx navi pair, the command that works from a checkout, where they say to pair', () => {
    const pairing = Object.entries(errorTable).filter(([, e]) => /navi pair/.test(e.message));
    expect(pairing.length).toBeGreaterThanOrEqual(5);
    for (const [code, e] of pairing) expect(e.message, code).toMatch(/npx navi pair/);
  });
});

describe('the scan itself', () => {
  it('finds a backtick where there is one', () => {
    expect(withBackticks({ a: 'run `navi pair`', b: 'run npx navi pair' })).toEqual({ a: 'run `navi pair`' });
  });
});

describe("failures.ts's own sentences", () => {
  const server: ServerInfo = {
    label: 'Test server',
    baseUrl: 'http://127.0.0.1:1',
    hints: {
      unreachable: 'u.',
      auth: 'a.',
      modelNotFound: () => 'm.',
      notFound: 'n.',
      contextOverflow: 'c.',
    },
  };
  it('have no backticks', () => {
    const texts = {
      unreachable: unreachableFailure(server, 'connection refused').message,
      timeout: timeoutFailure(server, 'sent nothing', 1500, 'LLM_TIMEOUT_MS').message,
      cut: cutFailure(server, 'socket closed').message,
      malformed: malformedFailure(server, 'bad JSON').message,
      http: httpFailure(server, 'm', 500, 'boom').message,
    };
    expect(withBackticks(texts)).toEqual({});
  });
});

describe.each(['ollama', 'openai'] as const)('the %s backend', (id) => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(() => fake.close());
  afterEach(() => fake.reset());

  const backend = (url: string, model = 'test-model') =>
    createBackendRegistry(
      testSettings({
        OLLAMA_HOST: url,
        OLLAMA_DEFAULT_MODEL: model,
        OPENAI_BASE_URL: `${url}/v1`,
        OPENAI_API_KEY: 'sk-test',
        OPENAI_MODEL: model,
      }),
    ).get(id);
  const ask = (url: string) =>
    collect(backend(url).streamComplete({ messages: [{ role: 'user', content: 'hi' }] })).then(failureText);

  it('explains every failure without backticks', async () => {
    const scripts: Record<string, ReplyScript> = {
      auth: { httpError: { status: 401, body: '{"error":"invalid api key"}' } },
      model: {
        httpError: {
          status: 404,
          body: '{"error":"model \\"test-model\\" not found, try pulling it first"}',
        },
      },
      context: { httpError: { status: 400, body: '{"error":"prompt is too long for the context length"}' } },
      tools: {
        httpError: { status: 400, body: '{"error":"registry.ollama.ai/test-model does not support tools"}' },
      },
      wrongUrl: { httpError: { status: 404, body: 'page not found' } },
      server: { httpError: { status: 500, body: 'internal error' } },
      malformed: { text: 'hello there', malformed: true },
      cut: { text: 'a longer answer that is cut', chunkSize: 2, cutAfterChunks: 2 },
    };
    const texts: Record<string, string> = {};
    for (const [kind, script] of Object.entries(scripts)) {
      fake.enqueue(script);
      texts[kind] = await ask(fake.url.replace(/\/$/, ''));
    }
    // Each scripted failure was one of its own kind, so the scan read every hint.
    expect(new Set(Object.values(texts)).size).toBe(Object.keys(scripts).length);
    const nowhere = await closedPortUrl();
    texts.unreachable = await ask(nowhere);
    texts.healthUnreachable = (await backend(nowhere).checkHealth()).detail;
    texts.healthNoModel = (await backend(fake.url, 'absent-model').checkHealth()).detail;
    expect(withBackticks(texts)).toEqual({});
  });
});

describe('the llamacpp backend', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'navi-plain-llamacpp-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('explains a missing runtime and a missing model without backticks', async () => {
    const backend = (models: string, model = '') =>
      createBackendRegistry(
        testSettings({
          NAVI_MODELS_DIR: models,
          LLAMACPP_RUNTIME_DIR: join(dir, 'no-runtime'),
          LLAMACPP_MODEL_PATH: model,
        }),
      ).get('llamacpp');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const withFile = join(dir, 'models');
    mkdirSync(withFile);
    writeFileSync(join(withFile, 'not-really.gguf'), 'GGUF');
    const hello = { messages: [{ role: 'user' as const, content: 'hi' }] };
    const texts = {
      noModel: failureText(await collect(backend(empty).streamComplete(hello))),
      noSuchFile: failureText(await collect(backend(empty, join(dir, 'none.gguf')).streamComplete(hello))),
      healthNoRuntime: (await backend(withFile).checkHealth()).detail,
    };
    expect(texts.healthNoRuntime).toContain('npx navi llamacpp install');
    expect(withBackticks(texts)).toEqual({});
  });
});
