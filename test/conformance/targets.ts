/**
 * The servers `npm run conformance` checks, and how each is started: the MCP servers shipped with
 * Navi (each its own process, Streamable HTTP on `--http 0`), and Navi itself (`navi serve`,
 * whose `/mcp` endpoint is the server under test). Every target starts with its settings at their
 * defaults except those named here, writes only in the run's temporary folder, and is ready once
 * it has printed the address it listens on.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../..');
const START_TIMEOUT_MS = 60_000;
/** Enough of a failed start's output to say why, without keeping a long-running log in memory. */
const KEPT_OUTPUT_CHARS = 20_000;

export interface RunningServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  child: ChildProcess;
}

export interface Target {
  /** The name on the command line (`npm run conformance -- <name>`) and of `<name>.baseline.yml`. */
  name: string;
  /** Starts the server, writing only in `workDir`; resolves once it serves its MCP endpoint. */
  start(workDir: string): Promise<RunningServer>;
}

interface ProcessStart {
  name: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdio: StdioOptions;
  /** The MCP endpoint, read from what the process has printed so far; undefined until it listens. */
  ready(output: string): string | undefined;
}

/**
 * Spawns a process and resolves once `ready` finds its endpoint in its piped output. The pipes
 * are read to the end, so a server that keeps logging never blocks on a full one.
 */
function startProcess(start: ProcessStart): Promise<RunningServer> {
  const child = spawn(process.execPath, start.args, { cwd: start.cwd, env: start.env, stdio: start.stdio });
  return new Promise((done, fail) => {
    let output = '';
    let settled = false;
    const settle = (error?: Error, url?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) fail(error);
      else if (url) done({ url, child });
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle(new Error(`${start.name} did not start within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    const read = (chunk: string) => {
      if (settled) return;
      output = (output + chunk).slice(-KEPT_OUTPUT_CHARS);
      const url = start.ready(output);
      if (url) settle(undefined, url);
    };
    child.stdout?.setEncoding('utf8').on('data', read);
    child.stderr?.setEncoding('utf8').on('data', read);
    child.once('error', (err) => settle(new Error(`${start.name} could not be started: ${err.message}`)));
    child.once('exit', (code, signal) =>
      settle(new Error(`${start.name} exited (${signal ?? `code ${code}`}) before listening:\n${output}`)),
    );
  });
}

/**
 * A shipped server, run from its TypeScript on `--http 0`; `env` adds settings beyond the
 * defaults, given the run's temporary folder. It prints `listening on <url>` on stderr.
 */
function shippedServer(name: string, main: string, env: (workDir: string) => Record<string, string>): Target {
  return {
    name,
    start: (workDir) =>
      startProcess({
        name,
        args: ['--import', 'tsx', main, '--http', '0'],
        cwd: repoRoot,
        // Defaults for every other setting: the user's environment must not change the result.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          TMPDIR: process.env.TMPDIR ?? '',
          ...env(workDir),
        },
        stdio: ['ignore', 'inherit', 'pipe'],
        ready: (output) => output.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1],
      }),
  };
}

/**
 * The environment of the `navi serve` under test. Only PATH and TMPDIR come from the user's;
 * HOME and every data file, folder and setting that could reach the user's data are the run's
 * own, so neither their database, vault, settings file nor their `.env` (the working folder is
 * the run's) is read or written. No token: Navi listens on loopback only, where /mcp needs none.
 * No LLM either: the scenarios call only the suite's own test tools, never ask_navi, so the
 * model address is loopback port 1, which fetch refuses to connect to at all, rather than
 * whatever Ollama the user runs.
 */
export function naviEnv(workDir: string): Record<string, string> {
  const data = join(workDir, 'data');
  return {
    PATH: process.env.PATH ?? '',
    TMPDIR: process.env.TMPDIR ?? '',
    HOME: workDir,
    NAVI_HOST: '127.0.0.1',
    NAVI_PORT: '0',
    NAVI_DATA_DIR: data,
    DB_PATH: join(data, 'navi.db'),
    SESSION_FILES_DIR: join(data, 'session_files'),
    GNEXUS_VAULT_PATH: join(data, 'vault.db'),
    GNEXUS_KEY_FILE: join(data, 'vault.key'),
    GNEXUS_AUDIT_LOG: join(data, 'vault-audit.jsonl'),
    TOOLS_DIR: join(workDir, 'tools'),
    CONTEXT_PROVIDERS_DIR: join(workDir, 'context_providers'),
    MCP_SERVERS_DIR: join(workDir, 'mcp_servers.d'),
    MCP_SCAFFOLD_DIR: join(workDir, 'mcp-servers'),
    SSH_HOSTS_FILE: join(workDir, 'ssh_hosts.json'),
    // The profiles and manuals that ship with Navi, read only: ask_navi offers their ids.
    PROFILES_DIR: join(repoRoot, 'profiles'),
    MANUALS_DIR: join(repoRoot, 'manuals'),
    MCP_SHIPPED_SERVERS: 'false',
    OLLAMA_HOST: 'http://127.0.0.1:1',
    // Info, for the line naming the address it serves on; JSON, so that line is read the same
    // whether or not the output is a terminal.
    LOG_LEVEL: 'INFO',
    LOG_FORMAT: 'json',
  };
}

/** Navi itself: a real `navi serve` on a free loopback port, checked at `/mcp`. */
const navi: Target = {
  name: 'navi',
  start: (workDir) =>
    startProcess({
      name: 'navi',
      args: [join(repoRoot, 'bin/navi.js'), 'serve'],
      cwd: workDir,
      env: naviEnv(workDir),
      stdio: ['ignore', 'pipe', 'pipe'],
      ready: (output) => {
        const base = output.match(/Navi is serving on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
        return base ? `${base}/mcp` : undefined;
      },
    }),
};

export const targets: readonly Target[] = [
  shippedServer('navi-web', 'src/servers/navi-web/main.ts', () => ({})),
  // A new vault, unlocked by a key made for this run, in the run's folder.
  shippedServer('gnexus-creds', 'src/servers/gnexus-creds/main.ts', (workDir) => ({
    NAVI_CWD: workDir,
    GNEXUS_MASTER_KEY: randomBytes(32).toString('base64'),
  })),
  shippedServer('navi-ui', 'src/servers/navi-ui/main.ts', () => ({})),
  // Its session files, should a scenario ever reach them, in the run's folder.
  shippedServer('navi-3d', 'src/servers/navi-3d/main.ts', (workDir) => ({ NAVI_CWD: workDir })),
  navi,
];
