import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeNpmEnv, writeFakeNpm } from '../../../test/support/fake-npm.js';
import { installRuntime, npmInstallArgs, platformPackage, RuntimeInstallError } from './install.js';
import { runtimeEntry } from './runtime-files.js';

let root: string;
let bin: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-install-'));
  bin = writeFakeNpm(root);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh parent folder, so leftovers of one test cannot hide another's. */
function parent(): string {
  return mkdtempSync(join(root, 'p-'));
}

describe('npmInstallArgs and platformPackage', () => {
  it('the lean install omits optional packages and names this platform binaries; --gpu takes them all', () => {
    expect(npmInstallArgs('/x', false, '@node-llama-cpp/linux-x64')).toEqual([
      'install',
      '--prefix',
      '/x',
      '--save-exact',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--ignore-scripts',
      '--loglevel',
      'http',
      '--omit=optional',
      'node-llama-cpp@3.22.1',
      '@node-llama-cpp/linux-x64@3.22.1',
    ]);
    const gpu = npmInstallArgs('/x', true, '@node-llama-cpp/linux-x64');
    expect(gpu).not.toContain('--omit=optional');
    expect(gpu.at(-1)).toBe('node-llama-cpp@3.22.1');
  });

  it('maps platforms to their binaries package, and knows none for others', () => {
    expect(platformPackage('linux', 'x64')).toBe('@node-llama-cpp/linux-x64');
    expect(platformPackage('darwin', 'arm64')).toBe('@node-llama-cpp/mac-arm64-metal');
    expect(platformPackage('win32', 'x64')).toBe('@node-llama-cpp/win-x64');
    expect(platformPackage('freebsd', 'x64')).toBeUndefined();
  });
});

describe('installRuntime', () => {
  it('installs into the folder, streaming npm lines, and replaces an older install only at the end', async () => {
    const dir = join(parent(), 'runtime');
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    writeFileSync(join(dir, 'old-marker'), 'old');
    const lines: string[] = [];
    const log = join(root, 'npm-ok.log');
    const result = await installRuntime(dir, {
      env: fakeNpmEnv(bin, 'ok', { FAKE_NPM_LOG: log }),
      onLine: (l) => lines.push(l),
    });
    expect(result).toEqual({ dir, version: '3.22.1' });
    expect(runtimeEntry(dir)?.version).toBe('3.22.1');
    expect(existsSync(join(dir, 'old-marker'))).toBe(false);
    expect(lines).toContain('added 117 packages in 5s');
    expect(readFileSync(log, 'utf8')).toContain('--omit=optional node-llama-cpp@3.22.1');
    // Nothing left beside it: no staging folder, no old copy.
    expect(readdirSync(join(dir, '..'))).toEqual(['runtime']);
  });

  it('a failing npm leaves the old runtime as it was and nothing half-installed, and says why', async () => {
    const dir = join(parent(), 'runtime');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'old-marker'), 'old');
    const error = await installRuntime(dir, { env: fakeNpmEnv(bin, 'fail') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeInstallError);
    const { message, output } = error as RuntimeInstallError;
    expect(message).toContain('exit code 1');
    expect(message).toContain('No matching version found for node-llama-cpp@3.22.1');
    expect(message).toContain('Check the network');
    expect(output).toContain('npm error code ETARGET');
    expect(readFileSync(join(dir, 'old-marker'), 'utf8')).toBe('old');
    expect(readdirSync(join(dir, '..'))).toEqual(['runtime']);
  });

  it('a failing first install leaves no runtime folder at all', async () => {
    const dir = join(parent(), 'runtime');
    await expect(installRuntime(dir, { env: fakeNpmEnv(bin, 'fail') })).rejects.toBeInstanceOf(
      RuntimeInstallError,
    );
    expect(readdirSync(join(dir, '..'))).toEqual([]);
  });

  it('without npm on PATH it says to install Node.js with npm', async () => {
    const dir = join(parent(), 'runtime');
    const emptyBin = mkdtempSync(join(root, 'nobin-'));
    const error = await installRuntime(dir, { env: { PATH: emptyBin } }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/npm was not found on PATH; install Node\.js with npm/);
    expect(readdirSync(join(dir, '..'))).toEqual([]);
  });

  it('npm that succeeds without installing the package is a failure', async () => {
    const dir = join(parent(), 'runtime');
    const error = await installRuntime(dir, { env: fakeNpmEnv(bin, 'empty') }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/npm finished, but node-llama-cpp is not in/);
    expect(readdirSync(join(dir, '..'))).toEqual([]);
  });

  it('a cancel or a time limit stops npm and cleans up', async () => {
    const dir = join(parent(), 'runtime');
    const timedOut = await installRuntime(dir, { env: fakeNpmEnv(bin, 'hang'), timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect((timedOut as Error).message).toMatch(/did not finish within 0.3 s/);
    const controller = new AbortController();
    const cancelled = installRuntime(dir, {
      env: fakeNpmEnv(bin, 'hang'),
      signal: controller.signal,
      onLine: () => controller.abort(),
    }).catch((e: unknown) => e);
    expect(((await cancelled) as Error).message).toBe('the install was cancelled');
    expect(readdirSync(join(dir, '..'))).toEqual([]);
  });

  it('refuses a platform without prebuilt binaries unless the full install is asked for', async () => {
    const dir = join(parent(), 'runtime');
    await expect(
      installRuntime(dir, { platform: 'freebsd', arch: 'x64', env: fakeNpmEnv(bin, 'ok') }),
    ).rejects.toThrow(/no prebuilt CPU binaries for freebsd-x64.*--gpu/);
  });
});
