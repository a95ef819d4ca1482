import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { needsProgram } from '../../../test/support/requirements.js';
import { parseSshHosts } from '../../machine/ssh/hosts-file.js';
import { SshPool } from '../../machine/ssh/ssh-pool.js';
import {
  keyPair,
  SFTP_SERVER,
  startTestSshServer,
  type TestSshServer,
} from '../../machine/ssh/test-ssh-server.js';
import { testGuard } from '../test-helpers.js';
import { createSshExecTool } from './ssh-exec.js';
import { isAlive, makeCtx } from './test-support.js';

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

const SSH_PASSWORD = 'vault-held-ssh-password';
const VAULT_REF = '{{secret:0b6c6a2e-1f0e-4a8e-9d55-3f2f5f1e8c11.password}}';

describe('SSH hosts file', () => {
  it('refuses secrets written into the file and names the field', () => {
    expect(() => parseSshHosts({ box: { host: 'h', user: 'u', password: 'x' } }, 'hosts.json')).toThrow(
      'hosts.json, host "box": "password" is not accepted — secrets never go in this file.',
    );
    expect(() => parseSshHosts({ box: { host: 'h', user: 'u' } }, 'hosts.json')).toThrow(
      'give "key_path", "password_env" or "password_secret"',
    );
    expect(() =>
      parseSshHosts({ box: { host: 'h', user: 'u', password_secret: 'hunter2-plain' } }, 'hosts.json'),
    ).toThrow('"password_secret" must be a vault reference such as {{secret:<id>.password}}');
    const ref = '{{secret:0b6c6a2e-1f0e-4a8e-9d55-3f2f5f1e8c11.password}}';
    expect(
      parseSshHosts({ box: { host: 'h', user: 'u', password_secret: ref } }, 'f').get('box'),
    ).toMatchObject({ passwordSecret: ref });
    expect(() => parseSshHosts({ box: { host: 'h', user: 'u', key_path: '/k', port: 0 } }, 'f')).toThrow(
      '"port" must be an integer from 1 to 65535',
    );
    const hosts = parseSshHosts({ box: { host: 'h', user: 'u', key_path: '/k', port: 2222 } }, 'f');
    expect(hosts.get('box')).toMatchObject({ host: 'h', port: 2222, user: 'u', keyPath: '/k' });
  });
});

describe.skipIf(!needsProgram(SFTP_SERVER, 'ssh_exec against a loopback SSH server'))('ssh_exec', () => {
  let server: TestSshServer;
  let dir: string;
  let root: string;
  let hostsFile: string;
  const pools: SshPool[] = [];

  beforeAll(async () => {
    server = await startTestSshServer({ password: SSH_PASSWORD });
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'navi-ssh-')));
    root = join(dir, 'root');
    rmSync(root, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(root));
    writeFileSync(join(dir, 'good_key'), server.clientKey, { mode: 0o600 });
    writeFileSync(join(dir, 'wrong_key'), keyPair().private, { mode: 0o600 });
    const down = await closedPort();
    hostsFile = join(dir, 'ssh_hosts.json');
    writeFileSync(
      hostsFile,
      JSON.stringify({
        box: {
          host: '127.0.0.1',
          port: server.port,
          user: 'navi',
          key_path: join(dir, 'good_key'),
          description: 'test box',
        },
        wrongkey: { host: '127.0.0.1', port: server.port, user: 'navi', key_path: join(dir, 'wrong_key') },
        down: { host: '127.0.0.1', port: down, user: 'navi', key_path: join(dir, 'good_key') },
        pinned: {
          host: '127.0.0.1',
          port: server.port,
          user: 'navi',
          key_path: join(dir, 'good_key'),
          host_key_sha256: server.hostKeySha256,
        },
        impostor: {
          host: '127.0.0.1',
          port: server.port,
          user: 'navi',
          key_path: join(dir, 'good_key'),
          host_key_sha256: 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        },
        pw: { host: '127.0.0.1', port: server.port, user: 'navi', password_env: 'NAVI_TEST_SSH_PASSWORD' },
        vaulted: { host: '127.0.0.1', port: server.port, user: 'navi', password_secret: VAULT_REF },
      }),
    );
  });
  afterAll(async () => {
    for (const pool of pools) pool.closeAll();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tool = (
    over: {
      idleMs?: number;
      maxOutputBytes?: number;
      env?: NodeJS.ProcessEnv;
      secret?: (reference: string, purpose: string) => string;
    } = {},
  ) => {
    const pool = new SshPool({
      idleMs: over.idleMs ?? 60_000,
      connectTimeoutMs: 5000,
      env: over.env ?? {},
      ...(over.secret && { secret: over.secret }),
    });
    pools.push(pool);
    return {
      pool,
      ssh: createSshExecTool({
        settings: { SSH_HOSTS_FILE: hostsFile, FS_ALLOWED_PATHS: [root] },
        guard: testGuard({ SSH_HOSTS_FILE: hostsFile, FS_ALLOWED_PATHS: [root] }),
        pool,
        ...(over.maxOutputBytes ? { maxOutputBytes: over.maxOutputBytes } : {}),
      }),
    };
  };

  it('runs a command and reports stdout, stderr and the exit code', async () => {
    const { ssh } = tool();
    const res = await ssh.execute({ host: 'box', command: 'echo hello; echo oops >&2; exit 3' }, makeCtx());
    expect(res.success).toBe(true);
    expect(res.output).toBe('exit code: 3\nstdout:\nhello\n\nstderr:\noops\n');
    expect(res.metadata).toMatchObject({ host: 'box', exit_code: 3, timed_out: false });
  });

  it('lists the configured hosts without any secret', async () => {
    const { ssh } = tool();
    const res = await ssh.execute({ action: 'hosts' }, makeCtx());
    expect(res.output).toContain(`- box: navi@127.0.0.1:${server.port} — test box`);
    expect(res.output).not.toContain('good_key');
  });

  it('keeps one connection per session and host, and closes it when idle', async () => {
    const { ssh, pool } = tool({ idleMs: 300 });
    await ssh.execute({ host: 'box', command: 'true' }, makeCtx({ sessionId: 'a' }));
    await ssh.execute({ host: 'box', command: 'true' }, makeCtx({ sessionId: 'a' }));
    expect(pool.size).toBe(1);
    await ssh.execute({ host: 'box', command: 'true' }, makeCtx({ sessionId: 'b' }));
    expect(pool.size).toBe(2);
    await vi.waitFor(() => expect(pool.size).toBe(0), { timeout: 5000, interval: 50 });
  });

  it('caps the output', async () => {
    const { ssh } = tool({ maxOutputBytes: 100 });
    const res = await ssh.execute({ host: 'box', command: 'head -c 5000 /dev/zero | tr "\\0" x' }, makeCtx());
    expect(res.output).toContain(`${'x'.repeat(100)}\n[… 4900 more bytes not shown]`);
  });

  it('stops a command at the timeout, closes the connection and leaves no remote process', async () => {
    const { ssh, pool } = tool();
    const before = server.pids.length;
    const res = await ssh.execute(
      { host: 'box', command: 'sleep 30 & sleep 30', timeout_seconds: 1 },
      makeCtx(),
    );
    expect(res.success).toBe(false);
    expect(res.output).toContain('Timed out after 1 s on "box"; the channel and the connection were closed.');
    expect(res.metadata).toMatchObject({ timed_out: true, exit_code: null });
    expect(pool.has('sess1', 'box')).toBe(false);
    const pid = server.pids[before] as number;
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 5000, interval: 50 });
  });

  it('says clearly when the host is down', async () => {
    const { ssh } = tool();
    const res = await ssh.execute({ host: 'down', command: 'true' }, makeCtx());
    expect(res.success).toBe(false);
    expect(res.output).toMatch(/^Cannot connect to "down" \(navi@127\.0\.0\.1:\d+\): connection refused/);
  });

  it('says clearly when the key is refused', async () => {
    const { ssh } = tool();
    const res = await ssh.execute({ host: 'wrongkey', command: 'true' }, makeCtx());
    expect(res.output).toBe(
      `Cannot connect to "wrongkey" (navi@127.0.0.1:${server.port}): authentication failed — the server refused the key ${join(dir, 'wrong_key')}.`,
    );
  });

  it('takes a password from the environment and never prints it', async () => {
    const secret = 'hunter2-very-secret';
    const { ssh } = tool({ env: { NAVI_TEST_SSH_PASSWORD: secret } });
    const res = await ssh.execute({ host: 'pw', command: 'true' }, makeCtx());
    expect(res.output).toContain('authentication failed — the server refused the password.');
    expect(JSON.stringify(res)).not.toContain(secret);
    const unset = await tool().ssh.execute({ host: 'pw', command: 'true' }, makeCtx());
    expect(unset.output).toBe('Host "pw": environment variable NAVI_TEST_SSH_PASSWORD is not set.');
  });

  it('logs in with a password from the vault, read only when connecting', async () => {
    const asked: string[] = [];
    const { ssh } = tool({
      secret: (reference, purpose) => {
        asked.push(`${reference} for ${purpose}`);
        return SSH_PASSWORD;
      },
    });
    const res = await ssh.execute({ host: 'vaulted', command: 'echo in' }, makeCtx());
    expect(res.output).toContain('in');
    expect(res.success).toBe(true);
    expect(asked).toEqual([`${VAULT_REF} for ssh host vaulted password`]);
    const refused = await tool({
      secret: () => {
        throw new Error('the vault is locked: set GNEXUS_MASTER_KEY');
      },
    }).ssh.execute({ host: 'vaulted', command: 'true' }, makeCtx());
    expect(refused.output).toBe(
      `Host "vaulted": its password ${VAULT_REF} cannot be read: the vault is locked: set GNEXUS_MASTER_KEY`,
    );
    const noVault = await tool().ssh.execute({ host: 'vaulted', command: 'true' }, makeCtx());
    expect(noVault.output).toBe('Host "vaulted": its password is in the vault, and this Navi has no vault.');
  });

  it('checks the host key when the hosts file pins one', async () => {
    const { ssh } = tool();
    const pinned = await ssh.execute({ host: 'pinned', command: 'echo pinned' }, makeCtx());
    expect(pinned.output).toContain('stdout:\npinned\n');
    const impostor = await ssh.execute({ host: 'impostor', command: 'echo no' }, makeCtx());
    expect(impostor.output).toBe(
      `Cannot connect to "impostor" (navi@127.0.0.1:${server.port}): the server's host key does not match host_key_sha256 — refusing to talk to it.`,
    );
    expect(server.commands).not.toContain('echo no');
  });

  it('refuses unknown hosts and names the configured ones', async () => {
    const res = await tool().ssh.execute({ host: 'nope', command: 'true' }, makeCtx());
    expect(res.output).toBe(
      'Unknown SSH host "nope". Configured hosts: box, wrongkey, down, pinned, impostor, pw, vaulted.',
    );
  });

  it('uploads and downloads files over SFTP', async () => {
    const { ssh } = tool();
    const local = join(root, 'up.txt');
    writeFileSync(local, 'payload\n');
    const remote = join(dir, 'remote.txt');
    const up = await ssh.execute(
      { action: 'upload', host: 'box', local_path: local, remote_path: remote },
      makeCtx(),
    );
    expect(up.output).toBe(`Uploaded ${local} (8 bytes) to box:${remote}.`);
    expect(readFileSync(remote, 'utf8')).toBe('payload\n');
    writeFileSync(remote, 'changed remotely\n');
    const back = join(root, 'down.txt');
    const down = await ssh.execute(
      { action: 'download', host: 'box', local_path: back, remote_path: remote },
      makeCtx(),
    );
    expect(down.output).toBe(`Downloaded box:${remote} (17 bytes) to ${back}.`);
    expect(readFileSync(back, 'utf8')).toBe('changed remotely\n');
  });

  it('keeps local paths of transfers inside the allowed folders', async () => {
    const { ssh } = tool();
    const up = await ssh.execute(
      { action: 'upload', host: 'box', local_path: '../../etc/passwd', remote_path: '/tmp/x' },
      makeCtx(),
    );
    expect(up.output).toContain('which is outside the allowed folders');
    expect(up.output).toContain(`(${root})`);
    const down = await ssh.execute(
      { action: 'download', host: 'box', local_path: '/etc/navi-evil', remote_path: hostsFile },
      makeCtx(),
    );
    expect(down.output).toContain(
      '"/etc/navi-evil" resolves to /etc/navi-evil, which is outside the allowed folders',
    );
    const missing = await ssh.execute(
      { action: 'upload', host: 'box', local_path: join(root, 'x') },
      makeCtx(),
    );
    expect(missing.output).toBe('Action "upload" needs both "local_path" and "remote_path".');
  });
});
