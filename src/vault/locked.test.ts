/**
 * Where the key comes from and what happens without the right one: the vault opens locked,
 * says why and how to unlock it, and refuses everything else.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { openVault, type Vault, vaultOptions } from './index.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault({ open: false });
const open: Vault[] = [];
const opened = (overrides = {}) => {
  const v = openVault(t.options(overrides));
  open.push(v);
  return v;
};

// Registered after useTempVault's hook, so it runs before it: the vaults close before their folder goes.
afterEach(() => {
  for (const v of open.splice(0)) v.close();
});

function lockedMessage(vault: Vault): string {
  const calls: (() => unknown)[] = [
    () => vault.search(),
    () => vault.get('00000000-0000-4000-8000-000000000000'),
    () => vault.reveal('00000000-0000-4000-8000-000000000000', 'x', agent),
    () => vault.resolve('00000000-0000-4000-8000-000000000000', 'x', agent),
    () => vault.create({ name: 'x', type: 'note', fields: [{ name: 'n', value: 'v', secret: true }] }, user),
    () => vault.update('00000000-0000-4000-8000-000000000000', { name: 'y' }, user),
    () => vault.setStatus('00000000-0000-4000-8000-000000000000', 'outdated', user),
    () => vault.archive('00000000-0000-4000-8000-000000000000', user),
    () => vault.auditLog(),
  ];
  const messages = calls.map((call) => {
    const err = vaultErrorOf(call);
    expect(err.code).toBe('locked');
    return err.message;
  });
  expect(new Set(messages).size).toBe(1);
  return messages[0] ?? '';
}

function withSecret(vault: Vault): string {
  return vault.create(
    { name: 'K', type: 'api_token', fields: [{ name: 'token', value: 'tok-123', secret: true }] },
    user,
  ).id;
}

describe('the key file', () => {
  it('is created for a new vault: 32 random bytes in base64, mode 0600, folder made', () => {
    const keyFile = join(t.dir, 'keys', 'deep', 'vault.key');
    const vault = opened({ keyFile });
    expect(vault.status()).toMatchObject({ state: 'unlocked', keySource: 'file' });
    expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  });

  it('is narrowed to 0600 when it was readable by others, and still works', () => {
    const id = withSecret(opened());
    open.pop()?.close();
    chmodSync(t.options().keyFile, 0o644);
    const vault = opened();
    expect(vault.reveal(id, 'token', agent)).toBe('tok-123');
    expect(statSync(t.options().keyFile).mode & 0o777).toBe(0o600);
  });

  it('is not created when GNEXUS_MASTER_KEY is set', () => {
    const vault = opened({ masterKey: 'my own master key' });
    expect(vault.status()).toMatchObject({ state: 'unlocked', keySource: 'env' });
    expect(() => statSync(t.options().keyFile)).toThrow();
  });
});

describe('a locked vault', () => {
  it('with a wrong GNEXUS_MASTER_KEY says so and refuses everything', () => {
    const id = withSecret(opened({ masterKey: 'the right key' }));
    open.pop()?.close();
    const vault = opened({ masterKey: 'a wrong key' });
    const state = vault.status();
    expect(state.state).toBe('locked');
    if (state.state !== 'locked') return;
    expect(state.reason).toContain('GNEXUS_MASTER_KEY does not unlock the vault');
    expect(state.howToUnlock).toContain('set GNEXUS_MASTER_KEY to the key the vault was created with');
    expect(state.howToUnlock).toContain('then restart Navi');
    expect(lockedMessage(vault)).toContain('the vault is locked: GNEXUS_MASTER_KEY does not unlock');
    expect(opened({ masterKey: ' the right key\n' }).reveal(id, 'token', agent)).toBe('tok-123');
  });

  it('with the key file of another vault names the file and what to do', () => {
    withSecret(opened());
    open.pop()?.close();
    writeFileSync(t.options().keyFile, Buffer.alloc(32, 7).toString('base64'));
    const state = opened().status();
    expect(state).toMatchObject({
      state: 'locked',
      reason: expect.stringContaining(`the key file ${t.options().keyFile} does not unlock the vault`),
      howToUnlock: expect.stringContaining(`restore the key file ${t.options().keyFile} (mode 0600)`),
    });
  });

  it('when the key file of an existing vault is gone does not make a new one', () => {
    withSecret(opened());
    open.pop()?.close();
    rmSync(t.options().keyFile);
    const vault = opened();
    expect(vault.status()).toMatchObject({
      state: 'locked',
      reason: expect.stringContaining('its key file'),
      howToUnlock: expect.stringContaining('GNEXUS_MASTER_KEY'),
    });
    expect(() => statSync(t.options().keyFile)).toThrow();
    lockedMessage(vault);
  });

  it('when the key file cannot be created, or is a folder', () => {
    const blocker = join(t.dir, 'file-not-folder');
    writeFileSync(blocker, 'x');
    const cannot = opened({ keyFile: join(blocker, 'vault.key') });
    expect(cannot.status()).toMatchObject({
      state: 'locked',
      reason: expect.stringContaining('cannot create the key file'),
      howToUnlock: expect.stringContaining('GNEXUS_KEY_FILE'),
    });
    mkdirSync(join(t.dir, 'a-folder'));
    const folder = opened({ keyFile: join(t.dir, 'a-folder'), path: join(t.dir, 'other.db') });
    expect(folder.status()).toMatchObject({
      state: 'locked',
      reason: expect.stringContaining('is not a file'),
    });
  });

  it('when the database is not a database or cannot be opened', () => {
    writeFileSync(t.options().path, 'this is not SQLite, just text that is long enough '.repeat(100));
    const vault = opened();
    expect(vault.status()).toMatchObject({
      state: 'locked',
      reason: expect.stringContaining(`cannot open the vault database ${t.options().path}`),
      howToUnlock: expect.stringContaining('navi vault import'),
    });
    lockedMessage(vault);
    const underFile = opened({ path: join(t.options().path, 'x.db') });
    expect(underFile.status().state).toBe('locked');
  });
});

describe('vaultOptions', () => {
  it('resolves the settings against the working folder', () => {
    const options = vaultOptions(testSettings({ GNEXUS_MASTER_KEY: 'k' }), '/srv/navi');
    expect(options).toEqual({
      path: '/srv/navi/vault.db',
      keyFile: '/srv/navi/vault.key',
      masterKey: 'k',
      auditLog: '/srv/navi/vault-audit.jsonl',
    });
    expect(vaultOptions(testSettings({ GNEXUS_VAULT_PATH: '/abs/v.db' }), '/srv').path).toBe('/abs/v.db');
  });
});
