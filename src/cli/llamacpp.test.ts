/**
 * `navi llamacpp` with captured output, installing with a stand-in npm on PATH (a real
 * subprocess): install, status and help, their exit codes, and a failed install changing nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeNpmEnv, writeFakeNpm } from '../../test/support/fake-npm.js';
import { testSettings } from '../config/settings.js';
import { runLlamacpp } from './llamacpp.js';

let root: string;
let bin: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-cli-llamacpp-'));
  bin = writeFakeNpm(root);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

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

async function navi(args: string[], options: { runtime: string; models?: string; env?: NodeJS.ProcessEnv }) {
  const stdout = sink();
  const stderr = sink();
  const settings = testSettings({
    LLAMACPP_RUNTIME_DIR: options.runtime,
    NAVI_MODELS_DIR: options.models ?? join(root, 'no-models'),
  });
  const code = await runLlamacpp(settings, args, { stdout, stderr }, options.env ? { env: options.env } : {});
  return { code, out: stdout.text(), err: stderr.text() };
}

const fresh = () => join(mkdtempSync(join(root, 'p-')), 'runtime');

describe('navi llamacpp', () => {
  it('help prints the usage with the runtime folder; no command prints it to stderr with exit 2', async () => {
    const runtime = fresh();
    const help = await navi(['help'], { runtime });
    expect(help.code).toBe(0);
    expect(help.out).toContain('install [--gpu]');
    expect(help.out).toContain(runtime);
    const none = await navi([], { runtime });
    expect(none.code).toBe(2);
    expect(none.err).toContain('Usage: navi llamacpp');
  });

  it('refuses unknown commands and options with exit 2, saying what to do', async () => {
    const runtime = fresh();
    expect(await navi(['frobnicate'], { runtime })).toMatchObject({
      code: 2,
      err: expect.stringContaining('navi llamacpp help'),
    });
    expect(await navi(['install', '--cuda'], { runtime })).toMatchObject({
      code: 2,
      err: expect.stringContaining('only --gpu'),
    });
    expect(await navi(['status', 'now'], { runtime })).toMatchObject({
      code: 2,
      err: expect.stringContaining('no arguments'),
    });
  });

  it('status without a runtime says how to install it, with exit 1', async () => {
    const result = await navi(['status'], { runtime: fresh() });
    expect(result.code).toBe(1);
    expect(result.out).toContain('not installed');
    expect(result.out).toContain('navi llamacpp install');
    expect(result.out).toContain('navi model pull');
  });

  it('install streams npm lines and says where it installed; status then reports the version and the model', async () => {
    const runtime = fresh();
    const log = join(root, 'npm-args.log');
    const installed = await navi(['install'], { runtime, env: fakeNpmEnv(bin, 'ok', { FAKE_NPM_LOG: log }) });
    expect(installed.code).toBe(0);
    expect(installed.out).toContain('  npm http fetch GET 200');
    expect(installed.out).toContain(`Installed node-llama-cpp 3.22.1 in ${runtime}`);
    expect(readFileSync(log, 'utf8')).toContain('--omit=optional');
    const models = join(root, 'models');
    mkdirSync(models, { recursive: true });
    writeFileSync(join(models, 'a.gguf'), 'GGUF');
    const status = await navi(['status'], { runtime, models });
    expect(status.code).toBe(0);
    expect(status.out).toContain(`node-llama-cpp 3.22.1 is installed in ${runtime}`);
    expect(status.out).toContain('Model: a.gguf');
  });

  it('install --gpu asks npm for every optional binary', async () => {
    const log = join(root, 'npm-gpu.log');
    const result = await navi(['install', '--gpu'], {
      runtime: fresh(),
      env: fakeNpmEnv(bin, 'ok', { FAKE_NPM_LOG: log }),
    });
    expect(result.code).toBe(0);
    expect(result.out).toContain('every GPU binary');
    expect(readFileSync(log, 'utf8')).not.toContain('--omit=optional');
  });

  it('a failed install exits 1, says why, and leaves the runtime folder as it was', async () => {
    const runtime = fresh();
    mkdirSync(runtime, { recursive: true });
    writeFileSync(join(runtime, 'keep'), 'x');
    const result = await navi(['install'], { runtime, env: fakeNpmEnv(bin, 'fail') });
    expect(result.code).toBe(1);
    expect(result.err).toContain('No matching version found');
    expect(result.err).toContain(`Nothing was changed in ${runtime}`);
    expect(readFileSync(join(runtime, 'keep'), 'utf8')).toBe('x');
  });
});
