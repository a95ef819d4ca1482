/**
 * The Vault page's form logic (web/src/lib/vault.ts): how a draft becomes the body of a create
 * or a change, what the person must fix first, and the list's query string.
 */
import { describe, expect, it } from 'vitest';
import type { SecretRecord } from '../../src/protocol/vault.js';
import {
  draftOf,
  emptyDraft,
  filterQuery,
  isEmptyPatch,
  newField,
  toNewSecret,
  toPatch,
} from '../../web/src/lib/vault.js';

const record: SecretRecord = {
  id: '3f2b8c1e-9a4d-4e6f-b2a1-7c8d9e0f1a2b',
  name: 'Router',
  type: 'password',
  tags: ['home'],
  status: 'actual',
  fields: [
    { name: 'username', secret: false, value: 'admin' },
    {
      name: 'password',
      secret: true,
      value: '••••••••',
      reference: '{{secret:3f2b8c1e-9a4d-4e6f-b2a1-7c8d9e0f1a2b.password}}',
    },
  ],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

describe('toNewSecret', () => {
  it('trims names, splits tags and keeps values exactly as typed', () => {
    const draft = emptyDraft({
      name: '  Mail ',
      type: 'password',
      tags: 'work, mail,, work',
      fields: [newField(' password ', ' spaced value ', true)],
    });
    expect(toNewSecret(draft)).toEqual({
      ok: true,
      body: {
        name: 'Mail',
        type: 'password',
        tags: ['work', 'mail'],
        fields: [{ name: 'password', value: ' spaced value ', secret: true }],
      },
    });
  });

  it.each([
    ['no name', emptyDraft({ fields: [newField('password', 'x')] }), 'Give the secret a name'],
    ['no fields', emptyDraft({ name: 'x', fields: [] }), 'at least one field'],
    ['an empty value', emptyDraft({ name: 'x', fields: [newField('password', '')] }), 'has no value'],
    ['a bad field name', emptyDraft({ name: 'x', fields: [newField('my pass', 'v')] }), 'is not allowed'],
    [
      'two fields of one name',
      emptyDraft({ name: 'x', fields: [newField('a', 'v'), newField('a', 'w')] }),
      'Two fields are named "a"',
    ],
  ])('refuses %s with a sentence saying what to fix', (_label, draft, words) => {
    const result = toNewSecret(draft);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(words);
  });
});

describe('toPatch', () => {
  it('an untouched draft changes nothing: a stored secret value left empty is kept', () => {
    const result = toPatch(record, draftOf(record));
    expect(result).toEqual({ ok: true, body: {} });
    if (result.ok) expect(isEmptyPatch(result.body)).toBe(true);
  });

  it('sends only what changed: a new secret value, a new field, a removed one, the name', () => {
    const draft = draftOf(record);
    draft.name = 'Router 2';
    const password = draft.fields.find((f) => f.name === 'password');
    if (password) password.value = 'new-value';
    draft.fields = draft.fields.filter((f) => f.name !== 'username');
    draft.fields.push(newField('url', 'http://192.168.1.1', false));
    expect(toPatch(record, draft)).toEqual({
      ok: true,
      body: {
        name: 'Router 2',
        fields: [
          { name: 'password', value: 'new-value', secret: true },
          { name: 'url', value: 'http://192.168.1.1', secret: false },
        ],
        remove_fields: ['username'],
      },
    });
  });

  it('a plain field renamed is removed under its old name and set under the new one', () => {
    const draft = draftOf(record);
    const user = draft.fields.find((f) => f.name === 'username');
    if (user) user.name = 'login';
    expect(toPatch(record, draft)).toEqual({
      ok: true,
      body: { fields: [{ name: 'login', value: 'admin', secret: false }], remove_fields: ['username'] },
    });
  });

  it('asks for the value again to rename a stored secret field or make it plain', () => {
    const renamed = draftOf(record);
    const field = renamed.fields.find((f) => f.name === 'password');
    if (field) field.name = 'pin';
    expect(toPatch(record, renamed)).toEqual({
      ok: false,
      error: expect.stringContaining('type its value again'),
    });
    const plain = draftOf(record);
    const secret = plain.fields.find((f) => f.name === 'password');
    if (secret) secret.secret = false;
    expect(toPatch(record, plain)).toEqual({
      ok: false,
      error: expect.stringContaining('type its value again'),
    });
  });

  it('tags compare as a list, not as the text typed', () => {
    const draft = draftOf(record);
    draft.tags = ' home ,';
    expect(toPatch(record, draft)).toEqual({ ok: true, body: {} });
    draft.tags = 'home, lan';
    expect(toPatch(record, draft)).toEqual({ ok: true, body: { tags: ['home', 'lan'] } });
  });
});

describe('filterQuery', () => {
  it.each([
    [{ query: '', type: '', status: '' }, ''],
    [{ query: '  router ', type: 'password', status: '' }, 'query=router&type=password'],
    [{ query: '', type: '', status: 'outdated' }, 'status=outdated'],
    [{ query: '', type: '', status: 'archived' }, 'status=archived&include_archived=true'],
    [{ query: '', type: '', status: 'all' }, 'include_archived=true'],
    [{ query: 'a&b=c', type: '', status: '' }, 'query=a%26b%3Dc'],
  ] as const)('%o → %s', (filter, query) => {
    expect(filterQuery(filter)).toBe(query);
  });
});
