/**
 * The named SSH hosts of SSH_HOSTS_FILE. The file holds where to connect and *where* the
 * secret is (a key file, or the name of an environment variable), never the secret itself, so
 * the model can only pick a host by name and no credential ever appears in a tool's arguments.
 *
 * Format (JSON): `{ "<name>": { host, port?, user, key_path?, key_passphrase_env?,
 * key_passphrase_secret?, password_env?, password_secret?, host_key_sha256?, description? } }`
 * — see docs/machine-tools.md. The `_secret` fields name a vault secret
 * (`{{secret:<id>.<field>}}`), read when Navi connects.
 */
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseSecretReference } from '../../protocol/vault.js';

export interface SshHostConfig {
  name: string;
  host: string;
  port: number;
  user: string;
  /** Private key file (`~` expanded). */
  keyPath?: string;
  /** Environment variable holding the key's passphrase. */
  keyPassphraseEnv?: string;
  /** Environment variable holding the password. */
  passwordEnv?: string;
  /** Vault reference (`{{secret:<id>.<field>}}`) to the password. */
  passwordSecret?: string;
  /** Vault reference to the key's passphrase. */
  keyPassphraseSecret?: string;
  /** `SHA256:…` fingerprint (as `ssh-keygen -l` prints it) the server's host key must have. */
  hostKeySha256?: string;
  description?: string;
}

export class SshHostsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshHostsError';
  }
}

const KNOWN_FIELDS = new Set([
  'host',
  'port',
  'user',
  'key_path',
  'key_passphrase_env',
  'password_env',
  'password_secret',
  'key_passphrase_secret',
  'host_key_sha256',
  'description',
]);
const SECRET_FIELDS = ['password', 'passphrase', 'private_key', 'key'];

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** Validates the parsed file; throws SshHostsError naming the file, the host and the field. */
export function parseSshHosts(raw: unknown, file: string): Map<string, SshHostConfig> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new SshHostsError(`${file} must hold a JSON object mapping host names to settings.`);
  const hosts = new Map<string, SshHostConfig>();
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const where = `${file}, host "${name}"`;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw new SshHostsError(`${where}: names use letters, digits, ".", "_" and "-" only.`);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new SshHostsError(`${where}: expected an object.`);
    const entry = value as Record<string, unknown>;
    for (const field of SECRET_FIELDS) {
      if (field in entry) {
        throw new SshHostsError(
          `${where}: "${field}" is not accepted — secrets never go in this file. ` +
            'Use key_path for a key file, password_env / key_passphrase_env to name an environment variable, or password_secret / key_passphrase_secret to name a vault secret.',
        );
      }
    }
    for (const field of Object.keys(entry))
      if (!KNOWN_FIELDS.has(field)) throw new SshHostsError(`${where}: unknown field "${field}".`);
    const str = (field: string): string | undefined => {
      const v = entry[field];
      if (v === undefined) return undefined;
      if (typeof v !== 'string' || v.trim() === '')
        throw new SshHostsError(`${where}: "${field}" must be a non-empty string.`);
      return v.trim();
    };
    const reference = (field: string): string | undefined => {
      const v = str(field);
      if (v !== undefined && !parseSecretReference(v))
        throw new SshHostsError(
          `${where}: "${field}" must be a vault reference such as {{secret:<id>.password}} (copy it from the Vault page or search_secrets), not ${JSON.stringify(v.slice(0, 12))}….`,
        );
      return v;
    };
    const host = str('host');
    const user = str('user');
    if (!host) throw new SshHostsError(`${where}: "host" is required.`);
    if (!user) throw new SshHostsError(`${where}: "user" is required.`);
    const port = entry.port ?? 22;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new SshHostsError(`${where}: "port" must be an integer from 1 to 65535.`);
    const keyPath = str('key_path');
    const passwordEnv = str('password_env');
    const passwordSecret = reference('password_secret');
    if (!keyPath && !passwordEnv && !passwordSecret)
      throw new SshHostsError(
        `${where}: give "key_path", "password_env" or "password_secret" (how to authenticate).`,
      );
    const keyPassphraseEnv = str('key_passphrase_env');
    const keyPassphraseSecret = reference('key_passphrase_secret');
    const hostKeySha256 = str('host_key_sha256');
    const description = str('description');
    hosts.set(name, {
      name,
      host,
      port,
      user,
      ...(keyPath ? { keyPath: resolve(expandHome(keyPath)) } : {}),
      ...(keyPassphraseEnv ? { keyPassphraseEnv } : {}),
      ...(passwordEnv ? { passwordEnv } : {}),
      ...(passwordSecret ? { passwordSecret } : {}),
      ...(keyPassphraseSecret ? { keyPassphraseSecret } : {}),
      ...(hostKeySha256 ? { hostKeySha256 } : {}),
      ...(description ? { description } : {}),
    });
  }
  return hosts;
}

/**
 * One SSH_HOSTS_FILE, read again when it changes (edits apply without a restart). terminal and
 * code_exec ask for its key files on every sandboxed call, so the last parse is kept while the
 * file's size and modification time stay the same: an unchanged file costs one stat. One
 * instance per Navi, made by the composition root and shared by the tools that read the file.
 */
export class SshHostsFile {
  private last: { mtimeMs: number; size: number; hosts: Map<string, SshHostConfig> } | undefined;

  constructor(readonly file: string) {}

  /** The hosts by name; throws `SshHostsError` saying what is wrong with a missing or bad file. */
  async load(): Promise<Map<string, SshHostConfig>> {
    let text: string;
    let version: { mtimeMs: number; size: number };
    try {
      version = await stat(this.file);
      const cached = this.last;
      if (cached && cached.mtimeMs === version.mtimeMs && cached.size === version.size) {
        return new Map(cached.hosts);
      }
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new SshHostsError(
          `No SSH hosts are configured: ${resolve(this.file)} does not exist (SSH_HOSTS_FILE). ` +
            'Ask the user to add the host there.',
        );
      }
      throw new SshHostsError(`Cannot read ${this.file}: ${(err as Error).message}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new SshHostsError(`${this.file} is not valid JSON: ${(err as Error).message}`);
    }
    const hosts = parseSshHosts(raw, this.file);
    this.last = { mtimeMs: version.mtimeMs, size: version.size, hosts };
    return new Map(hosts);
  }

  /**
   * Key files named in the file, for hiding from sandboxed programs. Never throws: a missing
   * or broken hosts file hides nothing more than the file itself.
   */
  async keyPaths(): Promise<string[]> {
    try {
      const hosts = await this.load();
      return [...hosts.values()].flatMap((h) => (h.keyPath ? [h.keyPath] : []));
    } catch {
      return [];
    }
  }
}
