/**
 * The runtime routes on a real Navi (real port, runtime folder in its temporary data folder),
 * installing with a stand-in npm on PATH (a real subprocess): the state, an install started
 * (202) and refused while one runs (409), its failure readable afterwards, the person's consent
 * required, and bad input refused with a 4xx that says what was wrong.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlamacppRuntimeStatus, LocalModelsView } from '../../src/protocol/llm.js';
import { fakeNpmEnv, writeFakeNpm } from '../support/fake-npm.js';
import { type NaviHandle, startNavi } from '../support/navi.js';

let navi: NaviHandle;
let cookie: string;
let root: string;
const saved = { ...process.env };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'navi-runtime-routes-'));
  // The server runs npm with its own environment: the stand-in npm goes first on this PATH.
  const go = join(root, 'go');
  Object.assign(process.env, fakeNpmEnv(writeFakeNpm(root), 'wait', { FAKE_NPM_GO: go }));
  navi = await startNavi();
  cookie = await navi.pair();
});
afterAll(async () => {
  await navi.close();
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

function send(method: string, path: string, body?: string, withConsent = true): Promise<Response> {
  return fetch(`${navi.url}${path}`, {
    method,
    headers: {
      ...(withConsent ? { cookie } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
  });
}

async function status(): Promise<LlamacppRuntimeStatus> {
  const res = await send('GET', '/llm/runtime');
  expect(res.status).toBe(200);
  return (await res.json()) as LlamacppRuntimeStatus;
}

async function refused(res: Response, statusCode: number, code: string, words: string): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(statusCode);
  const parsed = JSON.parse(text) as { code: string; error: string };
  expect(parsed.code).toBe(code);
  expect(parsed.error).toContain(words);
}

describe('/llm/runtime', () => {
  it('reports the runtime as not installed in a new data folder, here and in GET /llm/local', async () => {
    expect(await status()).toEqual({
      installed: false,
      version: null,
      installing: false,
      log: [],
      error: null,
    });
    const local = (await (await send('GET', '/llm/local')).json()) as LocalModelsView;
    expect(local.runtime).toEqual(await status());
  });

  it('refuses bad input and clients without consent, starting nothing', async () => {
    await refused(await send('POST', '/llm/runtime', '{"gpu":"yes"}'), 400, 'BAD_REQUEST', 'gpu');
    await refused(
      await send('POST', '/llm/runtime', '{"gpu":true,"path":"/tmp"}'),
      400,
      'BAD_REQUEST',
      'path',
    );
    await refused(await send('POST', '/llm/runtime', '[1,2]'), 400, 'BAD_REQUEST', 'object');
    await refused(await send('POST', '/llm/runtime', '{"gpu":'), 400, 'INVALID_JSON', 'JSON');
    await refused(
      await send('POST', '/llm/runtime', JSON.stringify({ gpu: 'x'.repeat(5000) })),
      413,
      'BODY_TOO_LARGE',
      '',
    );
    await refused(await send('POST', '/llm/runtime', '{}', false), 403, 'CONSENT_REQUIRED', 'navi pair');
    expect((await status()).installing).toBe(false);
  });

  it('starts an install (202), refuses a second while it runs (409), and shows how it ended', async () => {
    const started = await send('POST', '/llm/runtime', '{}');
    expect(started.status).toBe(202);
    expect(((await started.json()) as LlamacppRuntimeStatus).installing).toBe(true);
    await refused(
      await send('POST', '/llm/runtime', '{"gpu":true}'),
      409,
      'RUNTIME_INSTALLING',
      'GET /llm/runtime',
    );
    // No body at all is accepted too (refused here only because one runs).
    await refused(await send('POST', '/llm/runtime'), 409, 'RUNTIME_INSTALLING', 'already being installed');
    writeFileSync(join(root, 'go'), '');
    let now = await status();
    while (now.installing) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      now = await status();
    }
    expect(now.installed).toBe(false);
    expect(now.error).toContain('No matching version found for node-llama-cpp@3.22.1');
    expect(now.log).toContain('npm error code ETARGET');
    expect(existsSync(navi.services.settings.LLAMACPP_RUNTIME_DIR)).toBe(false);
  });
});
