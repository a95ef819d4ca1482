/**
 * Encrypted backups on real files: a round trip into a fresh vault, refusals of a wrong
 * passphrase or a changed file, and the merge by id.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportVault, importVault, openVault } from './index.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault();
const passphrase = 'correct horse battery staple';

const add = (name: string, value: string) =>
  t.vault.create(
    {
      name,
      type: 'password',
      tags: ['t'],
      fields: [
        { name: 'login', value: `${name}-login`, secret: false },
        { name: 'password', value, secret: true },
      ],
    },
    user,
  );

describe('backups', () => {
  it('round-trip every secret, archived ones included, into another vault with another key', () => {
    const a = add('Alpha', 'alpha-secret-value');
    const b = add('Beta', 'beta-secret-value');
    t.vault.archive(b.id, user);
    const file = join(t.dir, 'backup.json');
    expect(exportVault(t.options(), file, passphrase)).toEqual({ secrets: 2, file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    for (const clear of ['alpha-secret-value', 'Alpha', 'Beta-login']) expect(text).not.toContain(clear);
    expect(JSON.parse(text)).toMatchObject({ format: 'navi-vault-backup', version: 1, kdf: 'scrypt' });
    expect(t.vault.auditLog({ limit: 1 })[0]).toMatchObject({ action: 'export', actor: 'user' });

    const other = t.options({ path: join(t.dir, 'other.db'), masterKey: 'another master key' });
    expect(importVault(other, file, passphrase)).toEqual({ added: 2, updated: 0, skipped: 0 });
    const restored = openVault(other);
    try {
      expect(restored.get(a.id)).toEqual(t.vault.get(a.id));
      expect(restored.reveal(a.id, 'password', agent)).toBe('alpha-secret-value');
      expect(restored.get(b.id, { includeArchived: true }).status).toBe('archived');
      expect(restored.reveal(b.id, 'password', user)).toBe('beta-secret-value');
      const imported = restored.auditLog().find((e) => e.action === 'import');
      expect(imported?.detail).toContain('added 2, updated 0, skipped 0');
    } finally {
      restored.close();
    }
  });

  it('merges by id: absent added, older updated, newer or equal skipped', () => {
    const older = add('Older', 'v1');
    const same = add('Same', 'same');
    const newer = add('Newer', 'n1');
    const first = join(t.dir, 'first.json');
    exportVault(t.options(), first, passphrase);
    const other = t.options({ path: join(t.dir, 'other.db') });
    expect(importVault(other, first, passphrase)).toEqual({ added: 3, updated: 0, skipped: 0 });

    t.vault.update(older.id, { fields: [{ name: 'password', value: 'v2', secret: true }] }, user);
    const fresh = add('Fresh', 'f');
    const second = join(t.dir, 'second.json');
    exportVault(t.options(), second, passphrase);
    const target = openVault(other);
    target.update(
      newer.id,
      { fields: [{ name: 'password', value: 'changed in the other vault', secret: true }] },
      user,
    );
    target.close();

    expect(importVault(other, second, passphrase)).toEqual({ added: 1, updated: 1, skipped: 2 });
    const check = openVault(other);
    try {
      expect(check.reveal(older.id, 'password', user)).toBe('v2');
      expect(check.get(older.id).updated_at).toBe(t.vault.get(older.id).updated_at);
      expect(check.reveal(newer.id, 'password', user)).toBe('changed in the other vault');
      expect(check.get(same.id)).toEqual(t.vault.get(same.id));
      expect(check.reveal(fresh.id, 'password', user)).toBe('f');
    } finally {
      check.close();
    }
    // Importing the same file again changes nothing.
    expect(importVault(other, second, passphrase)).toEqual({ added: 0, updated: 0, skipped: 4 });
  });

  it('refuses a wrong passphrase, a changed file, a file that is no backup, and a short passphrase', () => {
    add('Alpha', 'alpha');
    const file = join(t.dir, 'backup.json');
    exportVault(t.options(), file, passphrase);
    const other = t.options({ path: join(t.dir, 'other.db') });
    const wrong = vaultErrorOf(() => importVault(other, file, 'not the passphrase'));
    expect(wrong.code).toBe('invalid');
    expect(wrong.message).toContain('the passphrase does not open');

    const backup = JSON.parse(readFileSync(file, 'utf8')) as { ciphertext: string };
    const bytes = Buffer.from(backup.ciphertext, 'base64');
    bytes[5] = (bytes[5] ?? 0) ^ 0xff;
    writeFileSync(file, JSON.stringify({ ...backup, ciphertext: bytes.toString('base64') }));
    expect(vaultErrorOf(() => importVault(other, file, passphrase)).message).toContain(
      'or the file was changed',
    );

    writeFileSync(file, '{"format":"something else"}');
    expect(vaultErrorOf(() => importVault(other, file, passphrase)).message).toContain(
      'is not a Navi vault backup',
    );
    writeFileSync(file, 'not json at all');
    expect(vaultErrorOf(() => importVault(other, file, passphrase)).message).toContain('it is not JSON');
    writeFileSync(file, JSON.stringify({ ...backup, params: { N: 2 ** 30, r: 8, p: 1, salt: 'AAAA' } }));
    expect(vaultErrorOf(() => importVault(other, file, passphrase)).message).toContain('out of range');
    expect(vaultErrorOf(() => importVault(other, join(t.dir, 'missing.json'), passphrase)).code).toBe('io');

    expect(vaultErrorOf(() => exportVault(t.options(), join(t.dir, 'b2.json'), 'short')).message).toContain(
      'at least 12 characters',
    );
    expect(
      vaultErrorOf(() => exportVault(t.options(), join(t.dir, 'no', 'such', 'folder', 'b.json'), passphrase))
        .code,
    ).toBe('io');
    const untouched = openVault(other);
    expect(untouched.search()).toEqual([]);
    untouched.close();
  });
});
