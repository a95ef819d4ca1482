/**
 * Every refusal and failure of the OpenAI-compatible API in OpenAI's error shape, as the official
 * client raises it: the token, an unknown model or path, bodies that are broken, too large or of
 * the wrong types, messages Navi cannot answer, a session already answering, a run that fails
 * before or after its stream began, and a client that leaves mid-stream.
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SESSION_HEADER } from '../../src/protocol/openai.js';
import { ApiError } from '../../src/server/errors.js';
import { CONVERSATIONS_KV_ID, Conversations } from '../../src/server/openai/conversations.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';

const TOKEN = 'openai-errors-token';

let fake: FakeLlm;
let navi: NaviHandle;
let close: () => Promise<void> = async () => {};
let client: OpenAI;

beforeAll(async () => {
  ({ fake, navi, close } = await startNaviWithLlm({
    settings: {
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
      CONTEXT_COMPRESSION_ENABLED: 'false',
      NAVI_API_TOKEN: TOKEN,
    },
  }));
  client = new OpenAI({ baseURL: `${navi.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});
afterEach(() => fake.reset());
afterAll(() => close());

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

/** A raw request to `/v1…`, with the token unless `headers` say otherwise. */
async function raw(
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: ErrorBody }> {
  const res = await fetch(`${navi.url}/v1${path}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  return { status: res.status, body: (await res.json()) as ErrorBody };
}

/** Checks the body is OpenAI's error shape and nothing else, with the given code and param. */
function expectOpenAiError(body: ErrorBody, code: string, param: string | null = null): void {
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(body.error.param).toBe(param);
  expect(body.error.message.length).toBeGreaterThan(10);
}

/** What `promise` rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(OpenAI.APIError);
  return outcome as InstanceType<typeof OpenAI.APIError>;
}

const ask = (messages: unknown, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({
    model: 'navi:plain',
    messages: messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
    ...extra,
  });

const askStream = (content: string, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({
    model: 'navi:plain',
    messages: [{ role: 'user', content }],
    ...extra,
    stream: true,
  });

describe('authentication', () => {
  it('answers a wrong token with AuthenticationError', async () => {
    const wrong = new OpenAI({ baseURL: `${navi.url}/v1`, apiKey: 'not-the-token', maxRetries: 0 });
    const err = await rejection(wrong.models.list());
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.code).toBe('token_wrong');
    const chat = await rejection(
      wrong.chat.completions.create({ model: 'navi:plain', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(chat).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(chatRequests(fake)).toHaveLength(0);
  });

  it('answers a missing token with 401 in the same shape, on known and unknown paths', async () => {
    for (const [method, path] of [
      ['GET', '/models'],
      ['POST', '/chat/completions'],
      ['GET', '/embeddings'],
    ] as const) {
      const res = await raw(path, {
        method,
        headers: { authorization: '' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status, path).toBe(401);
      expectOpenAiError(res.body, 'unauthorized');
      expect(res.body.error.type).toBe('authentication_error');
    }
  });
});

describe('what Navi does not serve', () => {
  it('answers an unknown model with NotFoundError listing the models', async () => {
    const err = await rejection(
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe('model_not_found');
    expect(err.param).toBe('model');
    expect(err.message).toContain('navi:plain');
    // A profile id without the prefix is no model either.
    expect(await rejection(ask([{ role: 'user', content: 'x' }], { model: 'plain' }))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('answers an unknown path under /v1 with a 404 in OpenAI shape', async () => {
    for (const [method, path] of [
      ['GET', '/embeddings'],
      ['POST', '/completions'],
      ['GET', '/models/navi:plain/extra'],
    ] as const) {
      const res = await raw(path, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(res.status, path).toBe(404);
      expectOpenAiError(res.body, 'not_found');
      expect(res.body.error.type).toBe('not_found_error');
    }
  });
});

describe('bodies Navi refuses', () => {
  it('refuses broken JSON with 400', async () => {
    const res = await raw('/chat/completions', { body: '{"model": "navi:plain", "messages": [' });
    expect(res.status).toBe(400);
    expectOpenAiError(res.body, 'invalid_json');
    expect(res.body.error.type).toBe('invalid_request_error');
  });

  it('refuses a body that is not a JSON object', async () => {
    const xml = await raw('/chat/completions', {
      body: '<a/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(415);
    expectOpenAiError(xml.body, 'unsupported_media_type');
    const text = await raw('/chat/completions', { body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(400);
    expectOpenAiError(text.body, 'bad_request');
    expect(text.body.error.message).toContain('body must be object');
    const array = await raw('/chat/completions', { body: '[1]' });
    expect(array.status).toBe(400);
    expectOpenAiError(array.body, 'bad_request');
  });

  it('refuses an oversized body with 413', async () => {
    const huge = JSON.stringify({
      model: 'navi:plain',
      messages: [{ role: 'user', content: 'x'.repeat(navi.app.initialConfig.bodyLimit ?? 0) }],
    });
    const res = await raw('/chat/completions', { body: huge });
    expect(res.status).toBe(413);
    expectOpenAiError(res.body, 'body_too_large');
  });

  it('refuses wrong types with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 5, messages: [{ role: 'user', content: 'x' }] }, 'model'],
      [{ model: 'navi:plain', messages: 'hello' }, 'messages'],
      [{ model: 'navi:plain' }, 'messages'],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'model'],
      [{ model: 'navi:plain', messages: [] }, 'messages'],
      [{ model: 'navi:plain', messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      [{ model: 'navi:plain', messages: [{ content: 'x' }] }, 'messages[0].role'],
      [{ model: 'navi:plain', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
      [{ model: 'navi:plain', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'stream'],
      [
        { model: 'navi:plain', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' },
        'temperature',
      ],
      [
        { model: 'navi:plain', messages: [{ role: 'user', content: 'x' }], metadata: { session_id: 7 } },
        'metadata.session_id',
      ],
      [{ model: 'navi:plain', messages: [{ role: 'user', content: 'x' }], user: 'u'.repeat(300) }, 'user'],
    ];
    for (const [body, param] of cases) {
      const res = await raw('/chat/completions', { body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectOpenAiError(res.body, 'bad_request', param);
    }
    expect(chatRequests(fake)).toHaveLength(0);
  });

  it('refuses messages Navi cannot answer, saying what to send instead', async () => {
    const cases: [unknown, Record<string, unknown>, string, RegExp][] = [
      [
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
        {},
        'messages',
        /must be the user's/,
      ],
      [[{ role: 'system', content: 'be brief' }], {}, 'messages', /must be the user's/],
      [[{ role: 'user', content: '   ' }], {}, 'messages[0].content', /empty/],
      [[{ role: 'user', content: 'hi' }], { n: 2 }, 'n', /one answer/],
      [
        [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
        {},
        'messages[0].content[0]',
        /"text" and "image_url"/,
      ],
      [
        [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
          },
        ],
        {},
        'messages[0].content[0].image_url.url',
        /data: URL/,
      ],
      [
        [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,%%%' } }] }],
        {},
        'messages[0].content[0].image_url.url',
        /An image is not valid base64 or is too large: messages\[0\]\.content\[0\]\.image_url\.url is not base64$/,
      ],
    ];
    for (const [messages, extra, param, message] of cases) {
      const err = await rejection(ask(messages, extra));
      expect(err, JSON.stringify(messages)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param).toBe(param);
      expect(err.message).toMatch(message);
    }
    expect(chatRequests(fake)).toHaveLength(0);
  });
});

describe('runs', () => {
  it('answers a run that fails with 502 and the run’s own message', async () => {
    fake.enqueue({ httpError: { status: 500, body: 'model exploded' } });
    fake.setDefault({ httpError: { status: 500, body: 'model exploded' } });
    const err = await rejection(ask([{ role: 'user', content: 'hi' }]));
    expect(err.status).toBe(502);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.type).toBe('server_error');
    expect(err.message).toMatch(/500|exploded/);
  });

  it('ends a stream whose run fails with an error event the client raises', async () => {
    fake.setDefault({ httpError: { status: 500, body: 'model exploded' } });
    const stream = await askStream('hi');
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const chunk of stream) seen.push(chunk);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toMatch(/500|exploded/);
    // The stream had begun: its role chunk came first.
    expect(seen).toHaveLength(1);
  });

  it('refuses a second request while the session answers (409), and a client leaving stops its run', async () => {
    fake.enqueue({ text: 'I will never finish this', stallAfterChunks: 1 });
    const { data: stream, response } = await askStream('go on', { user: 'busy-conversation' }).withResponse();
    const sessionId = response.headers.get(SESSION_HEADER) ?? '';
    const iterator = stream[Symbol.asyncIterator]();
    // The role chunk, then the first piece of text: the run is under way.
    await iterator.next();
    expect((await iterator.next()).value?.choices[0]?.delta.content).toBe('I will n');

    const busy = await rejection(ask([{ role: 'user', content: 'me too' }], { user: 'busy-conversation' }));
    expect(busy).toBeInstanceOf(OpenAI.ConflictError);
    expect(busy.code).toBe('run_active');
    expect(busy.headers?.get(SESSION_HEADER)).toBe(sessionId);

    stream.controller.abort();
    // The run stops: its LLM request is cancelled and the session is free again.
    await fake.waitForAborted(1);
    await navi.app.navi.runs.idle(sessionId);
    const stored = await navi.services.sessions.getMessages(sessionId);
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'I will n' });
  });

  it('gives two first requests of one key at once one session: the second is refused as busy', async () => {
    fake.setDefault({ text: 'never ending', stallAfterChunks: 1 });
    const outcomes = await Promise.allSettled(
      [1, 2].map(() => askStream('at once', { user: 'twin-requests' }).withResponse()),
    );
    const started = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(OpenAI.ConflictError);
    const sessionId = started[0]?.response.headers.get(SESSION_HEADER);
    expect((refused[0] as InstanceType<typeof OpenAI.ConflictError>).headers?.get(SESSION_HEADER)).toBe(
      sessionId,
    );
    // The refused request joined the session: it leaves it to the run that started.
    expect(await navi.services.sessions.get(sessionId ?? '')).toBeDefined();
    started[0]?.data.controller.abort();
    await navi.app.navi.runs.idle(sessionId ?? '');
  });

  it('removes the session a request created when its run cannot start, with its key, and keeps one it did not', async () => {
    const runs = navi.app.navi.runs;
    const before = (await navi.services.sessions.list()).length;
    for (const [extra, stream] of [
      [{}, false],
      [{ user: 'never-started' }, false],
      [{ user: 'never-started-streamed' }, true],
    ] as const) {
      const refusal = vi.spyOn(runs, 'start').mockRejectedValueOnce(new ApiError('SHUTTING_DOWN'));
      const err = await rejection(
        stream ? askStream('hi', extra) : ask([{ role: 'user', content: 'hi' }], extra),
      );
      refusal.mockRestore();
      expect(err.status, JSON.stringify(extra)).toBe(503);
      expect(err.code).toBe('shutting_down');
      // The answer names no session: there is none left.
      expect(err.headers?.get(SESSION_HEADER)).toBeNull();
    }
    expect((await navi.services.sessions.list()).length).toBe(before);
    expect(await navi.services.kv.get(CONVERSATIONS_KV_ID, 'plain/never-started')).toBeUndefined();
    expect(await navi.services.kv.get(CONVERSATIONS_KV_ID, 'plain/never-started-streamed')).toBeUndefined();

    // A session the key already had stays, with its key, though this request's run did not start.
    fake.enqueue({ text: 'first answer' });
    const { response } = await ask([{ role: 'user', content: 'first' }], { user: 'kept' }).withResponse();
    const kept = response.headers.get(SESSION_HEADER) ?? '';
    const refusal = vi.spyOn(runs, 'start').mockRejectedValueOnce(new ApiError('SHUTTING_DOWN'));
    const err = await rejection(ask([{ role: 'user', content: 'second' }], { user: 'kept' }));
    refusal.mockRestore();
    expect(err.headers?.get(SESSION_HEADER)).toBe(kept);
    expect(await navi.services.sessions.get(kept)).toBeDefined();
    expect(await navi.services.kv.get(CONVERSATIONS_KV_ID, 'plain/kept')).toEqual({ session_id: kept });
  });

  it('holds a key’s other requests until the session its first request created has its run, or is gone', async () => {
    const conversations = new Conversations(navi.services, navi.app.navi.runs);
    const resolved: string[] = [];
    const follow = (label: string) =>
      conversations.sessionFor('plain', 'held-key').then((opened) => {
        resolved.push(label);
        return opened;
      });

    // The first request's run could not start: the second waits while its session is removed,
    // then makes its own, where it would otherwise have taken the one that is going.
    const first = await conversations.sessionFor('plain', 'held-key');
    expect(first.created).toBe(true);
    const second = follow('second');
    expect(await conversations.discard(first)).toBe(true);
    expect(resolved).toEqual([]);
    conversations.settle(first);
    const mine = await second;
    expect(mine.created).toBe(true);
    expect(mine.session.id).not.toBe(first.session.id);
    expect(await navi.services.sessions.get(mine.session.id)).toBeDefined();
    expect(await navi.services.kv.get(CONVERSATIONS_KV_ID, 'plain/held-key')).toEqual({
      session_id: mine.session.id,
    });

    // Its run started: the next one waits for that, then joins the session.
    const third = follow('third');
    await new Promise((resolve) => setImmediate(resolve));
    expect(resolved).toEqual(['second']);
    conversations.settle(mine);
    expect(await third).toMatchObject({ session: { id: mine.session.id }, created: false });
    // A request that only joined holds nobody up.
    expect(await conversations.sessionFor('plain', 'held-key')).toMatchObject({ created: false });
  });

  it('stops a run whose client left while it was starting', async () => {
    const runs = navi.app.navi.runs;
    for (const stream of [false, true]) {
      fake.enqueue({ hang: true });
      const controller = new AbortController();
      let leave = () => {};
      const left = new Promise<void>((resolve) => {
        leave = resolve;
      });
      const start = runs.start.bind(runs);
      const slowStart = vi.spyOn(runs, 'start').mockImplementationOnce(async (sessionId, input) => {
        controller.abort();
        await left;
        return start(sessionId, input);
      });
      const key = `leaves-while-starting-${stream}`;
      const pending = client.chat.completions
        .create(
          { model: 'navi:plain', messages: [{ role: 'user', content: 'hi' }], user: key, stream },
          { signal: controller.signal },
        )
        .catch((e: unknown) => e);
      expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
      // The server notices the closed connection before the run starts.
      await new Promise((resolve) => setTimeout(resolve, 100));
      leave();
      slowStart.mockRestore();
      const sessionId =
        (await navi.services.kv.get<{ session_id: string }>(CONVERSATIONS_KV_ID, `plain/${key}`))
          ?.session_id ?? '';
      await vi.waitFor(() => expect(runs.get(sessionId)).toBeUndefined(), { timeout: 3000 });
    }
  });

  it('stops the run of a whole (not streamed) answer whose client leaves', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    const pending = client.chat.completions
      .create(
        {
          model: 'navi:plain',
          messages: [{ role: 'user', content: 'take your time' }],
          user: 'leaves-early',
        },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    await fake.waitForRequests(1);
    const sessionId =
      (await navi.app.navi.services.kv.get<{ session_id: string }>(CONVERSATIONS_KV_ID, 'plain/leaves-early'))
        ?.session_id ?? '';
    controller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
    await fake.waitForAborted(1);
    await navi.app.navi.runs.idle(sessionId);
    expect(navi.app.navi.runs.get(sessionId)).toBeUndefined();
  });
});
