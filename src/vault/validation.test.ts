/**
 * Bad input through the real vault: missing, wrong-typed, oversized and hostile values are
 * refused with what was wrong and what to send, and leave the vault as it was.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { NewSecret, SecretPatch } from './index.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault();

const field = { name: 'password', value: 'pw', secret: true };
const good: NewSecret = { name: 'Good', type: 'password', fields: [field] };
/** Through `unknown`: a caller's JSON is not bound by our types. */
const loose = (value: unknown) => value as NewSecret;

describe('creating', () => {
  const cases: [string, unknown, string][] = [
    ['not an object', 'a string', 'must be an object'],
    ['no name', { ...good, name: undefined }, 'name must be text of 1 to 200 characters'],
    ['an empty name', { ...good, name: '   ' }, 'name must be text'],
    ['a name of 201 characters', { ...good, name: 'x'.repeat(201) }, 'name must be text'],
    ['a number as name', { ...good, name: 42 }, 'name must be text'],
    ['an unknown type', { ...good, type: 'bitcoin' }, 'use one of password, api_token'],
    ['tags not a list', { ...good, tags: 'a,b' }, 'tags must be a list'],
    ['21 tags', { ...good, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'at most 20'],
    ['a tag of 65 characters', { ...good, tags: ['x'.repeat(65)] }, 'of 1 to 64 characters'],
    ['no fields', { ...good, fields: [] }, 'fields must be a list of 1 to 50'],
    [
      '51 fields',
      { ...good, fields: Array.from({ length: 51 }, (_, i) => ({ ...field, name: `f${i}` })) },
      '1 to 50',
    ],
    ['a field that is a string', { ...good, fields: ['pw'] }, 'each field must be an object'],
    [
      'a field name with a space',
      { ...good, fields: [{ ...field, name: 'pass word' }] },
      'field name "pass word"',
    ],
    ['a field name with a dot', { ...good, fields: [{ ...field, name: 'a.b' }] }, 'is not allowed'],
    [
      'a field name of 65 characters',
      { ...good, fields: [{ ...field, name: 'x'.repeat(65) }] },
      'is not allowed',
    ],
    ['a field twice', { ...good, fields: [field, field] }, 'field "password" appears twice'],
    ['an empty value', { ...good, fields: [{ ...field, value: '' }] }, 'is missing or empty'],
    ['a number as value', { ...good, fields: [{ ...field, value: 1234 }] }, 'is missing or empty'],
    [
      'a value over 64 KiB',
      { ...good, fields: [{ ...field, value: 'x'.repeat(65537) }] },
      'more than the 64 KiB',
    ],
    ['no secret flag', { ...good, fields: [{ name: 'a', value: 'b' }] }, 'needs secret: true'],
    ['an archived start', { ...good, status: 'archived' }, 'cannot start archived'],
    ['an unknown property', { ...good, owner: 'me' }, 'has no "owner"'],
  ];
  for (const [what, input, message] of cases)
    it(`refuses ${what}`, () => {
      const err = vaultErrorOf(() => t.vault.create(loose(input), user));
      expect(err.code).toBe('invalid');
      expect(err.message).toContain(message);
      expect(t.vault.search()).toEqual([]);
    });

  it('takes a value of exactly 64 KiB and strange but valid text', () => {
    const s = t.vault.create(
      {
        name: "Robert'); DROP TABLE secrets;--",
        type: 'custom',
        tags: ['<script>', '..'],
        fields: [{ name: 'big', value: 'é'.repeat(32768), secret: true }],
      },
      user,
    );
    expect(t.vault.reveal(s.id, 'big', user)).toHaveLength(32768);
    expect(t.vault.search({ query: 'drop table' }).map((r) => r.id)).toEqual([s.id]);
  });

  it('needs an audit context with a known actor', () => {
    expect(vaultErrorOf(() => t.vault.create(good, loose(undefined) as never)).message).toContain('actor');
    expect(vaultErrorOf(() => t.vault.create(good, { actor: 'root' } as never)).code).toBe('invalid');
  });
});

describe('ids and fields', () => {
  const hostile: unknown[] = ["' OR 1=1 --", '../../etc/passwd', '', 42, null, { id: 1 }, 'x'.repeat(10_000)];
  it('answers not_found for any id that is not a stored UUID, without echoing a long one whole', () => {
    const s = t.vault.create(good, user);
    for (const id of [...hostile, '00000000-0000-4000-8000-000000000000']) {
      for (const call of [
        () => t.vault.get(id as string),
        () => t.vault.reveal(id as string, 'password', agent),
        () => t.vault.resolve(id as string, 'password', agent),
        () => t.vault.update(id as string, { name: 'x' }, user),
        () => t.vault.setStatus(id as string, 'outdated', user),
        () => t.vault.archive(id as string, user),
      ]) {
        const err = vaultErrorOf(call);
        expect(err.code).toBe('not_found');
        expect(err.message).toContain('no secret with id');
        expect(err.message.length).toBeLessThan(250);
      }
    }
    // Upper case is the same id.
    expect(t.vault.get(s.id.toUpperCase()).id).toBe(s.id);
    expect(t.vault.reveal(s.id, 'password', agent)).toBe('pw');
  });

  it('names the fields a secret has when asked for another', () => {
    const s = t.vault.create(good, user);
    const err = vaultErrorOf(() => t.vault.reveal(s.id, 'pin', agent));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe('the secret "Good" has no field "pin"; its fields are password');
    expect(vaultErrorOf(() => t.vault.reveal(s.id, '../x', agent)).code).toBe('invalid');
    expect(t.vault.auditLog().map((e) => e.action)).toEqual(['create']);
  });

  it('refuses a status that is not one', () => {
    const s = t.vault.create(good, user);
    expect(vaultErrorOf(() => t.vault.setStatus(s.id, 'deleted' as never, user)).message).toContain(
      'use one of actual',
    );
  });
});

describe('updating', () => {
  let id: string;
  beforeEach(() => {
    id = t.vault.create(
      {
        ...good,
        fields: [
          { name: 'user', value: 'me', secret: false },
          { name: 'password', value: 'pw', secret: true },
        ],
      },
      user,
    ).id;
  });
  const bad: [string, unknown, string][] = [
    ['an empty change', {}, 'the change is empty'],
    ['an empty field list alone', { fields: [] }, 'the change is empty'],
    ['a field set and removed', { fields: [field], remove_fields: ['password'] }, 'both set and removed'],
    ['remove_fields not a list', { remove_fields: 'password' }, 'must be a list of field names'],
    ['an unknown property', { id: 'x' }, 'has no "id"'],
    ['a bad type', { type: 'x' }, 'is not a secret type'],
  ];
  for (const [what, patch, message] of bad)
    it(`refuses ${what}`, () => {
      const err = vaultErrorOf(() => t.vault.update(id, patch as SecretPatch, user));
      expect(err.code).toBe('invalid');
      expect(err.message).toContain(message);
    });

  it('refuses removing an unknown field or every field, and changes nothing then', () => {
    expect(vaultErrorOf(() => t.vault.update(id, { remove_fields: ['pin'] }, user)).message).toContain(
      'has no field "pin"',
    );
    expect(
      vaultErrorOf(() => t.vault.update(id, { remove_fields: ['user', 'password'] }, user)).message,
    ).toContain('keep at least one field');
    expect(t.vault.get(id).fields.map((f) => f.name)).toEqual(['user', 'password']);
  });

  it('replaces, adds and removes fields, keeping their order', () => {
    const after = t.vault.update(
      id,
      {
        name: 'Renamed',
        tags: ['x'],
        fields: [
          { name: 'password', value: 'new-pw', secret: true },
          { name: 'url', value: 'https://example.org', secret: false },
        ],
        remove_fields: ['user'],
      },
      agent,
    );
    expect(after.name).toBe('Renamed');
    expect(after.fields.map((f) => [f.name, f.value])).toEqual([
      ['password', '••••••••'],
      ['url', 'https://example.org'],
    ]);
    expect(t.vault.reveal(id, 'password', agent)).toBe('new-pw');
    expect(t.vault.auditLog({ limit: 2 })[1]?.detail).toBe('name; tags; fields password, url; removed user');
  });
});

describe('searching', () => {
  const bad: [string, unknown][] = [
    ['a query that is not text', { query: 42 }],
    ['a query of 1001 characters', { query: 'x'.repeat(1001) }],
    ['a limit of 0', { limit: 0 }],
    ['a limit of 201', { limit: 201 }],
    ['a fractional limit', { limit: 1.5 }],
    ['a limit as text', { limit: '10' }],
    ['an unknown type', { type: 'x' }],
    ['an unknown status', { status: 'x' }],
    ['an empty tag', { tag: ' ' }],
    ['an unknown property', { sort: 'name' }],
    ['not an object', 'github'],
  ];
  for (const [what, query] of bad)
    it(`refuses ${what}`, () => {
      expect(vaultErrorOf(() => t.vault.search(query as never)).code).toBe('invalid');
    });
});
