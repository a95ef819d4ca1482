/**
 * A session's own model (`PATCH /sessions/{id}` `{model}`) on a real Navi against fake LLM
 * servers: set, cleared, bad input refused; and images refused, over REST and WebSocket, before
 * anything is stored, when the session's model reads text only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../src/protocol/rest.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

// A 1×1 PNG.
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let fake: FakeLlm;
let navi: NaviHandle;

beforeAll(async () => {
  fake = await startFakeLlm({
    models: ['text-only', 'seeing'],
    modelInfo: {
      'text-only': { show: { capabilities: ['completion', 'tools'] } },
      seeing: { show: { capabilities: ['completion', 'tools', 'vision'] } },
    },
    defaultReply: { text: 'seen' },
  });
  navi = await startNavi({
    settings: {
      OLLAMA_HOST: fake.ollamaUrl,
      OPENAI_BASE_URL: fake.openaiUrl,
      OLLAMA_DEFAULT_MODEL: 'text-only',
      OPENAI_NUM_CTX: '32000',
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
    },
  });
});
afterEach(() => {
  fake.requests.length = 0;
});
afterAll(async () => {
  await navi?.close();
  await fake?.close();
});

function patch(id: string, body: unknown): Promise<Response> {
  return fetch(`${navi.url}/sessions/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('PATCH /sessions/{id} {model}', () => {
  it('sets the model, shows it in the session and the list, and clears it with null', async () => {
    const id = await navi.createSession();
    const res = await patch(id, { model: { backend: 'openai', model: ' gpt-fake ' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as SessionSummary).model_override).toEqual({
      backend: 'openai',
      model: 'gpt-fake',
    });
    const detail = await getSession(navi, id);
    expect(detail.model_override).toEqual({ backend: 'openai', model: 'gpt-fake' });
    // The context meter follows the session's backend.
    expect(detail.max_context_tokens).toBe(32000);
    const list = (await (await fetch(`${navi.url}/sessions`)).json()) as SessionSummary[];
    expect(list.find((s) => s.id === id)?.model_override?.model).toBe('gpt-fake');

    const renamed = (await (await patch(id, { title: 'Kept' })).json()) as SessionSummary;
    expect(renamed.model_override?.model).toBe('gpt-fake');
    const cleared = (await (await patch(id, { model: null })).json()) as SessionSummary;
    expect(cleared).not.toHaveProperty('model_override');
    expect(cleared.title).toBe('Kept');
  });

  it('refuses an unknown backend and bad shapes, saying what was wrong', async () => {
    const id = await navi.createSession();
    const cases: [unknown, number, string, RegExp][] = [
      [
        { model: { backend: 'claude', model: 'x' } },
        400,
        'UNKNOWN_BACKEND',
        /"claude" is not one of ollama, openai/,
      ],
      [{ model: { backend: 'ollama', model: '' } }, 400, 'BAD_REQUEST', /model must NOT have fewer than 1/],
      [{ model: { backend: 'ollama', model: '   ' } }, 400, 'BAD_REQUEST', /must name a model/],
      [
        { model: { backend: 'ollama', model: 'm'.repeat(201) } },
        400,
        'BAD_REQUEST',
        /more than 200 characters/,
      ],
      [{ model: { backend: 'ollama' } }, 400, 'BAD_REQUEST', /required property 'model'/],
      [{ model: 'gpt-fake' }, 400, 'BAD_REQUEST', /model must be object,null/],
      [{ model: { backend: 'ollama', model: 'x', temperature: 2 } }, 400, 'BAD_REQUEST', /"temperature"/],
      [{ model: { backend: 7, model: 'x' } }, 400, 'BAD_REQUEST', /backend must be string/],
    ];
    for (const [body, status, code, words] of cases) {
      const res = await patch(id, body);
      const answer = (await res.json()) as { error: string; code: string };
      expect({ body, status: res.status, code: answer.code }).toEqual({ body, status, code });
      expect(answer.error).toMatch(words);
    }
    expect(await getSession(navi, id)).not.toHaveProperty('model_override');
    const missing = await fetch(`${navi.url}/sessions/00000000-0000-4000-8000-000000000000`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: null }),
    });
    expect(missing.status).toBe(404);
  });
});

describe('images for a text-only model', () => {
  it('are refused over REST before anything is stored', async () => {
    const id = await navi.createSession();
    const res = await postMessage(navi, id, { content: 'what is this?', images: [PIXEL] });
    const body = (await res.json()) as { error: string; code: string };
    expect({ status: res.status, code: body.code }).toEqual({ status: 400, code: 'IMAGES_UNSUPPORTED' });
    expect(body.error).toMatch(/reads text only.*text-only \(ollama\)/);
    expect((await getSession(navi, id)).messages).toEqual([]);
    expect(chatRequests(fake)).toEqual([]);
  });

  it('are refused over the WebSocket with a recoverable error', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id));
    try {
      client.send({ type: 'message', content: 'look', images: [PIXEL] });
      const error = await client.waitFor((e) => e.type === 'error');
      expect(error).toMatchObject({ type: 'error', code: 'IMAGES_UNSUPPORTED', recoverable: true });
    } finally {
      await client.close();
    }
    expect((await getSession(navi, id)).messages).toEqual([]);
    expect(chatRequests(fake)).toEqual([]);
  });

  it('are accepted once the session uses a model that sees, and text alone always is', async () => {
    const id = await navi.createSession();
    expect((await postMessage(navi, id, 'text only is fine')).status).toBe(200);
    expect((await patch(id, { model: { backend: 'ollama', model: 'seeing' } })).status).toBe(200);
    const res = await postMessage(navi, id, { content: 'and now?', images: [PIXEL] });
    expect(res.status).toBe(200);
    const stored = (await getSession(navi, id)).messages.filter((m) => m.role === 'user');
    expect(stored.at(-1)?.images).toHaveLength(1);
  });
});
