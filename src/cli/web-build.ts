/**
 * Keeps the web client's build (web/dist) in step with its sources, so `npm start` never needs
 * a manual build step. Called by `navi serve` before listening.
 *
 * The build is stale when web/dist/index.html is missing or older than any file under web/src,
 * web/index.html, web/vite.config.ts or src/protocol. Vite runs in a child process (in the
 * server's own it left about 75 MB of heap and 400 MB of RSS behind for the server's whole life)
 * into a temporary folder that then replaces web/dist, so a server or a second process never
 * sees half a build.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

/** This checkout: the server serves web/dist from here, whatever the working directory is. */
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface WebBuildOptions {
  /** The project folder (the one holding web/ and src/); this checkout by default. */
  root?: string;
  logger: Logger;
}

export interface WebBuildResult {
  built: boolean;
  /** Why it was (or was not) built, for the log: `missing`, `stale: …`, `up to date`, … */
  reason: string;
}

/** Newest file under `path` (a file or a folder, walked recursively); undefined when absent. */
async function newestFile(path: string): Promise<{ path: string; mtimeMs: number } | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    return undefined;
  }
  if (!info.isDirectory()) return { path, mtimeMs: info.mtimeMs };
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of await readdir(path)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const candidate = await newestFile(join(path, entry));
    if (candidate && (!newest || candidate.mtimeMs > newest.mtimeMs)) newest = candidate;
  }
  return newest;
}

/** Whether web/dist must be rebuilt, and why. */
export async function webBuildStatus(root: string): Promise<{ stale: boolean; reason: string }> {
  const index = join(root, 'web', 'dist', 'index.html');
  let builtAt: number;
  try {
    builtAt = (await stat(index)).mtimeMs;
  } catch {
    return { stale: true, reason: 'missing: web/dist/index.html does not exist' };
  }
  const sources = ['web/src', 'web/index.html', 'web/vite.config.ts', 'src/protocol'];
  for (const source of sources) {
    const newest = await newestFile(join(root, source));
    if (newest && newest.mtimeMs > builtAt) {
      return { stale: true, reason: `stale: ${relative(root, newest.path)} changed after the last build` };
    }
  }
  return { stale: false, reason: 'up to date' };
}

/**
 * Rebuilds web/dist when it is missing or stale. Resolves `{built: false}` when nothing had to
 * be done, or when the build failed but an earlier build is still there to serve (logged as a
 * warning). Rejects only when the build failed and there is no build at all.
 */
export async function ensureWebBuild({
  root = projectRoot,
  logger,
}: WebBuildOptions): Promise<WebBuildResult> {
  const status = await webBuildStatus(root);
  if (!status.stale) return { built: false, reason: status.reason };

  const webDir = join(root, 'web');
  const dist = join(webDir, 'dist');
  logger.info({ reason: status.reason }, 'building the web client');
  const started = Date.now();
  const temporary = await mkdtemp(join(webDir, '.dist-'));
  try {
    // mkdtemp makes the folder private (0700); a server running as another user must read it.
    await chmod(temporary, 0o755);
    await viteBuild(webDir, temporary);
    await swapInto(temporary, dist);
  } catch (err) {
    await rm(temporary, { recursive: true, force: true });
    const message = err instanceof Error ? err.message : String(err);
    if (existsSync(join(dist, 'index.html'))) {
      logger.warn({ err: message }, 'the web client could not be rebuilt; serving the previous build');
      return { built: false, reason: `build failed, previous build kept: ${message}` };
    }
    throw new Error(
      `The web client could not be built (${message}). Run "npm run build:web" to see the details.`,
    );
  }
  return { built: true, reason: `${status.reason} (built in ${Date.now() - started} ms)` };
}

/** A build that takes longer than this is stuck (it takes seconds); it is stopped. */
const BUILD_TIMEOUT_MS = 5 * 60_000;

/** Runs `vite build` of `webDir` into `outDir` in a child process; rejects with its last words. */
function viteBuild(webDir: string, outDir: string): Promise<void> {
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  const args = [vite, 'build', '--config', join(webDir, 'vite.config.ts')];
  args.push('--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn');
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: webDir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return done();
      const why = signal ? `stopped by ${signal}` : `vite exited with ${code}`;
      const last = stderr.trim().split('\n').slice(-3).join(' ');
      fail(new Error(last ? `${why}: ${last}` : why));
    });
  });
}

/** Replaces `dist` by `fresh`; if another process swapped first, its build wins and ours goes. */
async function swapInto(fresh: string, dist: string): Promise<void> {
  const old = `${dist}.old-${process.pid}-${Date.now()}`;
  try {
    await rename(dist, old);
  } catch {
    // No previous build (or another process moved it already).
  }
  try {
    await rename(fresh, dist);
  } catch {
    await rm(fresh, { recursive: true, force: true });
  }
  await rm(old, { recursive: true, force: true });
}
