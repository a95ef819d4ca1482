/**
 * The model routes on a real Navi (real port, models folder in its temporary data folder),
 * downloading from a real local HTTP server: the local view, downloads started, polled and
 * cancelled, removing a model, bad input refused with a 4xx that says what was wrong, and a
 * client without the person's consent refused with nothing started, stopped or removed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, toRecommended } from '../../src/llm/models/catalog.js';
import type { LocalModelsView, ModelDownload } from '../../src/protocol/llm.js';
import { FakeModelServer, fakeGguf, sha256Of } from '../support/fake-model-server.js';
import { type NaviHandle, startNavi } from '../support/navi.js';

let navi: NaviHandle;
let files: FakeModelServer;
let models: string;
/** The consent cookie of a paired client: downloading and removing models are the person's decisions. */
let cookie: string;

beforeAll(async () => {
  navi = await startNavi();
  files = await new FakeModelServer().start();
  models = navi.services.settings.NAVI_MODELS_DIR;
  cookie = await navi.pair();
});
afterAll(async () => {
  await navi.close();
  await files.close();
});

/** `consent` is the Cookie header sent: the paired client's by default, none with ''. */
function send(method: string, path: string, body?: unknown, consent = cookie): Promise<Response> {
  return fetch(`${navi.url}${path}`, {
    method,
    headers: {
      ...(consent ? { cookie: consent } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** A client that is not paired, and one whose cookie no pairing made. */
const UNPAIRED = ['', 'navi_consent=forged-secret'];

async function refused(res: Response, status: number, code: string, words: string): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const parsed = JSON.parse(text) as { code: string; error: string };
  expect(parsed.code).toBe(code);
  expect(parsed.error).toContain(words);
}

async function local(): Promise<LocalModelsView> {
  const res = await send('GET', '/llm/local');
  expect(res.status).toBe(200);
  return (await res.json()) as LocalModelsView;
}

async function ended(id: string): Promise<ModelDownload> {
  for (;;) {
    const res = await send('GET', `/llm/downloads/${id}`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as ModelDownload;
    if (view.state !== 'running') return view;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /llm/local', () => {
  it('offers the recommended models and the runtime, and nothing installed at first', async () => {
    const view = await local();
    expect(view.recommended).toEqual(CATALOG.map(toRecommended));
    expect(view.installed).toEqual([]);
    expect(view.runtime).toMatchObject({ installed: expect.any(Boolean), installing: expect.any(Boolean) });
  });
});

describe('POST /llm/downloads', () => {
  it('downloads a model (202), reports progress to done, and lists it installed', async () => {
    const body = fakeGguf(500_000);
    files.files.set('/good.gguf', { body, etag: sha256Of(body) });
    const res = await send('POST', '/llm/downloads', {
      source: `${files.url}/good.gguf`,
      sha256: sha256Of(body),
    });
    expect(res.status).toBe(202);
    const started = (await res.json()) as ModelDownload;
    expect(started).toMatchObject({ file_name: 'good.gguf', state: 'running' });
    const done = await ended(started.id);
    expect(done).toMatchObject({ state: 'done', bytes: body.length, total_bytes: body.length });
    const view = await local();
    expect(view.installed).toEqual([{ name: 'good.gguf', size_bytes: body.length }]);
    expect(view.downloads.map((d) => d.id)).toContain(started.id);
  });

  it('reports a failed download with its reason', async () => {
    const body = fakeGguf(10_000);
    files.files.set('/wrong.gguf', { body });
    const res = await send('POST', '/llm/downloads', {
      source: `${files.url}/wrong.gguf`,
      sha256: 'f'.repeat(64),
    });
    expect(res.status).toBe(202);
    const failed = await ended(((await res.json()) as ModelDownload).id);
    expect(failed.state).toBe('failed');
    expect(failed.error).toContain(`but ${'f'.repeat(64)} was expected`);
    expect(existsSync(join(models, 'wrong.gguf'))).toBe(false);
  });

  it('refuses a second download of the same file (409), and cancels the first (200)', async () => {
    files.files.set('/slow.gguf', { body: fakeGguf(200_000), stallAfter: 1000 });
    const first = await send('POST', '/llm/downloads', { source: `${files.url}/slow.gguf` });
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as ModelDownload;
    await refused(
      await send('POST', '/llm/downloads', { source: `${files.url}/slow.gguf` }),
      409,
      'DOWNLOAD_ACTIVE',
      'is being downloaded already',
    );
    await refused(
      await send('DELETE', '/llm/local/slow.gguf'),
      409,
      'DOWNLOAD_ACTIVE',
      'cancel the download first',
    );
    const cancel = await send('DELETE', `/llm/downloads/${id}`);
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as ModelDownload).state).toBe('cancelled');
    expect(((await (await send('GET', `/llm/downloads/${id}`)).json()) as ModelDownload).state).toBe(
      'cancelled',
    );
  });

  it.each([
    ['no source', {}, "must have required property 'source'"],
    ['a source that is a number', { source: 5 }, 'body/source must be string'],
    ['an empty source', { source: '' }, 'must NOT have fewer than 1 characters'],
    [
      'a huge source',
      { source: `https://example.org/${'a'.repeat(3000)}.gguf` },
      'must NOT have more than 2048',
    ],
    ['a short checksum', { source: 'qwen3-4b', sha256: 'abc' }, 'body/sha256 must match pattern'],
    [
      'an unknown field',
      { source: 'qwen3-4b', force: true },
      'must NOT have additional properties ("force")',
    ],
    ['a body that is a list', [{ source: 'qwen3-4b' }], 'body must be object'],
    ['a path', { source: '../../etc/passwd' }, 'is not a recommended model'],
    ['an hf: source climbing out', { source: 'hf:a/b/../x.gguf' }, 'has a part Navi does not accept'],
    ['a URL to an executable', { source: 'https://example.org/x.exe' }, 'does not end in .gguf'],
    ['plain http elsewhere', { source: 'http://example.org/x.gguf' }, 'give an https:// URL'],
  ])('refuses %s with 400', async (_what, body, words) => {
    await refused(await send('POST', '/llm/downloads', body), 400, 'BAD_REQUEST', words);
  });

  it('refuses broken JSON with 400 INVALID_JSON', async () => {
    await refused(await send('POST', '/llm/downloads', '{"source": '), 400, 'INVALID_JSON', 'not valid JSON');
  });
});

describe('GET and DELETE /llm/downloads/:id', () => {
  it('answer 404 for an unknown id, and 400 for an absurd one', async () => {
    await refused(await send('GET', '/llm/downloads/nope'), 404, 'DOWNLOAD_NOT_FOUND', 'no model download');
    await refused(
      await send('DELETE', '/llm/downloads/nope'),
      404,
      'DOWNLOAD_NOT_FOUND',
      'no model download',
    );
    await refused(
      await send('GET', `/llm/downloads/${'x'.repeat(65)}`),
      400,
      'BAD_REQUEST',
      'must NOT have more than 64',
    );
  });
});

describe('DELETE /llm/local/:name', () => {
  it('removes a downloaded model (204), then answers 404', async () => {
    mkdirSync(models, { recursive: true });
    writeFileSync(join(models, 'gone.gguf'), fakeGguf(100));
    const res = await send('DELETE', '/llm/local/gone.gguf');
    expect(res.status).toBe(204);
    expect(existsSync(join(models, 'gone.gguf'))).toBe(false);
    await refused(
      await send('DELETE', '/llm/local/gone.gguf'),
      404,
      'MODEL_NOT_FOUND',
      'there is no model "gone.gguf"',
    );
  });

  it.each([
    ['a name climbing out', '..%2Fnavi.db', 'not a plain file name'],
    ['a name with a folder', 'a%2Fb.gguf', 'not a plain file name'],
    ['an executable', 'x.exe', 'does not end in .gguf'],
  ])('refuses %s with 400', async (_what, name, words) => {
    await refused(await send('DELETE', `/llm/local/${name}`), 400, 'INVALID_FILE_NAME', words);
    expect(existsSync(join(navi.dir, 'navi.db'))).toBe(true);
  });
});

describe("a client without the person's consent", () => {
  it('may not start a download (403 CONSENT_REQUIRED): nothing is fetched or written', async () => {
    const body = fakeGguf(10_000);
    files.files.set('/unasked.gguf', { body });
    const before = (await local()).downloads.length;
    for (const consent of UNPAIRED) {
      await refused(
        await send('POST', '/llm/downloads', { source: `${files.url}/unasked.gguf` }, consent),
        403,
        'CONSENT_REQUIRED',
        'navi pair',
      );
      // Refused before the body is read: a broken one gets the same answer.
      await refused(
        await send('POST', '/llm/downloads', '{"source": ', consent),
        403,
        'CONSENT_REQUIRED',
        'navi pair',
      );
    }
    expect((await local()).downloads).toHaveLength(before);
    expect(files.requests.filter((r) => r.path === '/unasked.gguf')).toEqual([]);
    expect(existsSync(join(models, 'unasked.gguf'))).toBe(false);
  });

  it('may not cancel a download (403 CONSENT_REQUIRED): it keeps running', async () => {
    files.files.set('/kept.gguf', { body: fakeGguf(200_000), stallAfter: 1000 });
    const started = await send('POST', '/llm/downloads', { source: `${files.url}/kept.gguf` });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as ModelDownload;
    for (const consent of UNPAIRED) {
      await refused(
        await send('DELETE', `/llm/downloads/${id}`, undefined, consent),
        403,
        'CONSENT_REQUIRED',
        'navi pair',
      );
    }
    const res = await send('GET', `/llm/downloads/${id}`, undefined, '');
    expect(((await res.json()) as ModelDownload).state).toBe('running');
    expect((await send('DELETE', `/llm/downloads/${id}`)).status).toBe(200);
  });

  it('may not remove a model (403 CONSENT_REQUIRED): the file stays', async () => {
    mkdirSync(models, { recursive: true });
    const body = fakeGguf(100);
    writeFileSync(join(models, 'kept.gguf'), body);
    for (const consent of UNPAIRED) {
      await refused(
        await send('DELETE', '/llm/local/kept.gguf', undefined, consent),
        403,
        'CONSENT_REQUIRED',
        'navi pair',
      );
    }
    expect(readFileSync(join(models, 'kept.gguf'))).toEqual(body);
    expect((await local()).installed.map((m) => m.name)).toContain('kept.gguf');
  });
});
