/**
 * The context meter's figures: what `stream_end` and `stream_stopped` carry is what
 * `GET /sessions/{id}` then reports, for a model whose window the backend setting gives and for
 * one that takes less (the clamped window every LLM call uses).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type Figures = { context_tokens?: number; max_context_tokens?: number };

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'short', name: 'Short', model: 'short-context' },
]);

let fake: FakeLlm;
let navi: NaviHandle;
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ fake, navi, close } = await startNaviWithLlm({
    llm: {
      models: ['test-model', 'short-context'],
      modelInfo: {
        'short-context': {
          show: {
            capabilities: ['completion', 'tools'],
            model_info: { 'general.architecture': 'fake', 'fake.context_length': 2048 },
          },
        },
      },
    },
    settings: {
      OLLAMA_DEFAULT_MODEL: 'test-model',
      OLLAMA_NUM_CTX: '32768',
      PROFILES_DIR: profiles,
      DEFAULT_PROFILE: 'plain',
      CONTEXT_COMPRESSION_ENABLED: 'false',
    },
  }));
});
afterEach(() => fake.reset());
afterAll(() => close());

/** The figures of the session as `GET /sessions/{id}` reports them. */
async function reported(id: string): Promise<Figures> {
  const detail = await getSession(navi, id);
  return { context_tokens: detail.context_token_count, max_context_tokens: detail.max_context_tokens };
}

const figuresOf = (event: ServerEvent | undefined): Figures => {
  const { context_tokens, max_context_tokens } = (event ?? {}) as Figures;
  return { context_tokens, max_context_tokens };
};

async function stoppedRun(id: string): Promise<ServerEvent[]> {
  const client = await EventClient.connect(navi.wsUrl(id));
  // One chunk, then silence until the stop: the run cannot end on its own before it.
  fake.enqueue({ text: 'word '.repeat(400), chunkSize: 5, stallAfterChunks: 1 });
  client.send({ type: 'message', content: 'talk a lot' });
  await client.waitFor((e) => e.type === 'stream_delta');
  await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
  const events = await client.waitForRunEnd();
  await client.close();
  return events;
}

describe.each([
  ['the backend setting', 'plain', 32768],
  ['a model that takes less than the setting', 'short', 2048],
])('with the window of %s', (_what, profile, window) => {
  it('stream_end carries what GET then reports', async () => {
    const id = await navi.createSession(profile);
    const client = await EventClient.connect(navi.wsUrl(id));
    fake.enqueue({ text: 'Short answer.', usage: { prompt: 700, completion: 5 } });
    client.send({ type: 'message', content: 'hello' });
    const end = (await client.waitForRunEnd()).at(-1);
    await client.close();
    expect(end).toMatchObject({ type: 'stream_end', context_tokens: 705, max_context_tokens: window });
    expect(await reported(id)).toEqual(figuresOf(end));
  });

  it('stream_stopped carries them too, equal to what GET reports after the stop', async () => {
    const id = await navi.createSession(profile);
    const end = (await stoppedRun(id)).at(-1);
    expect(end?.type).toBe('stream_stopped');
    const figures = figuresOf(end);
    expect(figures.context_tokens).toBeGreaterThan(0);
    expect(figures.max_context_tokens).toBe(window);
    expect(await reported(id)).toEqual(figures);
  });
});

it('after a rewind, the figure is an estimate of what is left, not the removed turns', async () => {
  const id = await navi.createSession();
  const client = await EventClient.connect(navi.wsUrl(id));
  fake.enqueue({ text: 'A long answer.', usage: { prompt: 9000, completion: 1000 } });
  client.send({ type: 'message', content: 'hello there' });
  await client.waitForRunEnd();
  expect((await reported(id)).context_tokens).toBe(10_000);

  // While the retry waits for its LLM call, the session holds the estimate the rewind set.
  fake.enqueue({ hang: true });
  const mark = client.events.length;
  client.send({ type: 'regenerate' });
  await client.waitFor((e) => e.type === 'history_rewound', 15_000, mark);
  expect((await reported(id)).context_tokens).toBe(Math.ceil('hello there'.length / 4));
  await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
  const end = (await client.waitForRunEnd(mark)).at(-1);
  await client.close();
  expect(end?.type).toBe('stream_stopped');
  expect(await reported(id)).toEqual(figuresOf(end));
});
