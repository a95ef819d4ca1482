/**
 * The sandbox's network, with real bubblewrap and slirp4netns: whatever a profile allows,
 * sandboxed commands never reach the host's loopback (a canary counting connections, and a real
 * Navi's API); with network allowed they get a user-mode interface whose private ranges (but
 * those HTTP_ALLOW_PRIVATE opens) are unreachable before the command starts. Only loopback is
 * ever connected to from the host side; private addresses are only tried from inside the
 * sandbox, where the routes refuse them locally, or only inspected in the route table.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SettingName, testSettings } from '../../src/config/settings.js';
import { ScratchDirs } from '../../src/machine/sandbox/scratch-dirs.js';
import { createCodeExecTool } from '../../src/tools/builtin/code-exec.js';
import { createTerminalTool } from '../../src/tools/builtin/terminal.js';
import { isAlive, makeCtx } from '../../src/tools/builtin/test-support.js';
import { testGuard } from '../../src/tools/test-helpers.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';

const runnable =
  needsProgram('bwrap', 'sandbox network tests') &&
  needsProgram('slirp4netns', 'sandbox network tests') &&
  needsProgram('ip', 'sandbox network tests') &&
  needsProgram('python3', 'sandbox network tests');

/** TCP listeners on 127.0.0.1 and ::1 (same port when possible) that count every connection. */
async function startCanary(): Promise<{
  port: number;
  port6?: number;
  hits: () => number;
  close(): Promise<void>;
}> {
  let hits = 0;
  const servers: Server[] = [];
  const listen = (host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer((socket) => {
        hits++;
        socket.destroy();
      });
      server.once('error', reject);
      server.listen(port, host, () => {
        servers.push(server);
        resolve((server.address() as { port: number }).port);
      });
    });
  const port = await listen('127.0.0.1', 0);
  let port6: number | undefined;
  try {
    port6 = await listen('::1', port);
  } catch {
    port6 = await listen('::1', 0).catch(() => undefined);
  }
  return {
    port,
    ...(port6 !== undefined ? { port6 } : {}),
    hits: () => hits,
    close: () => Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => {}),
  };
}

/** slirp4netns processes still alive although the sandbox they served is gone. */
function orphanedSlirps(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!args[0]?.endsWith('slirp4netns') || !isAlive(Number(entry))) continue;
      // The namespace it serves is named as /proc/<pid>/ns/net, <pid> being the sandbox's bwrap.
      const target = /^\/proc\/(\d+)\/ns\/net$/.exec(args[args.length - 2] ?? '')?.[1];
      if (target === undefined || !isAlive(Number(target))) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Waits (bounded) for `check` to hold; returns its last answer. */
async function eventually(check: () => boolean, limitMs = 5000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return check();
}

describe.skipIf(!runnable)('sandbox network', () => {
  let canary: Awaited<ReturnType<typeof startCanary>>;
  let navi: NaviHandle;
  let naviConnections = 0;
  let base: string;
  let root: string;
  const scratch = new ScratchDirs();

  beforeAll(async () => {
    canary = await startCanary();
    navi = await startNavi();
    navi.app.server.on('connection', () => naviConnections++);
    base = tempDir('navi-sandbox-net-');
    root = join(base, 'root');
    mkdirSync(root);
  });
  afterAll(async () => {
    await canary?.close();
    await navi?.close();
    scratch.clear();
    rmSync(base, { recursive: true, force: true });
  });

  const settings = (env: Partial<Record<SettingName, string>> = {}) =>
    testSettings({
      NAVI_SANDBOX: 'required',
      FS_ALLOWED_PATHS: root,
      DB_PATH: join(base, 'navi.db'),
      SESSION_FILES_DIR: join(base, 'files'),
      ...env,
    });
  const terminal = (allowed: boolean, env: Partial<Record<SettingName, string>> = {}, extra = {}) =>
    createTerminalTool({
      settings: settings(env),
      guard: testGuard(settings(env)),
      networkAllowed: () => allowed,
      ...extra,
    });
  const codeExec = (allowed: boolean, extra = {}) =>
    createCodeExecTool({ settings: settings(), scratch, networkAllowed: () => allowed, ...extra });

  /** Every way a sandboxed program might try to reach the host's loopback. */
  const targets = () => {
    const list: Array<[string, number]> = [
      ['127.0.0.1', canary.port],
      ['localhost', canary.port],
      ['10.0.2.2', canary.port],
      ['127.0.0.1', navi.port],
      ['10.0.2.2', navi.port],
      ['localhost', navi.port],
    ];
    list.push(['::1', canary.port6 ?? canary.port]);
    return list;
  };

  async function tryFromTerminal(tool: ToolDefinition): Promise<string> {
    const lines = targets().map(
      ([host, port]) =>
        `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo "REACHED ${host} ${port}" || echo "FAILED ${host} ${port} $?"`,
    );
    const r = await tool.execute({ command: lines.join('\n') }, makeCtx());
    return r.output;
  }

  async function tryFromPython(tool: ToolDefinition): Promise<string> {
    const code = [
      'import errno, socket',
      `for host, port in ${JSON.stringify(targets())}:`,
      '    try:',
      '        socket.create_connection((host, port), 5).close()',
      '        print("REACHED", host, port)',
      '    except socket.timeout:',
      '        print("TIMEOUT", host, port)',
      '    except OSError as e:',
      '        print("FAILED", host, port, errno.errorcode.get(e.errno, e.errno))',
    ].join('\n');
    const r = await tool.execute({ code }, makeCtx());
    return r.output;
  }

  for (const allowed of [false, true]) {
    it(`terminal never reaches the host's loopback or Navi's API (network_access ${allowed})`, async () => {
      const before = { canary: canary.hits(), navi: naviConnections };
      const out = await tryFromTerminal(terminal(allowed));
      for (const [host, port] of targets()) {
        // Exit code 124 would be `timeout`: the attempt must fail by itself, with an error.
        expect(out).toMatch(new RegExp(`FAILED ${host.replace(/\./g, '\\.')} ${port} (?!124)\\d+`));
      }
      expect(out).not.toContain('REACHED');
      expect(canary.hits()).toBe(before.canary);
      expect(naviConnections).toBe(before.navi);
    });

    it(`code_exec never reaches the host's loopback or Navi's API (network_access ${allowed})`, async () => {
      const before = { canary: canary.hits(), navi: naviConnections };
      const out = await tryFromPython(codeExec(allowed));
      for (const [host, port] of targets()) {
        expect(out).toMatch(
          new RegExp(
            `FAILED ${host.replace(/\./g, '\\.')} ${port} (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EACCES|EPERM|EADDRNOTAVAIL)`,
          ),
        );
      }
      expect(out).not.toContain('REACHED');
      expect(out).not.toContain('TIMEOUT');
      expect(canary.hits()).toBe(before.canary);
      expect(naviConnections).toBe(before.navi);
    });
  }

  it('has only its own loopback without network_access', async () => {
    const r = await terminal(false).execute({ command: 'ip -o addr; echo ROUTES:; ip route' }, makeCtx());
    expect(r.metadata).toMatchObject({ sandboxed: true, network: 'none' });
    const [addrs, routes] = r.output.split('ROUTES:');
    expect(addrs).toMatch(/\blo\b/);
    expect(addrs).not.toMatch(/tap0|eth/);
    expect(routes?.trim()).toBe('');
  });

  it('gives outbound network through its own interface, with private ranges and the host unreachable', async () => {
    const r = await terminal(true).execute({ command: 'ip -o addr; ip route; ip rule' }, makeCtx());
    expect(r.metadata).toMatchObject({ sandboxed: true, network: 'outbound' });
    expect(r.output).toMatch(/tap0\s+inet 10\.0\.2\.100\//);
    expect(r.output).toContain('default via 10.0.2.2 dev tap0');
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'])
      expect(r.output).toContain(`unreachable ${range}`);
    for (const own of ownAddresses())
      expect(r.output).toMatch(new RegExp(`unreachable ${own.replace(/\./g, '\\.')}\\b`));
    // Slirp's virtual hosts (the gateway is the host) refuse everything but DNS on port 53.
    expect(r.output).toMatch(/to 10\.0\.2\.0\/24 prohibit/);
  });

  it('refuses a private address locally, before any packet leaves', async () => {
    // The connect is tried only behind a fence already in place, so a broken sandbox cannot
    // send anything to a private address.
    const code = [
      'import errno, socket, subprocess, sys',
      'routes = subprocess.run(["ip", "route"], capture_output=True, text=True).stdout',
      'if "unreachable 10.0.0.0/8" not in routes:',
      '    print("NO-FENCE", routes); sys.exit(0)',
      'try:',
      '    socket.create_connection(("10.1.2.3", 80), 5).close(); print("REACHED")',
      'except socket.timeout:',
      '    print("TIMEOUT")',
      'except OSError as e:',
      '    print("FAILED", errno.errorcode.get(e.errno, e.errno))',
    ].join('\n');
    const r = await codeExec(true).execute({ code }, makeCtx());
    expect(r.metadata).toMatchObject({ network: 'outbound' });
    expect(r.output).toMatch(/FAILED (EHOSTUNREACH|ENETUNREACH|EACCES)/);
  });

  it('lets HTTP_ALLOW_PRIVATE open the private ranges, but never the host itself (route table only)', async () => {
    const r = await terminal(true, { HTTP_ALLOW_PRIVATE: 'true' }).execute(
      { command: 'ip route; ip rule' },
      makeCtx(),
    );
    expect(r.output).toContain('default via 10.0.2.2 dev tap0');
    expect(r.output).not.toContain('unreachable 10.0.0.0/8');
    expect(r.output).not.toContain('unreachable 192.168.0.0/16');
    for (const own of ownAddresses())
      expect(r.output).toMatch(new RegExp(`unreachable ${own.replace(/\./g, '\\.')}\\b`));
    expect(r.output).toMatch(/to 10\.0\.2\.0\/24 prohibit/);
  });

  it('lets a list open only its IPv4 ranges, never host names, the host itself or slirp (route table only)', async () => {
    const own = ownAddresses();
    const list = ['nas.lan', '192.168.7.0/24', '10.0.0.0/8', '127.0.0.1', '10.0.2.2', 'fd00::/8', ...own];
    // `ip route get` asks the kernel which way a packet would go, without sending one.
    const probes = ['192.168.7.5', '192.168.8.1', '10.1.2.3', '172.16.0.1', '10.0.2.2', ...own];
    const command = [
      'ip route',
      'ip rule',
      ...probes.map((p) => `echo "GET ${p}: $(ip route get ${p} 2>&1 | head -n 1)"`),
    ].join('; ');
    const r = await terminal(true, { HTTP_ALLOW_PRIVATE: list.join(',') }).execute({ command }, makeCtx());
    expect(r.metadata).toMatchObject({ network: 'outbound' });
    expect(r.output).toContain('default via 10.0.2.2 dev tap0');
    expect(r.output).toContain('192.168.7.0/24 via 10.0.2.2 dev tap0');
    expect(r.output).toContain('unreachable 192.168.0.0/16');
    expect(r.output).toContain('unreachable 172.16.0.0/12');
    expect(r.output).not.toContain('unreachable 10.0.0.0/8');
    expect(r.output).toMatch(/GET 192\.168\.7\.5: 192\.168\.7\.5 via 10\.0\.2\.2 dev tap0/);
    expect(r.output).toMatch(/GET 10\.1\.2\.3: 10\.1\.2\.3 via 10\.0\.2\.2 dev tap0/);
    const closed = ['192.168.8.1', '172.16.0.1', '10.0.2.2', ...own];
    for (const address of closed) {
      const line = new RegExp(`GET ${address.replace(/\./g, '\\.')}: (.*)`).exec(r.output)?.[1];
      expect(line, address).toMatch(/^RTNETLINK answers: (No route to host|Permission denied)/);
    }
    for (const address of own)
      expect(r.output).toMatch(new RegExp(`unreachable ${address.replace(/\./g, '\\.')}\\b`));
    expect(r.output).toMatch(/to 10\.0\.2\.0\/24 prohibit/);
  });

  it('cannot remove its fence: it holds no capabilities', async () => {
    const r = await terminal(true).execute(
      { command: 'ip route del unreachable 10.0.0.0/8; ip rule del pref 101; ip route; ip rule' },
      makeCtx(),
    );
    expect(r.output).toContain('Operation not permitted');
    expect(r.output).toContain('unreachable 10.0.0.0/8');
    expect(r.output).toMatch(/to 10\.0\.2\.0\/24 prohibit/);
  });

  it('runs without network, and says so, when slirp4netns is missing', async () => {
    const missing = { networkHelpers: { missing: ['slirp4netns (package slirp4netns)'] } };
    const r = await terminal(true, {}, missing).execute({ command: 'ip -o addr' }, makeCtx());
    expect(r.metadata).toMatchObject({ sandboxed: true, network: 'none' });
    expect(r.output).toContain(
      'Note: this profile may use the network, but slirp4netns (package slirp4netns) is not installed, so the command ran WITHOUT network.',
    );
    expect(r.output).not.toContain('tap0');
    const c = await codeExec(true, missing).execute({ code: 'print("ran")' }, makeCtx());
    expect(c.output).toContain('ran WITHOUT network');
    expect(c.output).toContain('ran\n');
  });

  it('stops slirp4netns with the command: at the end, at a timeout and on abort', async () => {
    const done = await terminal(true).execute({ command: 'true' }, makeCtx());
    expect(done.metadata).toMatchObject({ network: 'outbound' });
    const timedOut = await terminal(true).execute({ command: 'sleep 300', timeout_seconds: 1 }, makeCtx());
    expect(timedOut.output).toContain('Timed out');
    const controller = new AbortController();
    const pending = terminal(true).execute({ command: 'sleep 300' }, makeCtx({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 500);
    expect((await pending).output).toContain('Stopped');
    expect(await eventually(() => orphanedSlirps().length === 0)).toBe(true);
  });
});

function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal)
    .map((a) => a.address);
}
