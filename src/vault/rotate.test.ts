/**
 * Key rotation on real files: the old key stops working, the new one opens the same values,
 * and a rotation cut short at any step leaves a vault that opens.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { openVault, rotateVaultKey, type Vault, type VaultOptions } from './index.js';
import { newMasterKey } from './key-source.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault({ open: false });
let id: string;

function withVault<T>(overrides: Partial<VaultOptions>, fn: (v: Vault) => T): T {
  const vault = openVault(t.options(overrides));
  try {
    return fn(vault);
  } finally {
    vault.close();
  }
}

const seed = (v: Vault) =>
  v.create(
    {
      name: 'Server',
      type: 'ssh_key',
      fields: [
        { name: 'host', value: 'example.org', secret: false },
        { name: 'private_key', value: '-----BEGIN KEY-----\nabc\n', secret: true },
      ],
    },
    user,
  ).id;

describe('rotating the key file', () => {
  beforeEach(() => {
    id = withVault({}, seed);
  });

  it('replaces the key file; the old key locks, the new one opens the same values', () => {
    const oldKey = readFileSync(t.options().keyFile, 'utf8').trim();
    const result = rotateVaultKey(t.options());
    expect(result).toMatchObject({ keySource: 'file', keyFile: t.options().keyFile });
    const newKey = readFileSync(t.options().keyFile, 'utf8').trim();
    expect(newKey).not.toBe(oldKey);
    expect(Buffer.from(newKey, 'base64')).toHaveLength(32);
    expect(existsSync(`${t.options().keyFile}.new`)).toBe(false);
    expect(withVault({}, (v) => v.reveal(id, 'private_key', agent))).toBe('-----BEGIN KEY-----\nabc\n');
    expect(withVault({ masterKey: newKey }, (v) => v.reveal(id, 'private_key', agent))).toBe(
      '-----BEGIN KEY-----\nabc\n',
    );
    expect(withVault({ masterKey: oldKey }, (v) => v.status().state)).toBe('locked');
    expect(withVault({}, (v) => v.auditLog({ limit: 3 }).map((e) => e.action))).toContain('rotate_key');
  });

  it('finishes a rotation that stopped after the commit, through <keyfile>.new', () => {
    const oldKey = readFileSync(t.options().keyFile, 'utf8');
    rotateVaultKey(t.options());
    // The state a crash between the commit and the rename leaves: the new key waiting in .new.
    renameSync(t.options().keyFile, `${t.options().keyFile}.new`);
    writeFileSync(t.options().keyFile, oldKey, { mode: 0o600 });
    expect(withVault({}, (v) => v.reveal(id, 'private_key', agent))).toContain('abc');
    expect(existsSync(`${t.options().keyFile}.new`)).toBe(false);
    expect(withVault({}, (v) => v.status().state)).toBe('unlocked');
  });

  it('keeps the old key after a rotation that stopped before the commit', () => {
    // The state such a crash leaves: a .new that opens nothing beside the working key file.
    writeFileSync(`${t.options().keyFile}.new`, newMasterKey(), { mode: 0o600 });
    expect(withVault({}, (v) => v.reveal(id, 'private_key', agent))).toContain('abc');
    // The next rotation replaces the stray file and works.
    rotateVaultKey(t.options());
    expect(withVault({}, (v) => v.reveal(id, 'private_key', agent))).toContain('abc');
  });

  it('takes a key given to it, and refuses the key in use', () => {
    rotateVaultKey(t.options(), 'a key chosen by the person');
    expect(readFileSync(t.options().keyFile, 'utf8').trim()).toBe('a key chosen by the person');
    expect(vaultErrorOf(() => rotateVaultKey(t.options(), 'a key chosen by the person')).code).toBe(
      'invalid',
    );
  });
});

describe('rotating GNEXUS_MASTER_KEY', () => {
  it('needs the new key, then only the new key opens the vault', () => {
    id = withVault({ masterKey: 'old master key' }, seed);
    const options = t.options({ masterKey: 'old master key' });
    let message = '';
    try {
      rotateVaultKey(options);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('GNEXUS_NEW_MASTER_KEY');
    const result = rotateVaultKey(options, 'new master key');
    expect(result.keySource).toBe('env');
    expect(result.nextStep).toContain('set GNEXUS_MASTER_KEY to the new key');
    expect(withVault({ masterKey: 'old master key' }, (v) => v.status().state)).toBe('locked');
    expect(withVault({ masterKey: 'new master key' }, (v) => v.reveal(id, 'private_key', agent))).toContain(
      'abc',
    );
    expect(existsSync(t.options().keyFile)).toBe(false);
  });

  it('refuses a locked vault', () => {
    withVault({ masterKey: 'right' }, seed);
    expect(vaultErrorOf(() => rotateVaultKey(t.options({ masterKey: 'wrong' }), 'next')).code).toBe('locked');
  });
});
