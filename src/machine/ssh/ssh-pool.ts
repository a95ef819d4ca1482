/**
 * SSH connections kept open between calls, one per (session, host), closed after a quiet
 * period. A session never reuses another session's connection, and a connection whose host
 * entry changed in SSH_HOSTS_FILE is replaced rather than reused.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Client, ConnectConfig } from 'ssh2';
import type { SshHostConfig } from './hosts-file.js';

export class SshConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshConnectError';
  }
}

interface Entry {
  client: Client;
  signature: string;
  busy: number;
  timer?: NodeJS.Timeout;
}

export interface SshPoolOptions {
  idleMs?: number;
  connectTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Reads the vault secret a host's `password_secret` / `key_passphrase_secret` names (a
   * `{{secret:<id>.<field>}}` reference) and registers it for masking; throws saying why not.
   */
  secret?: (reference: string, purpose: string) => string;
}

export interface SshLease {
  client: Client;
  /** Marks the call finished; the idle clock starts again. */
  release(): void;
  /** Closes this connection (after a timeout or a broken channel). */
  discard(): void;
}

function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

export class SshPool {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  readonly idleMs: number;
  private readonly connectTimeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly readSecret: SshPoolOptions['secret'];

  constructor(options: SshPoolOptions = {}) {
    this.readSecret = options.secret;
    this.idleMs = options.idleMs ?? 10 * 60 * 1000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    this.env = options.env ?? process.env;
  }

  /** Number of open connections (tests, diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  has(sessionId: string, hostName: string): boolean {
    return this.entries.has(`${sessionId}\0${hostName}`);
  }

  async acquire(sessionId: string, host: SshHostConfig, signal: AbortSignal): Promise<SshLease> {
    const key = `${sessionId}\0${host.name}`;
    const signature = JSON.stringify(host);
    let entry = this.entries.get(key);
    if (entry && entry.signature !== signature) {
      this.close(key);
      entry = undefined;
    }
    if (!entry) {
      let starting = this.pending.get(key);
      if (!starting) {
        starting = this.connect(key, host, signature, signal).finally(() => this.pending.delete(key));
        this.pending.set(key, starting);
      }
      entry = await starting;
    }
    const live = entry;
    live.busy++;
    if (live.timer) clearTimeout(live.timer);
    let released = false;
    return {
      client: live.client,
      release: () => {
        if (released) return;
        released = true;
        live.busy--;
        this.arm(key, live);
      },
      discard: () => {
        released = true;
        this.close(key);
      },
    };
  }

  /** Closes every connection of a session (session deleted). */
  closeSession(sessionId: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${sessionId}\0`)) this.close(key);
  }

  closeAll(): void {
    for (const key of [...this.entries.keys()]) this.close(key);
  }

  private arm(key: string, entry: Entry): void {
    if (entry.busy > 0 || this.entries.get(key) !== entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.close(key), this.idleMs);
    entry.timer.unref();
  }

  private close(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (entry.timer) clearTimeout(entry.timer);
    entry.client.end();
  }

  private secret(host: SshHostConfig, reference: string, what: string): string {
    if (!this.readSecret)
      throw new SshConnectError(
        `Host "${host.name}": its ${what} is in the vault, and this Navi has no vault.`,
      );
    try {
      return this.readSecret(reference, `ssh host ${host.name} ${what}`);
    } catch (err) {
      throw new SshConnectError(
        `Host "${host.name}": its ${what} ${reference} cannot be read: ${(err as Error).message}`,
      );
    }
  }

  private async connectConfig(host: SshHostConfig): Promise<ConnectConfig> {
    const config: ConnectConfig = {
      host: host.host,
      port: host.port,
      username: host.user,
      readyTimeout: this.connectTimeoutMs,
      keepaliveInterval: 30_000,
    };
    if (host.keyPath) {
      try {
        config.privateKey = await readFile(host.keyPath);
      } catch (err) {
        throw new SshConnectError(
          `Host "${host.name}": cannot read its key file ${host.keyPath} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
        );
      }
      if (host.keyPassphraseSecret)
        config.passphrase = this.secret(host, host.keyPassphraseSecret, 'key passphrase');
      else if (host.keyPassphraseEnv) {
        const passphrase = this.env[host.keyPassphraseEnv];
        if (!passphrase)
          throw new SshConnectError(
            `Host "${host.name}": environment variable ${host.keyPassphraseEnv} is not set.`,
          );
        config.passphrase = passphrase;
      }
    }
    if (host.passwordSecret) config.password = this.secret(host, host.passwordSecret, 'password');
    else if (host.passwordEnv) {
      const password = this.env[host.passwordEnv];
      if (!password)
        throw new SshConnectError(
          `Host "${host.name}": environment variable ${host.passwordEnv} is not set.`,
        );
      config.password = password;
    }
    const expected = host.hostKeySha256;
    if (expected) config.hostVerifier = (key: Buffer) => fingerprint(key) === expected;
    return config;
  }

  private async connect(
    key: string,
    host: SshHostConfig,
    signature: string,
    signal: AbortSignal,
  ): Promise<Entry> {
    const config = await this.connectConfig(host);
    // Loaded on the first connection (a few MB with its crypto), not by every Navi at start.
    // ssh2 is CommonJS and Node's ESM loader sees no named exports in it: go through the default.
    const { default: ssh2 } = await import('ssh2');
    const client = new ssh2.Client();
    const target = `${host.user}@${host.host}:${host.port}`;
    await new Promise<void>((done, reject) => {
      const onAbort = () => {
        client.end();
        reject(new SshConnectError(`Connecting to "${host.name}" (${target}) was cancelled.`));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      client.once('ready', () => {
        signal.removeEventListener('abort', onAbort);
        done();
      });
      client.once('error', (err: Error & { level?: string; code?: string }) => {
        signal.removeEventListener('abort', onAbort);
        client.end();
        reject(new SshConnectError(describeConnectError(host, target, err)));
      });
      try {
        client.connect(config);
      } catch (err) {
        reject(new SshConnectError(`Host "${host.name}": ${(err as Error).message}`));
      }
    });
    const entry: Entry = { client, signature, busy: 0 };
    this.entries.set(key, entry);
    // A connection the server drops leaves the pool at once.
    client.on('close', () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      if (entry.timer) clearTimeout(entry.timer);
    });
    client.on('error', () => {});
    return entry;
  }
}

function describeConnectError(
  host: SshHostConfig,
  target: string,
  err: Error & { level?: string; code?: string },
): string {
  const prefix = `Cannot connect to "${host.name}" (${target})`;
  if (err.level === 'client-authentication')
    return `${prefix}: authentication failed — the server refused ${host.keyPath ? `the key ${host.keyPath}` : 'the password'}.`;
  if (err.code === 'ECONNREFUSED')
    return `${prefix}: connection refused (is the SSH server running on that port?).`;
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return `${prefix}: the host name does not resolve.`;
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH') return `${prefix}: the host is unreachable.`;
  if (/Timed out while waiting for handshake/i.test(err.message))
    return `${prefix}: no SSH handshake in time (host down or not an SSH server).`;
  if (/host key|verification failed/i.test(err.message))
    return `${prefix}: the server's host key does not match host_key_sha256 — refusing to talk to it.`;
  return `${prefix}: ${err.message}`;
}
