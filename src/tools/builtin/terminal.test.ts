import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { needsProgram } from '../../../test/support/requirements.js';
import { type SettingName, testSettings } from '../../config/settings.js';
import { testGuard } from '../test-helpers.js';
import { createTerminalTool, type TerminalToolDeps } from './terminal.js';
import { isAlive, makeCtx } from './test-support.js';

let base: string;
let root: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'navi-term-'));
  root = join(base, 'root');
  mkdirSync(root);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function tool(env: Partial<Record<SettingName, string>> = {}, extra: Partial<TerminalToolDeps> = {}) {
  return createTerminalTool({
    settings: testSettings({ FS_ALLOWED_PATHS: root, NAVI_SANDBOX: 'off', ...env }),
    guard: testGuard(testSettings({ FS_ALLOWED_PATHS: root, NAVI_SANDBOX: 'off', ...env })),
    ...extra,
  });
}
const ctx = makeCtx();

/** Processes whose command line contains `marker` (zombies excluded). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

describe('terminal (direct)', () => {
  it('returns stdout, stderr and the exit code', async () => {
    const r = await tool().execute({ command: 'echo out; echo err >&2; exit 3' }, ctx);
    expect(r.success).toBe(false);
    expect(r.output).toBe('exit code 3\n--- stdout ---\nout\n\n--- stderr ---\nerr\n');
    expect(r.metadata).toMatchObject({ exit_code: 3, timed_out: false, sandboxed: false });
    const good = await tool().execute({ command: 'echo hi' }, ctx);
    expect(good).toMatchObject({ success: true, output: 'exit code 0\n--- stdout ---\nhi\n' });
  });

  it('runs in the working directory, which must be allowed', async () => {
    mkdirSync(join(root, 'sub'));
    const r = await tool().execute({ command: 'pwd', cwd: join(root, 'sub') }, ctx);
    expect(r.output).toContain(join(root, 'sub'));
    const bad = await tool().execute({ command: 'pwd', cwd: '/etc' }, ctx);
    expect(bad.success).toBe(false);
    expect(bad.output).toContain('Working directory refused');
    expect(bad.output).toContain(`outside the allowed folders (${root})`);
  });

  it('caps output', async () => {
    const t = tool({}, { maxOutputBytes: 100 });
    const r = await t.execute({ command: 'head -c 5000 /dev/zero | tr "\\0" a' }, ctx);
    expect(r.output).toContain('[… 4900 more bytes not shown]');
  });

  it('refuses disallowed programs before running anything', async () => {
    const t = tool({ TERMINAL_ALLOWED_COMMANDS: 'echo,ls' });
    const r = await t.execute({ command: `echo x > ${join(root, 'f')} && touch ${join(root, 'g')}` }, ctx);
    expect(r.output).toBe('Refused: "touch" is not an allowed command. Allowed: echo, ls.');
    expect(readdirSync(root)).toEqual([]);
    const s = await t.execute({ command: 'echo $(touch x)' }, ctx);
    expect(s.output).toContain('command substitution');
  });

  it('kills the whole process group at the timeout', async () => {
    const pidFile = join(root, 'child.pid');
    const r = await tool().execute(
      { command: `sleep 300 & echo $! > ${pidFile}; echo $$ >> ${pidFile}; sleep 300`, timeout_seconds: 1 },
      ctx,
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('Timed out after 1 s; the process group was killed.');
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('stops when the run is aborted', async () => {
    const controller = new AbortController();
    const pending = tool().execute(
      { command: 'echo started; sleep 300' },
      makeCtx({ signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 200);
    const r = await pending;
    expect(r.output).toContain('Stopped; the process group was killed.');
  });

  it('does not pass Navi secrets in the environment', async () => {
    const t = tool(
      {},
      {
        env: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-secret-5d0c', NAVI_API_TOKEN: 'navi-token-93fa' },
      },
    );
    const r = await t.execute({ command: 'env' }, ctx);
    expect(r.success).toBe(true);
    // Values no path or temporary folder name can contain by chance.
    expect(r.output).not.toContain('sk-secret-5d0c');
    expect(r.output).not.toContain('navi-token-93fa');
    expect(r.output).not.toMatch(/^(OPENAI_API_KEY|NAVI_API_TOKEN)=/m);
  });
});

describe('terminal: sandbox decision', () => {
  it('refuses with NAVI_SANDBOX=required when bwrap is missing', async () => {
    const t = tool({ NAVI_SANDBOX: 'required' }, { bwrapPath: '/nonexistent/bwrap' });
    const r = await t.execute({ command: 'echo hi' }, ctx);
    expect(r.success).toBe(false);
    expect(r.output).toContain('Refused: NAVI_SANDBOX=required but the bubblewrap sandbox is unavailable');
    expect(r.output).toContain('"/nonexistent/bwrap" is not installed');
  });

  it('falls back to running directly with NAVI_SANDBOX=auto', async () => {
    const t = tool({ NAVI_SANDBOX: 'auto' }, { bwrapPath: '/nonexistent/bwrap' });
    const r = await t.execute({ command: 'echo hi' }, ctx);
    expect(r).toMatchObject({ success: true, metadata: { sandboxed: false } });
  });
});

describe.skipIf(!needsProgram('bwrap', 'terminal sandbox tests'))('terminal (bubblewrap)', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const sandboxed = (extra: Partial<TerminalToolDeps> = {}, env: Partial<Record<SettingName, string>> = {}) =>
    tool(
      {
        NAVI_SANDBOX: 'required',
        DB_PATH: join(base, 'navi.db'),
        SESSION_FILES_DIR: join(base, 'files'),
        ...env,
      },
      extra,
    );

  it('writes the allowed roots but not the rest of the file system', async () => {
    const r = await sandboxed().execute(
      {
        command: `echo ok > ${join(root, 'w.txt')}; touch ${join(base, 'outside.txt')} 2>&1; touch /usr/navi-x 2>&1; true`,
      },
      ctx,
    );
    expect(r.metadata).toMatchObject({ sandboxed: true });
    expect(readFileSync(join(root, 'w.txt'), 'utf8')).toBe('ok\n');
    expect(r.output).toContain('Read-only file system');
    expect(readdirSync(base).sort()).toEqual(['root']);
  });

  it("hides Navi's database, its WAL, .env-style secrets and session files, even inside an allowed root", async () => {
    writeFileSync(join(root, 'navi.db'), 'DBSECRET');
    writeFileSync(join(root, 'navi.db-wal'), 'WALSECRET');
    mkdirSync(join(root, 'files'));
    writeFileSync(join(root, 'files', 'f.txt'), 'FILESECRET');
    writeFileSync(join(root, 'id_key'), 'KEYSECRET');
    writeFileSync(join(root, 'plain.txt'), 'PLAIN');
    const r = await sandboxed(
      { hiddenPaths: [join(root, 'id_key')] },
      { DB_PATH: join(root, 'navi.db'), SESSION_FILES_DIR: join(root, 'files') },
    ).execute(
      {
        command: `cd ${root}; cat navi.db navi.db-wal id_key plain.txt; ls files`,
      },
      ctx,
    );
    expect(r.success).toBe(true);
    expect(r.output).toContain('PLAIN');
    for (const secret of ['DBSECRET', 'WALSECRET', 'FILESECRET', 'KEYSECRET', 'f.txt'])
      expect(r.output).not.toContain(secret);
  });

  it('keeps the folders that decide what Navi runs read-only, even inside an allowed root', async () => {
    // A sandboxed command that could write an MCP config, a tool or a profile would grant itself
    // what only the person grants.
    const folders = ['tools', 'context_providers', 'mcp_servers.d', 'mcp-servers', 'profiles'];
    for (const folder of folders) mkdirSync(join(root, folder));
    const r = await sandboxed(
      {},
      {
        TOOLS_DIR: join(root, 'tools'),
        CONTEXT_PROVIDERS_DIR: join(root, 'context_providers'),
        MCP_SERVERS_DIR: join(root, 'mcp_servers.d'),
        MCP_SCAFFOLD_DIR: join(root, 'mcp-servers'),
        PROFILES_DIR: join(root, 'profiles'),
      },
    ).execute(
      {
        command: [
          `cd ${root}`,
          ...folders.map((f) => `echo '{"command":"sh"}' > ${f}/evil.json 2>&1`),
          'echo plain > plain.txt',
          'true',
        ].join('; '),
      },
      ctx,
    );
    expect(r.metadata).toMatchObject({ sandboxed: true });
    expect(r.output).toContain('Read-only file system');
    for (const folder of folders) expect(readdirSync(join(root, folder))).toEqual([]);
    expect(readFileSync(join(root, 'plain.txt'), 'utf8')).toBe('plain\n');
  });

  it('hides the SSH key files named in the SSH hosts file', async () => {
    writeFileSync(join(base, 'ssh_key'), 'SSHKEYSECRET');
    writeFileSync(
      join(base, 'ssh_hosts.json'),
      JSON.stringify({ box: { host: 'h', user: 'u', key_path: join(base, 'ssh_key') } }),
    );
    const r = await sandboxed({}, { SSH_HOSTS_FILE: join(base, 'ssh_hosts.json') }).execute(
      { command: `cat ${join(base, 'ssh_key')} ${join(base, 'ssh_hosts.json')}; echo done` },
      ctx,
    );
    expect(r.output).toContain('done');
    expect(r.output).not.toContain('SSHKEYSECRET');
    expect(r.output).not.toContain('key_path');
  });

  it("never reaches the host's loopback, whatever the profile says", async () => {
    const cmd = `(echo hi > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo CONNECTED || echo NO-NETWORK`;
    for (const allowed of [false, true]) {
      const r = await sandboxed({ networkAllowed: () => allowed }).execute({ command: cmd }, ctx);
      expect(r.output, `network_access ${allowed}`).toContain('NO-NETWORK');
    }
  });

  it('leaves no process behind after a timeout', async () => {
    const marker = `${300 + Math.floor(Math.random() * 1000)}.${process.pid}`;
    const r = await sandboxed().execute(
      { command: `sleep ${marker} & sleep ${marker}`, timeout_seconds: 1 },
      ctx,
    );
    expect(r.output).toContain('Timed out');
    expect(processesWith(`sleep ${marker}`)).toEqual([]);
  });
});
