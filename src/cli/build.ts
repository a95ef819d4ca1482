/**
 * `npm run build`: compiles Navi's TypeScript (src/, the shipped MCP servers among it) to plain
 * ES modules in dist/, so the running server and the shipped servers need no tsx.
 *
 * Each file is compiled on its own (esbuild, no bundling): dependencies stay imports of
 * node_modules, and `src/a/b.ts` becomes `dist/a/b.js` at the same depth below the program
 * folder, so every path a module computes from its own location (`import.meta.dirname` +
 * `../..` to web/dist, mcp_servers.shipped/, package.json) names the same file from either.
 *
 * The stamp (dist/build-stamp.json) is removed first and written last: a process starting
 * mid-build sees no stamp and runs the TypeScript (bin/build-state.js decides).
 * Run by `node bin/navi-build.js` (`npm run build`), which itself runs compiled when it can.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, version as esbuildVersion } from 'esbuild';
import { buildState, listSources, programFolder, STAMP_FILE } from '../../bin/build-state.js';

/** What dist/build-stamp.json records: when, from what, by which compiler. */
export interface BuildStamp {
  built_at: string;
  /** When the build started (ms since the epoch): a source newer than this makes it stale. */
  started_ms: number;
  /** How many source files were compiled (one removed or added makes the build stale). */
  sources: number;
  /** The git commit the sources were at, and whether the work tree had changes; null outside git. */
  commit: { id: string; dirty: boolean } | null;
  esbuild: string;
  node: string;
  duration_ms: number;
}

function gitCommit(root: string): BuildStamp['commit'] {
  try {
    const run = (args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { id: run(['rev-parse', 'HEAD']), dirty: run(['status', '--porcelain', '--', 'src']) !== '' };
  } catch {
    return null;
  }
}

/** Compiles `root`/src into `root`/dist and writes the stamp; resolves with the stamp. */
export async function buildDist(root: string = programFolder): Promise<BuildStamp> {
  // Taken before anything is read, so a file saved during the build makes the result stale.
  const startedMs = Date.now();
  if (!existsSync(join(root, 'src'))) {
    throw new Error(`${root} holds no src/ folder: the build runs in Navi's program folder`);
  }
  const sources = listSources(root);
  const dist = join(root, 'dist');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: sources,
    outdir: dist,
    outbase: join(root, 'src'),
    bundle: false,
    format: 'esm',
    platform: 'node',
    // The Node that runs the build runs its output (as tsx targets the Node it runs in); an older
    // target would drop syntax such as the `with { type: 'json' }` of an import.
    target: `node${process.versions.node}`,
    tsconfig: join(root, 'tsconfig.json'),
    // Linked maps cost nothing at run time unless Node is started with --enable-source-maps.
    sourcemap: 'linked',
    logLevel: 'warning',
    metafile: true,
  });
  const compiled = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js')).length;
  if (compiled !== sources.length) {
    throw new Error(
      `esbuild wrote ${compiled} files for ${sources.length} sources; run it again, or report it`,
    );
  }
  const stamp: BuildStamp = {
    built_at: new Date().toISOString(),
    started_ms: startedMs,
    sources: sources.length,
    commit: gitCommit(root),
    esbuild: esbuildVersion,
    node: process.version,
    duration_ms: Date.now() - startedMs,
  };
  writeFileSync(join(dist, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
  return stamp;
}

/**
 * `npm run build [--if-stale] [--root <folder>]`: builds and says so; `--if-stale` first checks
 * and does nothing when dist/ is current (the service unit runs it before each start). `--root`
 * builds another copy of the program (tests). Resolves with the exit code.
 */
export async function runBuild(
  argv: readonly string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const unknown = argv.filter((a, i) => a !== '--if-stale' && a !== '--root' && argv[i - 1] !== '--root');
  if (unknown.length > 0) {
    err.write(`npm run build takes --if-stale and --root <folder> only, not ${unknown.join(' ')}\n`);
    return 1;
  }
  const at = argv.indexOf('--root');
  const value = at === -1 ? programFolder : argv[at + 1];
  if (!value || value.startsWith('--')) {
    err.write('npm run build: --root needs a folder: --root /path/to/navi\n');
    return 1;
  }
  const root = resolve(value);
  if (argv.includes('--if-stale')) {
    const state = buildState(root);
    if (state.current) {
      out.write(`dist/ is current (${state.reason})\n`);
      return 0;
    }
  }
  try {
    const stamp = await buildDist(root);
    out.write(`built dist/: ${stamp.sources} files in ${stamp.duration_ms} ms\n`);
    return 0;
  } catch (e) {
    err.write(`npm run build failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
