/**
 * The downloader against a real local HTTP server: progress, resume after a cut connection,
 * checksums (given, from the server, wrong), the GGUF check, stop and resume, and the answers
 * a server may give (416, 200 to a range, 404, 403, a full disk).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeModelServer, fakeGguf, sha256Of } from '../../../test/support/fake-model-server.js';
import { DownloadError, type DownloadProgress, ModelDownloader, sha256FromEtag } from './downloader.js';

let server: FakeModelServer;
let dir: string;
const fast = new ModelDownloader({ retryDelayMs: 0, idleTimeoutMs: 2000, connectTimeoutMs: 5000 });

beforeEach(async () => {
  server = await new FakeModelServer().start();
  dir = mkdtempSync(join(tmpdir(), 'navi-models-'));
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DownloadError);
  return err as DownloadError;
}

describe('ModelDownloader', () => {
  it('downloads a file, reports progress up to its size and installs it under its name', async () => {
    const body = fakeGguf(300_000);
    server.files.set('/m.gguf', { body });
    const seen: DownloadProgress[] = [];
    const result = await fast.download({
      url: `${server.url}/m.gguf`,
      fileName: 'm.gguf',
      dir,
      sha256: sha256Of(body),
      onProgress: (p) => seen.push(p),
    });
    expect(result).toMatchObject({ bytes: body.length, sha256: sha256Of(body), verifiedWith: 'given' });
    expect(readFileSync(join(dir, 'm.gguf')).equals(body)).toBe(true);
    expect(existsSync(join(dir, 'm.gguf.partial'))).toBe(false);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toEqual({ bytes: body.length, total: body.length });
    const bytes = seen.map((p) => p.bytes);
    expect([...bytes].sort((a, b) => a - b)).toEqual(bytes);
  });

  it('resumes with Range after the server cuts the connection, ending byte-identical', async () => {
    const body = fakeGguf(1_000_000);
    server.files.set('/cut.gguf', { body, cuts: 2 });
    const retries: string[] = [];
    const result = await fast.download({
      url: `${server.url}/cut.gguf`,
      fileName: 'cut.gguf',
      dir,
      sha256: sha256Of(body),
      onRetry: (problem) => retries.push(problem),
    });
    expect(result.bytes).toBe(body.length);
    expect(readFileSync(join(dir, 'cut.gguf')).equals(body)).toBe(true);
    expect(retries).toHaveLength(2);
    const ranges = server.rangeRequests('/cut.gguf');
    expect(ranges).toHaveLength(2);
    for (const r of ranges) expect(r.range).toMatch(/^bytes=[1-9]\d*-$/);
  });

  it('gives up after its retries, keeping the partial, and a later call resumes it', async () => {
    const body = fakeGguf(400_000);
    server.files.set('/flaky.gguf', { body, cuts: 3 });
    const once = new ModelDownloader({ retries: 1, retryDelayMs: 0 });
    const err = await failure(
      once.download({ url: `${server.url}/flaky.gguf`, fileName: 'flaky.gguf', dir }),
    );
    expect(err.message).toContain('failed after 2 tries');
    expect(err.message).toContain('pull the same model again to resume');
    expect(existsSync(join(dir, 'flaky.gguf.partial'))).toBe(true);
    expect(existsSync(join(dir, 'flaky.gguf'))).toBe(false);

    const result = await fast.download({
      url: `${server.url}/flaky.gguf`,
      fileName: 'flaky.gguf',
      dir,
      sha256: sha256Of(body),
    });
    expect(result.sha256).toBe(sha256Of(body));
    expect(readFileSync(join(dir, 'flaky.gguf')).equals(body)).toBe(true);
  });

  it('refuses a file whose checksum is wrong, says expected and got, and leaves no file', async () => {
    const body = fakeGguf(50_000);
    server.files.set('/bad.gguf', { body });
    const wrong = 'a'.repeat(64);
    const err = await failure(
      fast.download({ url: `${server.url}/bad.gguf`, fileName: 'bad.gguf', dir, sha256: wrong }),
    );
    expect(err.message).toContain(`SHA-256 is ${sha256Of(body)}`);
    expect(err.message).toContain(`but ${wrong} was expected`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("uses the server's x-linked-etag, met on a redirect, when no checksum is given", async () => {
    const body = fakeGguf(60_000);
    server.redirects.set('/org/repo/resolve/main/m.gguf', { to: '/cdn/m.gguf', etag: sha256Of(body) });
    server.files.set('/cdn/m.gguf', { body });
    const result = await fast.download({
      url: `${server.url}/org/repo/resolve/main/m.gguf`,
      fileName: 'm.gguf',
      dir,
    });
    expect(result.verifiedWith).toBe('server');
    expect(readFileSync(join(dir, 'm.gguf')).equals(body)).toBe(true);
  });

  it("refuses before downloading when the server's checksum is not the expected one", async () => {
    const body = fakeGguf(60_000);
    server.files.set('/changed.gguf', { body, etag: sha256Of(body) });
    const expected = 'b'.repeat(64);
    const err = await failure(
      fast.download({ url: `${server.url}/changed.gguf`, fileName: 'changed.gguf', dir, sha256: expected }),
    );
    expect(err.message).toContain(`has SHA-256 ${sha256Of(body)}, but ${expected} was expected`);
    expect(err.message).toContain('Nothing was downloaded');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('detects a server etag that disagrees with the bytes it sent', async () => {
    const body = fakeGguf(20_000);
    server.files.set('/liar.gguf', { body, etag: 'c'.repeat(64) });
    const err = await failure(fast.download({ url: `${server.url}/liar.gguf`, fileName: 'liar.gguf', dir }));
    expect(err.message).toContain(`but ${'c'.repeat(64)} was expected`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses what is not a GGUF file (an HTML page) before writing it', async () => {
    server.files.set('/page.gguf', { body: Buffer.from('<!DOCTYPE html><html>login</html>') });
    const err = await failure(fast.download({ url: `${server.url}/page.gguf`, fileName: 'page.gguf', dir }));
    expect(err.message).toContain('is not a GGUF model file');
    expect(err.message).toContain('<!DOCTYPE');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stopped by its signal, keeps the partial; the next download resumes from it', async () => {
    const body = fakeGguf(500_000);
    server.files.set('/slow.gguf', { body, stallAfter: 100_000 });
    const controller = new AbortController();
    const pending = fast.download({
      url: `${server.url}/slow.gguf`,
      fileName: 'slow.gguf',
      dir,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.bytes >= 100_000) controller.abort();
      },
    });
    const err = await failure(pending);
    expect(err.cancelled).toBe(true);
    expect(err.message).toContain('pulling the same model again resumes it');
    expect(readFileSync(join(dir, 'slow.gguf.partial')).length).toBe(100_000);

    server.files.set('/slow.gguf', { body });
    const result = await fast.download({
      url: `${server.url}/slow.gguf`,
      fileName: 'slow.gguf',
      dir,
      sha256: sha256Of(body),
    });
    expect(result.bytes).toBe(body.length);
    expect(server.rangeRequests('/slow.gguf').map((r) => r.range)).toEqual(['bytes=100000-']);
    expect(readFileSync(join(dir, 'slow.gguf')).equals(body)).toBe(true);
  });

  it('treats 416 to a resume as complete and verifies the partial', async () => {
    const body = fakeGguf(30_000);
    writeFileSync(join(dir, 'whole.gguf.partial'), body);
    server.files.set('/whole.gguf', { body });
    const result = await fast.download({
      url: `${server.url}/whole.gguf`,
      fileName: 'whole.gguf',
      dir,
      sha256: sha256Of(body),
    });
    expect(result.sha256).toBe(sha256Of(body));
    expect(server.requests.map((r) => r.range)).toEqual([`bytes=${body.length}-`]);
    expect(readFileSync(join(dir, 'whole.gguf')).equals(body)).toBe(true);
  });

  it('starts over when the server answers a resume with the whole file (200)', async () => {
    const body = fakeGguf(40_000);
    writeFileSync(join(dir, 'norange.gguf.partial'), Buffer.from('GGUF-stale-bytes-from-another-file'));
    server.files.set('/norange.gguf', { body, ignoreRange: true });
    const result = await fast.download({
      url: `${server.url}/norange.gguf`,
      fileName: 'norange.gguf',
      dir,
      sha256: sha256Of(body),
    });
    expect(result.bytes).toBe(body.length);
    expect(readFileSync(join(dir, 'norange.gguf')).equals(body)).toBe(true);
  });

  it('retries a stalled body after its idle time and finishes from where it stopped', async () => {
    const body = fakeGguf(200_000);
    server.files.set('/stall.gguf', { body, stallAfter: 50_000 });
    const patient = new ModelDownloader({ retryDelayMs: 0, idleTimeoutMs: 300, retries: 2 });
    const pending = patient.download({
      url: `${server.url}/stall.gguf`,
      fileName: 'stall.gguf',
      dir,
      sha256: sha256Of(body),
      onRetry: () => server.files.set('/stall.gguf', { body }),
    });
    const result = await pending;
    expect(result.bytes).toBe(body.length);
    expect(server.rangeRequests('/stall.gguf').map((r) => r.range)).toEqual(['bytes=50000-']);
  });

  it('says there is no such file on 404, and what to do on 403', async () => {
    const missing = await failure(
      fast.download({ url: `${server.url}/none.gguf`, fileName: 'none.gguf', dir }),
    );
    expect(missing.message).toContain('there is no file at');
    server.files.set('/gated.gguf', { body: Buffer.alloc(0), status: 403 });
    const gated = await failure(
      fast.download({ url: `${server.url}/gated.gguf`, fileName: 'gated.gguf', dir }),
    );
    expect(gated.message).toContain('refused the download (403)');
    expect(gated.message).toContain(dir);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a file larger than the free disk space before fetching its body', async () => {
    const body = fakeGguf(100_000);
    server.files.set('/big.gguf', { body });
    const full = new ModelDownloader({ freeBytes: async () => 10_000 });
    const err = await failure(full.download({ url: `${server.url}/big.gguf`, fileName: 'big.gguf', dir }));
    expect(err.message).toContain('has only 0.0 MB free');
    expect(err.message).toContain('NAVI_MODELS_DIR');
    expect(existsSync(join(dir, 'big.gguf'))).toBe(false);
  });

  it('leaves a model already in the folder alone', async () => {
    writeFileSync(join(dir, 'have.gguf'), fakeGguf(1000));
    const result = await fast.download({ url: `${server.url}/have.gguf`, fileName: 'have.gguf', dir });
    expect(result).toMatchObject({ alreadyPresent: true, bytes: 1000 });
    expect(server.requests).toEqual([]);
  });
});

describe('sha256FromEtag', () => {
  it('reads a quoted or weak SHA-256 and ignores anything else', () => {
    const sum = 'AB'.repeat(32);
    expect(sha256FromEtag(`"${sum}"`)).toBe(sum.toLowerCase());
    expect(sha256FromEtag(`W/"${sum}"`)).toBe(sum.toLowerCase());
    expect(sha256FromEtag('"5b08bf3a3c60bea552dc2be230bf99455a856ea7"')).toBeUndefined();
    expect(sha256FromEtag(null)).toBeUndefined();
  });
});
