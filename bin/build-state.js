// Whether dist/ (what `npm run build` compiles from src/) may run in place of the TypeScript.
// Plain JavaScript on purpose: it decides, before anything is compiled or tsx is loaded, which
// of the two runs. See docs/running.md#the-compiled-build.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The folder Navi runs from (the one holding src/, bin/ and dist/). */
export const programFolder = resolve(import.meta.dirname, '..');

/** The stamp `npm run build` writes last, so a half-written dist/ is never taken as current. */
export const STAMP_FILE = 'build-stamp.json';

/** A file the build compiles: TypeScript under src/, not a test. */
export function isBuiltSource(file) {
  return file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.test.ts');
}

/** The absolute paths of the files the build compiles. */
export function listSources(root = programFolder) {
  return readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && isBuiltSource(entry.name))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

/**
 * The files the build compiles and the newest of them. A stat per file (about 360 of them) takes
 * a few milliseconds, paid once per process start.
 */
export function scanSources(root = programFolder) {
  const paths = listSources(root);
  let newest = { path: '', mtimeMs: 0 };
  for (const path of paths) {
    const { mtimeMs } = statSync(path);
    if (mtimeMs > newest.mtimeMs) newest = { path: relative(root, path), mtimeMs };
  }
  return { count: paths.length, newest };
}

/**
 * `{current: true}` when dist/ was built from the sources as they are now: its stamp exists, no
 * source changed after the build started, and no source was added or removed since. Otherwise
 * `{current: false, reason}`, the reason in words for the log.
 */
export function buildState(root = programFolder) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, 'dist', STAMP_FILE), 'utf8'));
  } catch {
    return { current: false, reason: 'no build (dist/build-stamp.json is missing; npm run build makes it)' };
  }
  let sources;
  try {
    sources = scanSources(root);
  } catch (err) {
    return { current: false, reason: `cannot read src/: ${err.message}` };
  }
  if (typeof stamp.started_ms !== 'number' || typeof stamp.sources !== 'number') {
    return { current: false, reason: 'dist/build-stamp.json is not one npm run build wrote' };
  }
  if (sources.newest.mtimeMs > stamp.started_ms) {
    return { current: false, reason: `${sources.newest.path} changed after the last build` };
  }
  if (sources.count !== stamp.sources) {
    return {
      current: false,
      reason: `src/ holds ${sources.count} source files, the build had ${stamp.sources}`,
    };
  }
  return { current: true, reason: `built ${stamp.built_at}` };
}

/** Where the build puts the compiled `file` (a path under src/, relative or absolute). */
export function compiledPath(file, root = programFolder) {
  const rel = relative(join(root, 'src'), resolve(root, file));
  if (rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`${file} is not under src/`);
  return join(root, 'dist', rel.replace(/\.ts$/, '.js'));
}

/**
 * Imports one of Navi's entry files (`src/….ts`): its compiled copy when the build is current,
 * else the TypeScript through tsx. `NAVI_FROM_SOURCE=1` always takes the TypeScript.
 */
export async function importEntry(file, root = programFolder) {
  const state = process.env.NAVI_FROM_SOURCE === '1' ? { current: false } : buildState(root);
  if (state.current) {
    const compiled = compiledPath(file, root);
    // A current stamp with the entry gone (a build under way, a hand-pruned dist/): run the
    // TypeScript rather than fail to start.
    if (existsSync(compiled)) return import(pathToFileURL(compiled).href);
    process.stderr.write(`navi: ${relative(root, compiled)} is missing; running the TypeScript\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(resolve(root, file)).href);
}
