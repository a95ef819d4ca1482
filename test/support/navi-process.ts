/**
 * Navi as a real child process. `spawnNavi`: a `navi serve` for tests and benchmarks that need
 * Navi in its own process (a kill -9, the process-wide error handlers, CPU time read from /proc);
 * its environment is built from a folder, a port and a fake LLM, and `extra` adds or overrides
 * variables. `runNavi`: any `navi` command, run to its end, with what it printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './navi.js';
import { plainProfile, profilesDir } from './profiles.js';

export interface NaviProcessOptions {
  dir: string;
  port: number;
  ollamaUrl: string;
  extra?: NodeJS.ProcessEnv;
  /** What happens to the child's stdout and stderr (default: stderr piped, stdout ignored). */
  stdio?: ['ignore', 'ignore' | 'pipe', 'ignore' | 'pipe' | 'inherit'];
  /**
   * Options for node itself, before the script (`--cpu-prof`, which NODE_OPTIONS refuses).
   * Ignored by `naviProcessEnv`.
   */
  nodeArgs?: string[];
}

/** The environment of a `navi serve` child: everything in `dir`, the plain test profile. */
export function naviProcessEnv(options: Omit<NaviProcessOptions, 'stdio' | 'nodeArgs'>): NodeJS.ProcessEnv {
  const { dir } = options;
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NAVI_PORT: String(options.port),
    DB_PATH: join(dir, 'navi.db'),
    SESSION_FILES_DIR: join(dir, 'files'),
    // Never the developer's own data folder (models, the settings file the client saves).
    NAVI_DATA_DIR: join(dir, 'data'),
    TOOLS_DIR: join(dir, 'tools'),
    CONTEXT_PROVIDERS_DIR: join(dir, 'providers'),
    MCP_SERVERS_DIR: join(dir, 'mcp'),
    OLLAMA_HOST: options.ollamaUrl,
    OLLAMA_DEFAULT_MODEL: 'test-model',
    PROFILES_DIR: profilesDir([plainProfile]),
    DEFAULT_PROFILE: 'plain',
    LOG_LEVEL: 'ERROR',
    LOG_FORMAT: 'json',
    // The shipped servers are tested on their own; a test that wants them passes 'true'.
    MCP_SHIPPED_SERVERS: 'false',
    ...options.extra,
  };
}

/**
 * Servers spawned and not yet exited. A test that times out while one is starting never gets
 * it back to kill, so whatever is left is killed when the test process exits.
 */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts `navi serve` and resolves once /health answers; rejects if it exits or takes 60 s. */
export async function spawnNavi(
  options: NaviProcessOptions,
  env = naviProcessEnv(options),
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), join(repoRoot, 'bin/navi.js'), 'serve'],
    {
      cwd: options.dir,
      env,
      stdio: options.stdio ?? ['ignore', 'ignore', 'pipe'],
    },
  );
  live.add(child);
  child.once('exit', () => live.delete(child));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`navi exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error('navi did not become healthy within 60 s');
}

/** How a `navi` command ended, and everything it printed. */
export interface NaviRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` in `cwd` with exactly `env` and resolves when it has ended, with its exit code
 * and output. A program still running after 60 s is killed, and resolves with its code null.
 */
export function runProgram(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<NaviRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // Decoded as a stream, so a character split across two chunks stays whole.
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `navi <args>` in `cwd` and resolves when it has ended. The environment is `env` on top of
 * PATH, HOME, LOG_LEVEL=ERROR and NAVI_DATA_DIR=`cwd` only, so the caller's own settings cannot
 * leak in and nothing is read from or written to the developer's own data folder: the data files
 * a test leaves unset land in `cwd`, the test's folder. A command still running after 60 s is
 * killed, and resolves with its code null.
 */
export function runNavi(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<NaviRun> {
  return runProgram(
    process.execPath,
    [join(repoRoot, 'bin/navi.js'), ...args],
    { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'ERROR', NAVI_DATA_DIR: cwd, ...env },
    cwd,
  );
}
