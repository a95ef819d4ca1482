/**
 * Installing the llama.cpp runtime (node-llama-cpp) with npm into LLAMACPP_RUNTIME_DIR, outside
 * the project: the default `npm ci` stays lean, and only people who want a model inside Navi
 * download it. The lean install takes the package and the prebuilt CPU binaries of this
 * platform (about 85 MB); `gpu` takes every optional binary too (CUDA, Vulkan: about 725 MB).
 *
 * npm writes into a folder next to the target, which replaces the target only once npm
 * succeeded and the files are there: a failed, cut or timed-out install leaves the runtime as it
 * was, and no half-installed folder.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { RUNTIME_PACKAGE, RUNTIME_VERSION, runtimeEntry } from './runtime-files.js';

export interface InstallOptions {
  /** Install the optional GPU binaries too (CUDA, Vulkan, Metal where they exist). */
  gpu?: boolean;
  /** Each line npm prints, as it prints it. */
  onLine?(line: string): void;
  signal?: AbortSignal;
  /** Longest an install may take. Default 15 minutes. */
  timeoutMs?: number;
  /** The environment npm runs with (tests take npm off PATH or put a failing one there). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  arch?: string;
}

export interface InstallResult {
  dir: string;
  version: string;
}

/** Why an install failed, with npm's last lines of output when there were any. */
export class RuntimeInstallError extends Error {
  constructor(
    message: string,
    readonly output: string[] = [],
  ) {
    super(message);
    this.name = 'RuntimeInstallError';
  }
}

const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const KEPT_LINES = 20;

/**
 * The npm package with node-llama-cpp's prebuilt binaries for this platform, or undefined where
 * it has none (then only the full install, which can build from source, may work).
 */
export function platformPackage(platform: NodeJS.Platform, arch: string): string | undefined {
  const names: Record<string, string> = {
    'linux-x64': 'linux-x64',
    'linux-arm64': 'linux-arm64',
    'darwin-arm64': 'mac-arm64-metal',
    'darwin-x64': 'mac-x64',
    'win32-x64': 'win-x64',
    'win32-arm64': 'win-arm64',
  };
  const name = names[`${platform}-${arch}`];
  return name ? `@node-llama-cpp/${name}` : undefined;
}

/** The npm arguments of an install into `prefix`. */
export function npmInstallArgs(prefix: string, gpu: boolean, platform: string | undefined): string[] {
  const common = [
    'install',
    '--prefix',
    prefix,
    '--save-exact',
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
  ];
  // Its install script would build llama.cpp from source when no prebuilt binary fits; the
  // prebuilt ones are all Navi uses (getLlama with build "never").
  common.push('--ignore-scripts', '--loglevel', 'http');
  const main = `${RUNTIME_PACKAGE}@${RUNTIME_VERSION}`;
  if (gpu) return [...common, main];
  return [...common, '--omit=optional', main, ...(platform ? [`${platform}@${RUNTIME_VERSION}`] : [])];
}

/** Runs npm to install the runtime into `dir`, replacing what was there only on success. */
export async function installRuntime(dir: string, options: InstallOptions = {}): Promise<InstallResult> {
  const platform = platformPackage(options.platform ?? process.platform, options.arch ?? process.arch);
  const gpu = options.gpu === true;
  if (!platform && !gpu) {
    throw new RuntimeInstallError(
      `node-llama-cpp has no prebuilt CPU binaries for ${options.platform ?? process.platform}-${options.arch ?? process.arch}; ` +
        'try the full install (npx navi llamacpp install --gpu), which takes every binary it offers.',
    );
  }
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(join(parent, `.${basename(dir)}.installing-`));
  try {
    await writeFile(
      join(staging, 'package.json'),
      `${JSON.stringify({ name: 'navi-llamacpp-runtime', private: true, description: 'Installed by npx navi llamacpp install' }, null, 2)}\n`,
    );
    const output = await runNpm(npmInstallArgs(staging, gpu, platform), staging, options);
    const entry = runtimeEntry(staging);
    if (!entry)
      throw new RuntimeInstallError(`npm finished, but ${RUNTIME_PACKAGE} is not in ${staging}.`, output);
    if (platform && !existsSync(join(staging, 'node_modules', ...platform.split('/')))) {
      throw new RuntimeInstallError(
        `npm finished, but the binaries (${platform}) are not in ${staging}.`,
        output,
      );
    }
    await replace(dir, staging);
    return { dir, version: entry.version };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Moves `staging` to `dir`; the old `dir` goes only once the new one is in place. */
async function replace(dir: string, staging: string): Promise<void> {
  if (!existsSync(dir)) {
    await rename(staging, dir);
    return;
  }
  const old = `${staging}.old`;
  await rename(dir, old);
  try {
    await rename(staging, dir);
  } catch (err) {
    await rename(old, dir);
    throw err;
  }
  await rm(old, { recursive: true, force: true });
}

function runNpm(args: string[], cwd: string, options: InstallOptions): Promise<string[]> {
  const tail: string[] = [];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new RuntimeInstallError('the install was cancelled before it started'));
      return;
    }
    const child = spawn('npm', args, {
      cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timeout or cancel stops npm and whatever it started.
      detached: process.platform !== 'win32',
      shell: process.platform === 'win32',
    });
    let stopped: string | undefined;
    const stop = (why: string) => {
      stopped ??= why;
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGTERM');
        else child.kill('SIGTERM');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(
      () => stop(`npm did not finish within ${timeoutMs / 1000} s; check the network and retry`),
      timeoutMs,
    );
    const onAbort = () => stop('the install was cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        if (line.trim() === '') return;
        tail.push(line);
        if (tail.length > KEPT_LINES) tail.shift();
        options.onLine?.(line);
      });
    }
    const finish = (error?: RuntimeInstallError) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(tail);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      finish(
        new RuntimeInstallError(
          err.code === 'ENOENT'
            ? 'npm was not found on PATH; install Node.js with npm (https://nodejs.org), then retry'
            : `npm could not be started: ${err.message}`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      if (stopped) finish(new RuntimeInstallError(stopped, tail));
      else if (code !== 0)
        finish(
          new RuntimeInstallError(
            `npm install failed (${code === null ? `signal ${signal}` : `exit code ${code}`}): ${reasonOf(tail)}. ` +
              'Check the network and the npm registry, then retry.',
            tail,
          ),
        );
      else finish();
    });
  });
}

/** npm's line that says what went wrong, rather than its "code" line or where its log is. */
function reasonOf(lines: string[]): string {
  const errors = lines.filter((l) => /^npm (error|ERR!)/.test(l));
  const telling = errors.find((l) => !/^npm (error|ERR!) (code |A complete log)/.test(l));
  return (telling ?? errors[0] ?? lines.at(-1) ?? 'no output').replace(/^npm (error|ERR!)\s*/, '');
}
