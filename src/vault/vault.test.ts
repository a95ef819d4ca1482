/**
 * The vault core on real files: values round-trip, never reach the database file in clear, and
 * a changed or moved ciphertext is caught.
 */
import { readFileSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MASK, SECRET_TYPES } from './index.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault();

describe('vault round trip', () => {
  it('stores every secret type with secret and plain fields, masked until revealed', () => {
    expect(t.vault.status()).toMatchObject({ state: 'unlocked', keySource: 'file', path: t.options().path });
    for (const type of SECRET_TYPES) {
      const value = `s3cr3t-${type}-ünïcode-✓`;
      const created = t.vault.create(
        {
          name: `My ${type}`,
          type,
          tags: ['work'],
          fields: [
            { name: 'username', value: `me-${type}`, secret: false },
            { name: 'value', value, secret: true },
          ],
        },
        user,
      );
      expect(created.fields).toEqual([
        { name: 'username', secret: false, value: `me-${type}` },
        { name: 'value', secret: true, value: MASK, reference: `{{secret:${created.id}.value}}` },
      ]);
      expect(JSON.stringify(created)).not.toContain(value);
      expect(t.vault.get(created.id)).toEqual(created);
      expect(t.vault.reveal(created.id, 'value', agent)).toBe(value);
      expect(t.vault.resolve(created.id, 'value', agent)).toEqual({ value, label: `My ${type}.value` });
      expect(t.vault.reveal(created.id, 'username', agent)).toBe(`me-${type}`);
    }
    expect(
      t.vault
        .search()
        .map((r) => r.type)
        .sort(),
    ).toEqual([...SECRET_TYPES].sort());
  });

  it('keeps the database file, its WAL and its mode free of values and of the master key', () => {
    const value = 'ghp_VerySecretTokenValue1234567890';
    t.vault.create(
      { name: 'GitHub', type: 'api_token', fields: [{ name: 'token', value, secret: true }] },
      user,
    );
    const key = readFileSync(t.options().keyFile, 'utf8').trim();
    const bytes = () =>
      Buffer.concat(
        ['', '-wal'].flatMap((s) => {
          try {
            return [readFileSync(`${t.options().path}${s}`)];
          } catch {
            return [];
          }
        }),
      );
    for (const content of [bytes()]) {
      expect(content.includes(value)).toBe(false);
      expect(content.includes(key)).toBe(false);
    }
    t.vault.close();
    const db = new BetterSqlite3(t.options().path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(bytes().includes(value)).toBe(false);
    expect(bytes().includes(key)).toBe(false);
    expect(bytes().includes('GitHub')).toBe(true);
    expect(statSync(t.options().path).mode & 0o777).toBe(0o600);
    expect(statSync(t.options().keyFile).mode & 0o777).toBe(0o600);
  });
});

describe('integrity', () => {
  function sealedOf(id: string, field: string): Buffer {
    const db = new BetterSqlite3(t.options().path);
    try {
      const row = db
        .prepare('SELECT sealed FROM secret_fields WHERE secret_id = ? AND name = ?')
        .get(id, field) as {
        sealed: Buffer;
      };
      return row.sealed;
    } finally {
      db.close();
    }
  }
  function setSealed(id: string, field: string, sealed: Buffer): void {
    const db = new BetterSqlite3(t.options().path);
    db.prepare('UPDATE secret_fields SET sealed = ? WHERE secret_id = ? AND name = ?').run(sealed, id, field);
    db.close();
  }

  it('detects a flipped byte in a stored value', () => {
    const s = t.vault.create(
      { name: 'Bank', type: 'password', fields: [{ name: 'pin', value: '1234', secret: true }] },
      user,
    );
    const sealed = Buffer.from(sealedOf(s.id, 'pin'));
    sealed[14] = (sealed[14] ?? 0) ^ 0x01;
    setSealed(s.id, 'pin', sealed);
    const err = vaultErrorOf(() => t.vault.reveal(s.id, 'pin', agent));
    expect(err.code).toBe('io');
    expect(err.message).toBe(
      'the stored value of Bank.pin fails its integrity check: the vault file was changed outside Navi or is damaged; restore it from a backup',
    );
  });

  it('detects ciphertexts swapped between fields and between secrets', () => {
    const a = t.vault.create(
      {
        name: 'A',
        type: 'custom',
        fields: [
          { name: 'one', value: 'first', secret: true },
          { name: 'two', value: 'second', secret: true },
        ],
      },
      user,
    );
    const b = t.vault.create(
      { name: 'B', type: 'custom', fields: [{ name: 'one', value: 'other', secret: true }] },
      user,
    );
    const one = sealedOf(a.id, 'one');
    const two = sealedOf(a.id, 'two');
    setSealed(a.id, 'one', two);
    setSealed(a.id, 'two', one);
    expect(vaultErrorOf(() => t.vault.reveal(a.id, 'one', agent)).message).toContain(
      'A.one fails its integrity check',
    );
    expect(vaultErrorOf(() => t.vault.reveal(a.id, 'two', agent)).message).toContain(
      'A.two fails its integrity check',
    );
    setSealed(b.id, 'one', one);
    expect(vaultErrorOf(() => t.vault.resolve(b.id, 'one', agent)).message).toContain(
      'B.one fails its integrity check',
    );
  });
});

describe('search and archive', () => {
  function add(name: string, tags: string[], login: string, secret: string) {
    return t.vault.create(
      {
        name,
        type: 'password',
        tags,
        fields: [
          { name: 'login', value: login, secret: false },
          { name: 'password', value: secret, secret: true },
        ],
      },
      user,
    );
  }

  it('matches words in names, tags and plain fields, never in secret values', () => {
    add('GitHub', ['code', 'Work'], 'octo@example.com', 'zebra-crossing');
    add('Bank', ['money'], 'me', 'zebra-stripes');
    expect(t.vault.search({ query: 'github' }).map((r) => r.name)).toEqual(['GitHub']);
    expect(t.vault.search({ query: 'WORK code' }).map((r) => r.name)).toEqual(['GitHub']);
    expect(t.vault.search({ query: 'octo@' }).map((r) => r.name)).toEqual(['GitHub']);
    expect(t.vault.search({ query: 'zebra' })).toEqual([]);
    expect(t.vault.search({ tag: 'money' }).map((r) => r.name)).toEqual(['Bank']);
    expect(t.vault.search({ query: "' OR 1=1 --" })).toEqual([]);
    expect(t.vault.search({ limit: 1 })).toHaveLength(1);
    expect(vaultErrorOf(() => t.vault.search({ limit: 500 })).code).toBe('invalid');
  });

  it('hides archived secrets from search, get, reveal and the agent, but not from the person', () => {
    const s = add('Old', [], 'me', 'gone-value');
    t.vault.setStatus(s.id, 'outdated', user);
    expect(t.vault.search().map((r) => r.status)).toEqual(['outdated']);
    t.vault.archive(s.id, agent);
    expect(t.vault.search()).toEqual([]);
    expect(t.vault.search({ query: 'old' })).toEqual([]);
    expect(vaultErrorOf(() => t.vault.get(s.id)).code).toBe('not_found');
    expect(vaultErrorOf(() => t.vault.reveal(s.id, 'password', agent)).code).toBe('not_found');
    expect(vaultErrorOf(() => t.vault.resolve(s.id, 'password', user)).code).toBe('not_found');
    expect(vaultErrorOf(() => t.vault.search({ status: 'archived' })).code).toBe('invalid');
    expect(vaultErrorOf(() => t.vault.setStatus(s.id, 'actual', agent)).code).toBe('not_found');
    expect(t.vault.search({ includeArchived: true }).map((r) => r.name)).toEqual(['Old']);
    expect(t.vault.search({ includeArchived: true, status: 'archived' }).map((r) => r.name)).toEqual(['Old']);
    expect(t.vault.get(s.id, { includeArchived: true }).status).toBe('archived');
    expect(t.vault.reveal(s.id, 'password', user)).toBe('gone-value');
    expect(vaultErrorOf(() => t.vault.update(s.id, { name: 'x' }, user)).message).toContain(
      'archived and cannot be changed',
    );
    expect(t.vault.setStatus(s.id, 'actual', user).status).toBe('actual');
    expect(t.vault.search().map((r) => r.name)).toEqual(['Old']);
  });
});
