/**
 * The server's download registry against a real local HTTP server: one download per file, at
 * most `maxRunning` fetching, cancelling a running or waiting one, forgetting old ones.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeModelServer, fakeGguf, sha256Of } from '../../../test/support/fake-model-server.js';
import type { ModelDownload } from '../../protocol/llm.js';
import { ModelDownloader } from './downloader.js';
import { ModelDownloads } from './downloads.js';
import { SourceResolver } from './source.js';

let server: FakeModelServer;
let dir: string;
let downloads: ModelDownloads;
let now = 0;

function registry(maxRunning = 2): ModelDownloads {
  return new ModelDownloads({
    dir,
    resolver: new SourceResolver({ hfBaseUrl: server.url }),
    downloader: new ModelDownloader({ retryDelayMs: 0 }),
    maxRunning,
    keepFinishedMs: 60_000,
    now: () => now,
  });
}

/** Polls until the download has ended (the registry has no event to wait on). */
async function ended(id: string): Promise<ModelDownload> {
  for (;;) {
    const view = downloads.get(id);
    if (!view) throw new Error(`download ${id} is gone`);
    if (view.state !== 'running') return view;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(async () => {
  server = await new FakeModelServer().start();
  dir = mkdtempSync(join(tmpdir(), 'navi-downloads-'));
  now = 0;
  downloads = registry();
});
afterEach(async () => {
  await downloads.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ModelDownloads', () => {
  it('downloads an hf: source and reports it done with its size', async () => {
    const body = fakeGguf(80_000);
    server.files.set('/org/repo/resolve/main/a.gguf', { body, etag: sha256Of(body) });
    const started = downloads.start({ source: 'hf:org/repo/a.gguf' });
    expect(started).toMatchObject({ source: 'hf:org/repo/a.gguf', file_name: 'a.gguf', state: 'running' });
    const done = await ended(started.id);
    expect(done).toMatchObject({ state: 'done', bytes: body.length, total_bytes: body.length });
    expect(existsSync(join(dir, 'a.gguf'))).toBe(true);
  });

  it('refuses a second download of the same file while the first runs', async () => {
    server.files.set('/s.gguf', { body: fakeGguf(100_000), stallAfter: 1000 });
    const first = downloads.start({ source: `${server.url}/s.gguf` });
    expect(() => downloads.start({ source: `${server.url}/s.gguf` })).toThrow(/being downloaded already/);
    expect(downloads.isDownloading('s.gguf')).toBe(true);
    const cancelled = await downloads.cancel(first.id);
    expect(cancelled?.state).toBe('cancelled');
    expect(downloads.isDownloading('s.gguf')).toBe(false);
  });

  it('runs at most two at once; a third waits its turn and can be cancelled while waiting', async () => {
    for (const name of ['a', 'b', 'c'])
      server.files.set(`/${name}.gguf`, { body: fakeGguf(50_000), stallAfter: 100 });
    const a = downloads.start({ source: `${server.url}/a.gguf` });
    const b = downloads.start({ source: `${server.url}/b.gguf` });
    const c = downloads.start({ source: `${server.url}/c.gguf` });
    while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.requests.map((r) => r.path).sort()).toEqual(['/a.gguf', '/b.gguf']);
    expect(downloads.get(c.id)).toMatchObject({ state: 'running', bytes: 0 });
    expect((await downloads.cancel(c.id))?.state).toBe('cancelled');
    expect((await downloads.cancel(a.id))?.state).toBe('cancelled');
    expect((await downloads.cancel(b.id))?.state).toBe('cancelled');
    expect(server.requests.map((r) => r.path)).not.toContain('/c.gguf');
  });

  it('answers a model already in the folder as done at once', () => {
    writeFileSync(join(dir, 'have.gguf'), fakeGguf(1234));
    const view = downloads.start({ source: `${server.url}/have.gguf` });
    expect(view).toMatchObject({ state: 'done', bytes: 1234, total_bytes: 1234 });
    expect(server.requests).toEqual([]);
  });

  it('keeps a failed download with its reason, then forgets it after a while', async () => {
    const failed = await ended(downloads.start({ source: `${server.url}/missing.gguf` }).id);
    expect(failed.state).toBe('failed');
    expect(failed.error).toContain('there is no file at');
    expect(downloads.list().map((d) => d.id)).toContain(failed.id);
    now += 60_001;
    expect(downloads.get(failed.id)).toBeUndefined();
    expect(downloads.list()).toEqual([]);
  });

  it('refuses bad sources with the reason, and anything once closed', async () => {
    expect(() => downloads.start({ source: '../x.gguf' })).toThrow(/not a recommended model/);
    expect(() => downloads.start({ source: 'hf:a/b/x.gguf', sha256: 'nope' })).toThrow(/not a SHA-256/);
    await downloads.close();
    expect(() => downloads.start({ source: 'hf:a/b/x.gguf' })).toThrow(/shutting down/);
  });

  it('closing cancels what runs and keeps its partial', async () => {
    server.files.set('/long.gguf', { body: fakeGguf(100_000), stallAfter: 5000 });
    const started = downloads.start({ source: `${server.url}/long.gguf` });
    while ((downloads.get(started.id)?.bytes ?? 0) < 5000)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await downloads.close();
    expect(downloads.get(started.id)?.state).toBe('cancelled');
    expect(existsSync(join(dir, 'long.gguf.partial'))).toBe(true);
  });
});
