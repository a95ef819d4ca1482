/**
 * A real SSH server on loopback for the ssh_exec tests: ssh2's own protocol implementation,
 * running commands with `sh -c` in a process group, and serving SFTP by handing the channel to
 * OpenSSH's `sftp-server` (the same program sshd runs for the sftp subsystem).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2, { type Connection, type ParsedKey } from 'ssh2';
import { killGroup as killGroupOf } from '../sandbox/process-group.js';

const { Server, utils } = ssh2;

/**
 * An ed25519 key pair ssh2 can read back. Its generator strips leading zero bytes from the
 * public key, so about one pair in 256 does not parse (mscdex/ssh2#1390, #1513); draw again.
 */
export function keyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error)) {
      return pair;
    }
  }
}

export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

export interface TestSshServer {
  port: number;
  /** Private key (OpenSSH format) the server accepts. */
  clientKey: string;
  /** The server's host key fingerprint, as `ssh-keygen -l` prints it. */
  hostKeySha256: string;
  /** Pids of every command started, for leak checks. */
  pids: number[];
  /** Commands received, as the server saw them. */
  commands: string[];
  close(): Promise<void>;
}

function killGroup(child: ChildProcess): void {
  if (child.exitCode === null) killGroupOf(child.pid, 'SIGKILL');
}

/** `password`: also accept password authentication with exactly this password. */
export async function startTestSshServer(options: { password?: string } = {}): Promise<TestSshServer> {
  const hostKey = keyPair();
  const clientPair = keyPair();
  const allowed = utils.parseKey(clientPair.public) as ParsedKey;
  const allowedBlob = allowed.getPublicSSH();
  const pids: number[] = [];
  const commands: string[] = [];
  const connections = new Set<Connection>();
  const children = new Set<ChildProcess>();

  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    connections.add(client);
    client.on('close', () => connections.delete(client));
    client.on('error', () => {});
    client.on('authentication', (ctx) => {
      if (ctx.method === 'password' && options.password !== undefined) {
        const given = Buffer.from(ctx.password);
        const expected = Buffer.from(options.password);
        return given.length === expected.length && timingSafeEqual(given, expected)
          ? ctx.accept()
          : ctx.reject(['publickey', 'password']);
      }
      if (ctx.method !== 'publickey')
        return ctx.reject(options.password ? ['publickey', 'password'] : ['publickey']);
      const blob = ctx.key.data;
      if (
        ctx.key.algo !== allowed.type ||
        blob.length !== allowedBlob.length ||
        !timingSafeEqual(blob, allowedBlob)
      )
        return ctx.reject(['publickey']);
      if (ctx.signature && ctx.blob) {
        if (allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
      }
      return ctx.accept();
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        session.on('exec', (acceptExec, _reject, info) => {
          const channel = acceptExec();
          commands.push(info.command);
          const child = spawn('sh', ['-c', info.command], {
            detached: true,
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          children.add(child);
          if (child.pid) pids.push(child.pid);
          // end: false — the exit status must be sent before the channel is closed.
          child.stdout?.pipe(channel, { end: false });
          child.stderr?.pipe(channel.stderr, { end: false });
          channel.on('close', () => killGroup(child));
          client.on('close', () => killGroup(child));
          child.on('close', (code) => {
            children.delete(child);
            channel.exit(code ?? 255);
            channel.end();
          });
        });
        session.on('subsystem', (acceptSub, reject, info) => {
          if (info.name !== 'sftp') return reject();
          const channel = acceptSub();
          const child = spawn(SFTP_SERVER, ['-e'], { stdio: ['pipe', 'pipe', 'ignore'] });
          children.add(child);
          channel.pipe(child.stdin as NodeJS.WritableStream);
          child.stdout?.pipe(channel);
          channel.on('close', () => child.kill('SIGKILL'));
          client.on('close', () => child.kill('SIGKILL'));
          child.on('close', () => {
            children.delete(child);
            channel.end();
          });
        });
      });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    clientKey: clientPair.private,
    hostKeySha256: `SHA256:${createHash('sha256')
      .update((utils.parseKey(hostKey.public) as ParsedKey).getPublicSSH())
      .digest('base64')
      .replace(/=+$/, '')}`,
    pids,
    commands,
    async close() {
      for (const child of children) killGroup(child);
      for (const c of connections) c.end();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
