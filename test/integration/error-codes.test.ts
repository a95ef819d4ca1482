/**
 * Every kind of LLM failure ends the run with an `error` event whose `code` comes from the one
 * table of `src/protocol/error-codes.ts`, so a client picks its advice by code. The failures
 * are produced by the fake LLM server on the real wire.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ErrorCode, errorTable } from '../../src/protocol/error-codes.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { closedPortUrl, type FakeLlm, type ReplyScript, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'nowhere', name: 'Nowhere', llm_backend: 'no-such-backend' },
]);

async function lastEventOf(navi: NaviHandle, profileId?: string): Promise<ServerEvent | undefined> {
  const id = await navi.createSession(profileId);
  const client = await EventClient.connect(navi.wsUrl(id));
  client.send({ type: 'message', content: 'hello' });
  const events = await client.waitForRunEnd();
  await client.close();
  return events.at(-1);
}

const failures: [string, ErrorCode, ReplyScript][] = [
  ['HTTP 500', 'LLM_HTTP_ERROR', { httpError: { status: 500, body: 'model crashed' } }],
  ['HTTP 401', 'LLM_AUTH', { httpError: { status: 401, body: '{"error":"bad key"}' } }],
  [
    'a missing model',
    'LLM_MODEL_NOT_FOUND',
    {
      httpError: { status: 404, body: '{"error":"model \\"test-model\\" not found, try pulling it first"}' },
    },
  ],
  [
    'a context overflow',
    'CONTEXT_OVERFLOW',
    { httpError: { status: 400, body: '{"error":"the input length exceeds the context length"}' } },
  ],
  [
    'a model without tools',
    'LLM_UNSUPPORTED',
    { httpError: { status: 400, body: '{"error":"test-model does not support tools"}' } },
  ],
  ['a malformed stream', 'LLM_MALFORMED', { text: 'half', malformed: true }],
  [
    'a stream cut half-way',
    'LLM_MALFORMED',
    { text: 'This answer is cut.', chunkSize: 4, cutAfterChunks: 2 },
  ],
  ['a stream gone silent', 'LLM_TIMEOUT', { text: 'I go quiet now', chunkSize: 4, stallAfterChunks: 2 }],
];

describe('error codes of LLM failures on the wire', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: {
        OLLAMA_HOST: fake.ollamaUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        LLM_IDLE_TIMEOUT_MS: '300',
      },
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it.each(failures)('%s ends the run with code %s', async (_what, code, script) => {
    fake.enqueue(script);
    const last = await lastEventOf(navi);
    expect(last).toMatchObject({ type: 'error', recoverable: false, code });
    expect(errorTable[code].status).toBeGreaterThanOrEqual(400);
  });

  it('a profile whose backend does not exist ends with LLM_UNAVAILABLE', async () => {
    expect(await lastEventOf(navi, 'nowhere')).toMatchObject({
      type: 'error',
      recoverable: false,
      code: 'LLM_UNAVAILABLE',
    });
  });

  it('a server nobody listens on ends with LLM_UNREACHABLE', async () => {
    const url = await closedPortUrl();
    const lonely = await startNavi({
      settings: { OLLAMA_HOST: url, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    });
    try {
      expect(await lastEventOf(lonely)).toMatchObject({
        type: 'error',
        recoverable: false,
        code: 'LLM_UNREACHABLE',
      });
    } finally {
      await lonely.close();
    }
  });

  it('refused client frames carry codes from the same table', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send('not json');
    expect(await client.waitFor((e) => e.type === 'error')).toMatchObject({ code: 'INVALID_JSON' });
    const from = client.events.length;
    client.send({ type: 'tool_confirm', call_id: 'nope', approved: true });
    expect(await client.waitFor((e) => e.type === 'error', 5000, from)).toMatchObject({
      code: 'CONSENT_REQUIRED',
    });
    await client.close();
  });
});
