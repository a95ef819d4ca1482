/**
 * `navi mcp login <server>` as a real child process against a real Navi and the OAuth test
 * server (docs/mcp.md#oauth): it prints the authorisation page and waits until the server is
 * authorised and running, whether the browser came back to Navi itself or the person pasted the
 * address it ended on; it says so when Navi is not running, the server is unknown or started as
 * a command, the authorisation was denied, or the time ran out.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl } from '../fake-llm/index.js';
import {
  autoApprovedCallback,
  decideAt,
  mcpServerStatus,
  writeHttpServerConfig,
} from '../support/mcp-oauth-flow.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../support/oauth-mcp-server.js';

interface LoginRun {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout, once it is printed. */
  printed(pattern: RegExp): Promise<RegExpExecArray>;
  exit: Promise<number | null>;
}

/** Starts `navi mcp login <args>` for the Navi on `port`, its stdin open for pasting. */
function startLogin(port: number, args: string[], cwd: string): LoginRun {
  const child = spawn(process.execPath, [join(repoRoot, 'bin/navi.js'), 'mcp', 'login', ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'ERROR',
      NAVI_DATA_DIR: cwd,
      NAVI_HOST: '127.0.0.1',
      NAVI_PORT: String(port),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Whatever a test leaves running is stopped with it.
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  void exit.then(() => clearTimeout(timer));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    async printed(pattern) {
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (child.exitCode !== null)
          throw new Error(
            `navi mcp login ended (${child.exitCode}) without printing ${pattern}:\n${out}\n${err}`,
          );
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          child.once('close', () => resolve());
        });
      }
    },
  };
}

const AUTHORISATION_PAGE = /^ {2}(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m;

describe('navi mcp login', () => {
  const dir = tempDir('navi-mcp-login-');
  const serversDir = join(dir, 'servers');
  let auto: OAuthMcpServer;
  let manual: OAuthMcpServer;
  let navi: NaviHandle;

  beforeAll(async () => {
    auto = await startOAuthMcpServer({ autoApprove: true });
    manual = await startOAuthMcpServer();
    writeHttpServerConfig(serversDir, 'auto', auto.url);
    writeHttpServerConfig(serversDir, 'manual', manual.url);
    writeFileSync(
      join(serversDir, 'local.json'),
      JSON.stringify({
        name: 'local',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/fixture-server.ts')],
        cwd: repoRoot,
      }),
    );
    navi = await startNavi({ dir, settings: { MCP_SERVERS_DIR: serversDir } });
    await navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await navi?.close();
    await auto?.close();
    await manual?.close();
  });

  it('prints the page, and finishes once the browser came back to Navi', async () => {
    const login = startLogin(navi.port, ['auto'], dir);
    const [, page] = await login.printed(AUTHORISATION_PAGE);
    expect(login.stdout()).toContain(`sent back to ${navi.url}/agents/mcp/oauth/callback`);
    expect(login.stdout()).toContain('Waiting for you to authorise Navi in the browser');
    // The browser: the test server approves at once and sends it to Navi's callback.
    const back = await autoApprovedCallback(page ?? '');
    expect((await fetch(back)).status).toBe(200);
    expect(await login.exit).toBe(0);
    expect(login.stdout()).toMatch(/Connected: Navi is authorised at auto .*2 tools/);
    expect((await mcpServerStatus(navi.url, 'auto')).state).toBe('ready');

    // Once authorised and running, there is nothing to do.
    const again = startLogin(navi.port, ['auto'], dir);
    expect(await again.exit).toBe(0);
    expect(again.stdout()).toContain('Navi is already authorised at auto and connected');
  });

  it('completes with the address pasted from a browser that could not reach Navi', async () => {
    const login = startLogin(navi.port, ['manual', '--redirect-base', 'http://navi.invalid:8000'], dir);
    const [, page] = await login.printed(AUTHORISATION_PAGE);
    expect(login.stdout()).toContain('sent back to http://navi.invalid:8000/agents/mcp/oauth/callback');
    const back = await decideAt(page ?? '', 'approve');
    expect(back.startsWith('http://navi.invalid:8000/agents/mcp/oauth/callback?')).toBe(true);
    login.child.stdin.write('this is not it\n');
    await login.printed(/That is not the address the browser was sent back to/);
    login.child.stdin.write(`${back}\n`);
    expect(await login.exit).toBe(0);
    expect(login.stdout()).toContain('Navi took the authorisation; connecting to manual');
    expect(login.stdout()).toContain('Connected: Navi is authorised at manual');
  });

  it('says the authorisation was denied when the pasted address carries the refusal', async () => {
    await fetch(`${navi.url}/agents/mcp/servers/manual/authorization`, { method: 'DELETE' });
    const login = startLogin(navi.port, ['manual', '--redirect-base', 'http://navi.invalid:8000'], dir);
    const [, page] = await login.printed(AUTHORISATION_PAGE);
    login.child.stdin.write(`${await decideAt(page ?? '', 'deny')}\n`);
    expect(await login.exit).toBe(1);
    expect(login.stderr()).toMatch(
      /navi mcp login: .*not given access to manual.*The person denied the request/,
    );
  });

  it('gives up after --timeout with what to do', async () => {
    const login = startLogin(navi.port, ['manual', '--timeout', '2'], dir);
    login.child.stdin.end();
    expect(await login.exit).toBe(1);
    expect(login.stderr()).toContain('gave up after 2 seconds: manual was not authorised');
    expect(login.stderr()).toContain('Run navi mcp login manual again');
  });

  it('lists the servers for an unknown name, and refuses a server started as a command', async () => {
    const unknown = startLogin(navi.port, ['nobody'], dir);
    expect(await unknown.exit).toBe(1);
    expect(unknown.stderr()).toContain('there is no MCP server named "nobody"');
    expect(unknown.stderr()).toMatch(/auto \(HTTP\).*local \(command\)|local \(command\).*auto \(HTTP\)/);
    const local = startLogin(navi.port, ['local'], dir);
    expect(await local.exit).toBe(1);
    expect(local.stderr()).toContain('reached over HTTP');
  });

  it('says how to start Navi when none runs on the port', async () => {
    const port = Number(new URL(await closedPortUrl()).port);
    const login = startLogin(port, ['auto'], dir);
    expect(await login.exit).toBe(1);
    expect(login.stderr()).toContain(`no Navi answers at http://127.0.0.1:${port}`);
    expect(login.stderr()).toContain('npm start');
  });

  it.each([
    [[], /name the server to authorise/],
    [['a', 'b'], /one server at a time/],
    [['auto', '--timeout', 'soon'], /--timeout must be a whole number of seconds/],
    [['auto', '--timeout', '0'], /--timeout must be a whole number/],
    [['auto', '--redirect-base'], /--redirect-base needs a value/],
    [['auto', '--redirect-base', 'http://x/y'], /an origin only/],
    [['auto', '--force'], /unknown option "--force"/],
  ])('refuses the arguments %j with the usage (exit 2)', async (args, message) => {
    const login = startLogin(navi.port, args, dir);
    expect(await login.exit).toBe(2);
    expect(login.stderr()).toMatch(message);
    expect(login.stderr()).toContain('Usage: navi mcp login <server>');
  });
});
