import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeNpmEnv, writeFakeNpm } from '../../../test/support/fake-npm.js';
import { RuntimeInstallError } from './install.js';
import { LlamacppRuntime, RuntimeBusyError, RuntimeMissingError } from './runtime.js';

let root: string;
let bin: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-runtime-'));
  bin = writeFakeNpm(root);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const fresh = () => join(mkdtempSync(join(root, 'p-')), 'runtime');

/** A package folder as npm would leave it, with `index` as its entry module. */
function fakePackage(dir: string, index: string): void {
  const pkg = join(dir, 'node_modules', 'node-llama-cpp');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: 'node-llama-cpp',
      version: '9.9.9',
      type: 'module',
      exports: { '.': { import: './dist/index.js' } },
    }),
  );
  writeFileSync(join(pkg, 'dist', 'index.js'), index);
}

describe('LlamacppRuntime', () => {
  it('reports a missing runtime, and loading it says how to install it', async () => {
    const runtime = new LlamacppRuntime(fresh());
    expect(runtime.status()).toEqual({
      installed: false,
      version: null,
      installing: false,
      log: [],
      error: null,
    });
    const error = await runtime.load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeMissingError);
    expect((error as Error).message).toMatch(
      /not installed in .*LLAMACPP_RUNTIME_DIR.*navi llamacpp install/,
    );
  });

  it('an install shows in the status while it runs, refuses a second one, and its failure stays readable', async () => {
    const dir = fresh();
    const go = join(root, 'go-fail');
    const runtime = new LlamacppRuntime(dir);
    const lines: string[] = [];
    const running = runtime
      .install({ env: fakeNpmEnv(bin, 'wait', { FAKE_NPM_GO: go }), onLine: (l) => lines.push(l) })
      .catch((e: unknown) => e);
    expect(runtime.status().installing).toBe(true);
    await expect(runtime.install({ env: fakeNpmEnv(bin, 'ok') })).rejects.toBeInstanceOf(RuntimeBusyError);
    writeFileSync(go, '');
    expect(await running).toBeInstanceOf(RuntimeInstallError);
    const status = runtime.status();
    expect(status).toMatchObject({ installed: false, installing: false });
    expect(status.error).toContain('No matching version found');
    expect(status.log).toContain('npm error code ETARGET');
    expect(lines).toEqual(status.log);
    expect(existsSync(dir)).toBe(false);
  });

  it('after an install the runtime is found, and the failed load before it is not remembered', async () => {
    const runtime = new LlamacppRuntime(fresh());
    await expect(runtime.load()).rejects.toBeInstanceOf(RuntimeMissingError);
    await runtime.install({ env: fakeNpmEnv(bin, 'ok') });
    expect(runtime.status()).toMatchObject({
      installed: true,
      version: '3.22.1',
      installing: false,
      error: null,
    });
    const mod = await runtime.load();
    expect(typeof mod.getLlama).toBe('function');
    // The stand-in package cannot make a Llama; the error comes through as it is.
    await expect(runtime.llama('off')).rejects.toThrow('fake runtime');
    await runtime.close();
  });

  it('a package that cannot be imported, or lacks what Navi uses, is reported as such', async () => {
    const broken = fresh();
    fakePackage(broken, 'export const = ;');
    await expect(new LlamacppRuntime(broken).load()).rejects.toThrow(
      /could not be loaded .*Reinstall it with npx navi llamacpp install/s,
    );
    const other = fresh();
    fakePackage(other, 'export const something = 1;');
    await expect(new LlamacppRuntime(other).load()).rejects.toThrow(
      /node-llama-cpp 9\.9\.9 .* not a version Navi can use/,
    );
  });

  it('startInstall runs in the background and reports through status', async () => {
    const runtime = new LlamacppRuntime(fresh());
    const started = runtime.startInstall({ env: fakeNpmEnv(bin, 'ok') });
    expect(started.installing).toBe(true);
    await runtime.close();
    expect(runtime.status().installing).toBe(false);
  });
});
