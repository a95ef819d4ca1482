/**
 * `GET`/`PUT /llm/settings` on a real Navi: what the environment locks, a change applied without
 * a restart (the next message goes to the new server), the settings file written and read back
 * after a restart, every kind of bad body refused with nothing changed, and a client without the
 * person's consent (a `navi pair` cookie or the API token) refused before anything is read.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmSettingsView } from '../../src/protocol/llm.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

const profiles = profilesDir([plainProfile]);
const OPENAI_KEY = 'sk-test-key-for-the-fake-server';

let ollama: FakeLlm;
let openai: FakeLlm;
let navi: NaviHandle;
let dir: string;
/** The consent cookie of a paired client: only such a client may change where conversations go. */
let cookie: string;

function startOn(folder: string): Promise<NaviHandle> {
  return startNavi({
    dir: folder,
    settings: {
      // These two come from the "environment", so the client may not change them.
      OLLAMA_HOST: ollama.ollamaUrl,
      OLLAMA_DEFAULT_MODEL: 'test-model',
      PROFILES_DIR: profiles,
      DEFAULT_PROFILE: 'plain',
    },
  });
}

beforeAll(async () => {
  ollama = await startFakeLlm({ defaultReply: { text: 'from ollama' } });
  openai = await startFakeLlm({
    models: ['gpt-fake'],
    apiKey: OPENAI_KEY,
    defaultReply: { text: 'from openai' },
  });
  dir = tempDir();
  navi = await startOn(dir);
  cookie = await navi.pair();
});
afterAll(async () => {
  await navi?.close();
  await ollama?.close();
  await openai?.close();
  rmSync(dir, { recursive: true, force: true });
});

function put(body: unknown, raw?: string, withConsent = true): Promise<Response> {
  return fetch(`${navi.url}/llm/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...(withConsent ? { cookie } : {}) },
    body: raw ?? JSON.stringify(body),
  });
}

async function view(): Promise<LlmSettingsView> {
  const res = await fetch(`${navi.url}/llm/settings`);
  expect(res.status).toBe(200);
  return (await res.json()) as LlmSettingsView;
}

async function refused(res: Response, status: number, code: string, words: RegExp): Promise<void> {
  const body = (await res.json()) as { error: string; code: string };
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  expect(body.error).toMatch(words);
}

const settingsFile = () => join(dir, 'data', 'settings.json');

describe('LLM settings over REST', () => {
  it('shows the values in effect and locks what the environment sets', async () => {
    const v = await view();
    expect(v.values).toMatchObject({
      DEFAULT_LLM_BACKEND: 'ollama',
      OLLAMA_HOST: ollama.ollamaUrl,
      OLLAMA_DEFAULT_MODEL: 'test-model',
      OPENAI_API_KEY: '',
    });
    expect(v.api_key_set).toBe(false);
    expect(v.locked.sort()).toEqual(['OLLAMA_DEFAULT_MODEL', 'OLLAMA_HOST']);
  });

  it('refuses bad bodies, each with what was wrong, and changes nothing', async () => {
    const before = await view();
    await refused(
      await put({ DEFAULT_LLM_BACKEND: 5 }),
      400,
      'BAD_REQUEST',
      /DEFAULT_LLM_BACKEND must be string,null/,
    );
    await refused(await put({ OPENAI_MODEL: true }), 400, 'BAD_REQUEST', /OPENAI_MODEL/);
    await refused(
      await put({ NAVI_API_TOKEN: 'x' }),
      400,
      'BAD_REQUEST',
      /must NOT have additional properties \("NAVI_API_TOKEN"\)/,
    );
    await refused(await put(['openai']), 400, 'BAD_REQUEST', /must be object/);
    await refused(
      await put(undefined, '{"DEFAULT_LLM_BACKEND": "openai",'),
      400,
      'INVALID_JSON',
      /not valid JSON/,
    );
    await refused(
      await put({ OPENAI_BASE_URL: 'ftp://files.example/v1' }),
      400,
      'INVALID_SETTING',
      /OPENAI_BASE_URL="ftp:\/\/files.example\/v1": accepts an http:\/\/ or https:\/\/ URL/,
    );
    await refused(
      await put({ DEFAULT_LLM_BACKEND: 'claude', OPENAI_MODEL: 'fine' }),
      400,
      'INVALID_SETTING',
      /DEFAULT_LLM_BACKEND="claude": accepts ollama, openai, llamacpp/,
    );
    await refused(
      await put({ OPENAI_MODEL: 'm'.repeat(5000) }),
      400,
      'BAD_REQUEST',
      /must NOT have more than 4096 characters/,
    );
    await refused(
      await put(undefined, JSON.stringify({ OPENAI_MODEL: 'm' }).padEnd(70 * 1024, ' ')),
      413,
      'BODY_TOO_LARGE',
      /too large/,
    );
    await refused(
      await put({ OLLAMA_HOST: 'http://elsewhere:11434', OPENAI_MODEL: 'fine' }),
      409,
      'SETTING_LOCKED',
      /OLLAMA_HOST is set in the environment or \.env; change it there/,
    );
    await refused(await put({ OLLAMA_DEFAULT_MODEL: null }), 409, 'SETTING_LOCKED', /OLLAMA_DEFAULT_MODEL/);
    expect(await view()).toEqual(before);
    expect(existsSync(settingsFile())).toBe(false);
  });

  it('refuses a client that is not paired (403 CONSENT_REQUIRED) and saves nothing', async () => {
    const before = await view();
    const change = {
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'sk-planted',
      OPENAI_MODEL: 'planted',
    };
    await refused(await put(change, undefined, false), 403, 'CONSENT_REQUIRED', /navi pair/);
    // A cookie no pairing made is no consent either.
    const forged = await fetch(`${navi.url}/llm/settings`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie: 'navi_consent=forged-secret' },
      body: JSON.stringify(change),
    });
    await refused(forged, 403, 'CONSENT_REQUIRED', /navi pair/);
    // Refused before the body is read: even a broken one gets the same answer.
    await refused(
      await put(undefined, '{"DEFAULT_LLM_BACKEND": ', false),
      403,
      'CONSENT_REQUIRED',
      /navi pair/,
    );
    expect(await view()).toEqual(before);
    expect(existsSync(settingsFile())).toBe(false);
    expect(navi.services.settings.DEFAULT_LLM_BACKEND).toBe('ollama');
  });

  it('accepts a locked setting sent back unchanged, and an empty body', async () => {
    const res = await put({ OLLAMA_HOST: `${ollama.ollamaUrl}/`, OLLAMA_DEFAULT_MODEL: 'test-model' });
    expect(res.status).toBe(200);
    expect((await put({})).status).toBe(200);
    expect(existsSync(settingsFile())).toBe(false);
  });

  it('switches the backend without a restart: the next message goes to the new server', async () => {
    const id = await navi.createSession();
    expect((await postMessage(navi, id, 'first')).status).toBe(200);
    expect(chatRequests(ollama)).toHaveLength(1);

    const res = await put({
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_BASE_URL: openai.openaiUrl,
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_MODEL: 'gpt-fake',
    });
    expect(res.status).toBe(200);
    const saved = (await res.json()) as LlmSettingsView;
    expect(saved.values).toMatchObject({
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_MODEL: 'gpt-fake',
      OPENAI_API_KEY: '',
    });
    expect(saved.api_key_set).toBe(true);

    const reply = await postMessage(navi, id, 'second');
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { content: string }).content).toBe('from openai');
    const [chat] = chatRequests(openai);
    expect(chat?.body.model).toBe('gpt-fake');
    expect(chat?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(chatRequests(ollama)).toHaveLength(1);
    expect(navi.services.settings.DEFAULT_LLM_BACKEND).toBe('openai');
  });

  it('wrote the settings file with mode 0600, as valid JSON holding what was saved', () => {
    expect(statSync(settingsFile()).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(settingsFile(), 'utf8'))).toEqual({
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_BASE_URL: openai.openaiUrl,
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_MODEL: 'gpt-fake',
    });
  });

  it('keeps the saved key for an empty one, and removes a value set to null', async () => {
    const kept = (await (
      await put({ OPENAI_API_KEY: '', OPENAI_MODEL: 'gpt-fake' })
    ).json()) as LlmSettingsView;
    expect(kept.api_key_set).toBe(true);
    const cleared = (await (await put({ OPENAI_API_KEY: null })).json()) as LlmSettingsView;
    expect(cleared.api_key_set).toBe(false);
    expect(JSON.parse(readFileSync(settingsFile(), 'utf8'))).not.toHaveProperty('OPENAI_API_KEY');
    // The server wants the key: without it the run fails with the server's refusal.
    const id = await navi.createSession();
    const res = await postMessage(navi, id, 'no key');
    expect(res.status).toBe(502);
    await put({ OPENAI_API_KEY: OPENAI_KEY });
  });

  it('takes a vault reference for the key: the file keeps the reference, the server gets the value', async () => {
    const created = navi.services.vault.create(
      { name: 'OpenAI key', type: 'api_token', fields: [{ name: 'key', value: OPENAI_KEY, secret: true }] },
      { actor: 'user' },
    );
    const reference = created.fields.find((f) => f.name === 'key')?.reference ?? '';
    await refused(
      await put({ OPENAI_API_KEY: '{{secret:00000000-0000-4000-8000-000000000000.key}}' }),
      400,
      'INVALID_SETTING',
      /OPENAI_API_KEY=\{\{secret:00000000-0000-4000-8000-000000000000\.key\}\}/,
    );
    expect((await put({ OPENAI_API_KEY: reference })).status).toBe(200);
    expect(JSON.parse(readFileSync(settingsFile(), 'utf8')).OPENAI_API_KEY).toBe(reference);
    const id = await navi.createSession();
    expect((await postMessage(navi, id, 'by reference')).status).toBe(200);
    expect(chatRequests(openai).at(-1)?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('reads the saved settings again after a restart', async () => {
    await navi.close();
    navi = await startOn(dir);
    cookie = await navi.pair();
    const v = await view();
    expect(v.values).toMatchObject({ DEFAULT_LLM_BACKEND: 'openai', OPENAI_BASE_URL: openai.openaiUrl });
    expect(v.api_key_set).toBe(true);
    expect(v.locked.sort()).toEqual(['OLLAMA_DEFAULT_MODEL', 'OLLAMA_HOST']);
    const id = await navi.createSession();
    const before = chatRequests(openai).length;
    expect((await postMessage(navi, id, 'after restart')).status).toBe(200);
    expect(chatRequests(openai)).toHaveLength(before + 1);
  });
});
