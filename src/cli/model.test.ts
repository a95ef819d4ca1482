/**
 * `navi model` with captured output, against a real local HTTP server standing in for Hugging
 * Face: pull (progress, checksums, resume, refusals), list and rm, and their exit codes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeModelServer, fakeGguf, sha256Of } from '../../test/support/fake-model-server.js';
import { testSettings } from '../config/settings.js';
import { CATALOG } from '../llm/models/catalog.js';
import { ModelDownloader } from '../llm/models/downloader.js';
import { SourceResolver } from '../llm/models/source.js';
import type { CliIo } from './cli-io.js';
import { runModel } from './model.js';

let server: FakeModelServer;
let root: string;
let dir: string;

function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

async function navi(args: string[], signal?: AbortSignal) {
  const stdout = sink();
  const stderr = sink();
  const io: CliIo = { stdout, stderr, ...(signal ? { signal } : {}) };
  const code = await runModel(testSettings({ NAVI_MODELS_DIR: dir }), args, io, {
    resolver: new SourceResolver({ hfBaseUrl: server.url }),
    downloader: new ModelDownloader({ retryDelayMs: 0 }),
  });
  return { code, out: stdout.text(), err: stderr.text() };
}

beforeEach(async () => {
  server = await new FakeModelServer().start();
  root = mkdtempSync(join(tmpdir(), 'navi-cli-model-'));
  dir = join(root, 'models');
});
afterEach(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

describe('navi model pull', () => {
  it('downloads a URL with plain progress lines when not on a terminal', async () => {
    const body = fakeGguf(2_000_000);
    server.files.set('/files/m.gguf', { body, etag: sha256Of(body) });
    const { code, out, err } = await navi(['pull', `${server.url}/files/m.gguf`]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('100%  2.0 MB of 2.0 MB');
    expect(out).not.toContain('\r');
    expect(out).toContain(`Saved ${join(dir, 'm.gguf')}`);
    expect(out).toContain(`Its SHA-256 ${sha256Of(body)} matches the one the server gave`);
    expect(out).toContain('LLAMACPP_MODEL_PATH=m.gguf');
    expect(readFileSync(join(dir, 'm.gguf')).equals(body)).toBe(true);

    const again = await navi(['pull', `${server.url}/files/m.gguf`]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('is in');
    expect(again.out).toContain('nothing to do');
  });

  it("refuses an alias whose file on the server is not the catalog's, before downloading", async () => {
    const model = CATALOG[0]!;
    const body = fakeGguf(10_000);
    const path = `/${model.source.slice(3).split('/').slice(0, 2).join('/')}/resolve/main/${model.fileName}`;
    server.files.set(path, { body, etag: sha256Of(body) });
    const { code, err } = await navi(['pull', model.alias]);
    expect(code).toBe(1);
    expect(err).toContain(`but ${model.sha256} was expected`);
    expect(err).toContain('--sha256');
    expect(existsSync(join(dir, model.fileName))).toBe(false);

    const trusted = await navi(['pull', model.alias, `--sha256=${sha256Of(body)}`]);
    expect(trusted.code).toBe(0);
    expect(trusted.out).toContain('matches the one expected');
    expect(existsSync(join(dir, model.fileName))).toBe(true);
  });

  it('stops when told, keeps the partial, and the next pull resumes it', async () => {
    const body = fakeGguf(300_000);
    server.files.set('/slow.gguf', { body, stallAfter: 120_000 });
    const controller = new AbortController();
    const pending = navi(['pull', `${server.url}/slow.gguf`], controller.signal);
    const partial = join(dir, 'slow.gguf.partial');
    while (!existsSync(partial) || statSync(partial).size < 120_000)
      await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const stopped = await pending;
    expect(stopped.code).toBe(1);
    expect(stopped.err).toContain('pulling the same model again resumes it');

    server.files.set('/slow.gguf', { body });
    const resumed = await navi(['pull', `${server.url}/slow.gguf`, '--sha256', sha256Of(body)]);
    expect(resumed.code).toBe(0);
    expect(server.rangeRequests('/slow.gguf')).toHaveLength(1);
    expect(readFileSync(join(dir, 'slow.gguf')).equals(body)).toBe(true);
  });

  it('fails with 1 and the reason when the download fails', async () => {
    const { code, err } = await navi(['pull', `${server.url}/none.gguf`]);
    expect(code).toBe(1);
    expect(err).toContain('there is no file at');
  });

  it.each([
    ['no model', ['pull'], 'name the model to pull'],
    ['two models', ['pull', 'a.gguf', 'b.gguf'], 'takes one model'],
    ['an unknown option', ['pull', 'qwen3-4b', '--force'], 'unknown option "--force"'],
    ['--sha256 without a value', ['pull', 'qwen3-4b', '--sha256'], 'needs the checksum'],
    ['a bad checksum', ['pull', 'qwen3-4b', '--sha256', 'xyz'], 'is not a SHA-256'],
    ['a path', ['pull', '../x.gguf'], 'is not a recommended model'],
    ['an http URL elsewhere', ['pull', 'http://example.org/x.gguf'], 'give an https:// URL'],
    ['an executable', ['pull', 'https://example.org/x.exe'], 'does not end in .gguf'],
  ])('refuses %s with exit code 2', async (_what, args, words) => {
    const { code, err } = await navi(args);
    expect(code).toBe(2);
    expect(err).toContain(words);
    expect(server.requests).toEqual([]);
  });
});

describe('navi model list, rm, help', () => {
  it('lists downloaded models, stopped downloads and the recommended ones', async () => {
    mkdirSync(dir, { recursive: true });
    const known = CATALOG[0]!;
    writeFileSync(join(dir, known.fileName), fakeGguf(3_000_000));
    writeFileSync(join(dir, 'other.gguf.partial'), fakeGguf(1_500_000));
    const { code, out } = await navi(['list']);
    expect(code).toBe(0);
    expect(out).toContain(`Models in ${dir}:`);
    expect(out).toContain(`${known.fileName}  3.0 MB  (${known.alias})`);
    expect(out).toContain('other.gguf  1.5 MB so far');
    for (const model of CATALOG) {
      expect(out).toContain(model.alias);
      expect(out).toContain(model.goodAt[0]);
    }
    expect(out).toContain('[downloaded]');
  });

  it('says how to get a first model when there is none', async () => {
    const { out } = await navi(['list']);
    expect(out).toContain(`navi model pull ${CATALOG[0]!.alias}`);
  });

  it('removes a model, and refuses a missing (1) or hostile (2) name', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'm.gguf'), fakeGguf(10));
    expect(await navi(['rm', 'm.gguf'])).toMatchObject({ code: 0, out: `Removed m.gguf from ${dir}.\n` });
    const missing = await navi(['rm', 'm.gguf']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('there is no model "m.gguf"');
    writeFileSync(join(root, 'x.gguf'), 'keep');
    const hostile = await navi(['rm', '../x.gguf']);
    expect(hostile.code).toBe(2);
    expect(hostile.err).toContain('not a plain file name');
    expect(existsSync(join(root, 'x.gguf'))).toBe(true);
    expect((await navi(['rm'])).code).toBe(2);
  });

  it('prints help (0), and usage for no or an unknown command (2)', async () => {
    const help = await navi(['help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: navi model');
    expect(help.out).toContain(dir);
    const none = await navi([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('Usage: navi model');
    const unknown = await navi(['fetch']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "fetch"');
  });
});
