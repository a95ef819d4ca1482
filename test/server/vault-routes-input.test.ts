/**
 * Bad input to the vault's REST routes, on a real Navi with a real vault: missing, wrong-typed,
 * oversized, unknown and hostile input to every route is refused with a 4xx whose message says
 * what was wrong, never a 500, and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretList, SecretRecord } from '../../src/protocol/vault.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { type VaultClient, vaultClient } from '../support/vault.js';
import { rawRequest } from './raw-http.js';

const field = { name: 'password', value: 'hunter22-hunter22', secret: true };
const good = { name: 'Mail', type: 'password', fields: [field] };

let navi: NaviHandle;
let client: VaultClient;
let record: SecretRecord;

beforeAll(async () => {
  navi = await startNavi();
  client = await vaultClient(navi);
  const res = await client.send('POST', '/vault/secrets', good);
  record = (await res.json()) as SecretRecord;
});
afterAll(async () => navi.close());

async function refused(
  method: string,
  path: string,
  body: unknown,
  status: number,
  code: string,
  words: string | RegExp,
): Promise<void> {
  const res = await client.send(method, path, body);
  const text = await res.text();
  expect(res.status, `${method} ${path} ${text}`).toBe(status);
  const parsed = JSON.parse(text) as { code: string; error: string };
  expect(parsed.code).toBe(code);
  if (typeof words === 'string') expect(parsed.error).toContain(words);
  else expect(parsed.error).toMatch(words);
}

describe('POST /vault/secrets refuses', () => {
  it.each([
    ['no name', { type: 'password', fields: [field] }, "must have required property 'name'"],
    ['no fields', { name: 'x', type: 'password' }, "must have required property 'fields'"],
    ['an empty field list', { ...good, fields: [] }, 'must NOT have fewer than 1 items'],
    ['a name that is a number', { ...good, name: 5 }, 'body/name must be string'],
    ['an empty name', { ...good, name: '' }, 'body/name must NOT have fewer than 1 characters'],
    ['a 201-character name', { ...good, name: 'n'.repeat(201) }, 'must NOT have more than 200 characters'],
    ['an unknown type', { ...good, type: 'bitcoin' }, '"password", "api_token"'],
    ['a new secret that starts archived', { ...good, status: 'archived' }, '"actual", "outdated"'],
    ['tags that are not a list', { ...good, tags: 'a,b' }, 'body/tags must be array'],
    [
      '21 tags',
      { ...good, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      'must NOT have more than 20 items',
    ],
    [
      'a field without secret',
      { ...good, fields: [{ name: 'p', value: 'v' }] },
      "required property 'secret'",
    ],
    [
      'a field whose secret is "true"',
      { ...good, fields: [{ ...field, secret: 'true' }] },
      'secret must be boolean',
    ],
    [
      'a field with an empty value',
      { ...good, fields: [{ ...field, value: '' }] },
      'value must NOT have fewer',
    ],
    [
      'a field name with a space',
      { ...good, fields: [{ ...field, name: 'my password' }] },
      'name must match pattern',
    ],
    ['a field name with a dot', { ...good, fields: [{ ...field, name: 'a.b' }] }, 'name must match pattern'],
    ['an unknown key', { ...good, owner: 'me' }, 'must NOT have additional properties ("owner")'],
    ['an unknown key in a field', { ...good, fields: [{ ...field, note: 'x' }] }, '("note")'],
    ['a body that is a list', [good], 'body must be object'],
    [
      'a 65 KiB value',
      { ...good, fields: [{ ...field, value: 'v'.repeat(65 * 1024 + 1) }] },
      'must NOT have more than',
    ],
  ])('%s with 400 BAD_REQUEST', async (_label, body, words) => {
    await refused('POST', '/vault/secrets', body, 400, 'BAD_REQUEST', words);
  });

  it('two fields of one name with 400 VAULT_INVALID, from the vault itself', async () => {
    await refused(
      'POST',
      '/vault/secrets',
      { ...good, fields: [field, field] },
      400,
      'VAULT_INVALID',
      'appears twice',
    );
  });

  it('a value of 64 KiB in multi-byte characters, measured in bytes by the vault', async () => {
    const value = 'я'.repeat(40 * 1024); // 40 Ki characters, 80 KiB
    await refused(
      'POST',
      '/vault/secrets',
      { ...good, fields: [{ ...field, value }] },
      400,
      'VAULT_INVALID',
      'KiB',
    );
  });

  it('broken JSON with 400 INVALID_JSON, and an empty JSON body too', async () => {
    await refused(
      'POST',
      '/vault/secrets',
      '{"name": "x", "fields": [',
      400,
      'INVALID_JSON',
      'not valid JSON',
    );
    await refused('POST', '/vault/secrets', '', 400, 'INVALID_JSON', 'not valid JSON');
  });

  it('a body over 4 MiB with 413 BODY_TOO_LARGE', async () => {
    const body = { ...good, fields: [{ ...field, value: 'v'.repeat(4 * 1024 * 1024 + 10) }] };
    await refused('POST', '/vault/secrets', body, 413, 'BODY_TOO_LARGE', 'too large');
  });

  it('a body that is not JSON: plain text with 400, a form with 415', async () => {
    const post = (type: string) =>
      fetch(`${navi.url}/vault/secrets`, {
        method: 'POST',
        headers: { cookie: client.cookie, 'content-type': type },
        body: 'name=x',
      });
    const text = await post('text/plain');
    expect(text.status).toBe(400);
    expect(((await text.json()) as { error: string }).error).toContain('body must be object');
    const form = await post('application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(((await form.json()) as { code: string }).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('and none of it was stored', async () => {
    const { secrets } = (await (
      await client.send('GET', '/vault/secrets?include_archived=true')
    ).json()) as SecretList;
    expect(secrets.map((s) => s.name)).toEqual(['Mail']);
  });
});

describe('routes with an id refuse hostile ids with 400, before the vault is asked', () => {
  it.each([
    ['a path', encodeURIComponent('../../etc/passwd')],
    ['SQL', encodeURIComponent("1' OR '1'='1")],
    ['a NUL byte', '%00'],
    ['a broken percent-escape', '%E0%A4%A'],
    ['a long id', 'a'.repeat(5000)],
    ['a UUID with a suffix', '00000000-0000-4000-8000-000000000000x'],
    ['a reference', encodeURIComponent('{{secret:00000000-0000-4000-8000-000000000000.password}}')],
  ])('%s', async (_label, id) => {
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'x' }],
      ['POST', '/status', { status: 'actual' }],
      ['POST', '/archive', undefined],
      ['POST', '/reveal', { field: 'password' }],
    ] as const) {
      const res = await client.send(method, `/vault/secrets/${id}${suffix}`, body);
      expect([400, 404], `${method} ${suffix}`).toContain(res.status);
      const parsed = (await res.json()) as { code: string; error: string };
      if (res.status === 400) expect(parsed.error).toContain('params/id must match pattern');
      else expect(parsed.code).toBe('NOT_FOUND');
    }
  });
});

describe('PATCH, status, archive and reveal refuse', () => {
  const path = () => `/vault/secrets/${record.id}`;

  it.each([
    ['an empty change', {}, 'BAD_REQUEST', 'must NOT have fewer than 1 properties'],
    ['an unknown key', { colour: 'red' }, 'BAD_REQUEST', '("colour")'],
    ['a name of the wrong type', { name: ['x'] }, 'BAD_REQUEST', 'body/name must be string'],
    ['remove_fields with a bad name', { remove_fields: ['a b'] }, 'BAD_REQUEST', 'must match pattern'],
    ['a change with only an empty field list', { fields: [] }, 'VAULT_INVALID', 'the change is empty'],
    ['removing every field', { remove_fields: ['password'] }, 'VAULT_INVALID', 'keep at least one field'],
    [
      'removing a field that does not exist',
      { remove_fields: ['pin'] },
      'VAULT_NOT_FOUND',
      'has no field "pin"',
    ],
    [
      'setting and removing one field',
      { fields: [field], remove_fields: ['password'] },
      'VAULT_INVALID',
      'both set and removed',
    ],
  ])('PATCH with %s', async (_label, body, code, words) => {
    const status = code === 'VAULT_NOT_FOUND' ? 404 : 400;
    await refused('PATCH', path(), body, status, code, words);
  });

  it.each([
    ['no status', {}, "must have required property 'status'"],
    ['an unknown status', { status: 'deleted' }, '"actual", "outdated", "archived"'],
    ['a status of the wrong type', { status: 1 }, 'body/status must be string'],
    ['an extra key', { status: 'actual', why: 'x' }, '("why")'],
  ])('status with %s', async (_label, body, words) => {
    await refused('POST', `${path()}/status`, body, 400, 'BAD_REQUEST', words);
  });

  it('archive with a body', async () => {
    await refused('POST', `${path()}/archive`, { force: true }, 400, 'BAD_REQUEST', 'takes no body');
  });

  it.each([
    ['no field', {}, "must have required property 'field'"],
    ['a field of the wrong type', { field: 5 }, 'body/field must be string'],
    ['a field name that is not one', { field: '../password' }, 'must match pattern'],
    ['an extra key', { field: 'password', as: 'text' }, '("as")'],
    ['a reason over 500 characters', { field: 'password', reason: 'r'.repeat(501) }, 'more than 500'],
  ])('reveal with %s', async (_label, body, words) => {
    await refused('POST', `${path()}/reveal`, body, 400, 'BAD_REQUEST', words);
  });

  it('reveal with a body over 16 KiB: 413', async () => {
    await refused(
      'POST',
      `${path()}/reveal`,
      { field: 'password', reason: 'r'.repeat(20_000) },
      413,
      'BODY_TOO_LARGE',
      'too large',
    );
  });

  it('a body cut short on the wire: 400, never a 500', async () => {
    const body = Buffer.from('{"field": "passw');
    const res = await rawRequest(
      `${navi.url}${path()}/reveal`,
      [
        `POST ${path()}/reveal HTTP/1.1`,
        `Cookie: ${client.cookie}`,
        'Content-Type: application/json',
        'Connection: close',
      ],
      body,
    );
    expect(res.status).toBe(400);
    expect(res.body).not.toContain('hunter22');
  });

  it('and the secret is unchanged', async () => {
    const res = await client.send('GET', path());
    expect(await res.json()).toEqual(record);
  });
});

describe('GET /vault/secrets and /vault/audit refuse bad query strings', () => {
  it.each([
    ['?limit=0', 'querystring/limit must match pattern'],
    ['?limit=201', 'querystring/limit must match pattern'],
    ['?limit=ten', 'querystring/limit must match pattern'],
    ['?status=deleted', 'querystring/status must be equal to one of the allowed values'],
    ['?type=bitcoin', '"api_token"'],
    ['?include_archived=yes', '"true", "false"'],
    ['?tag=', 'querystring/tag must NOT have fewer than 1 characters'],
    [`?query=${'q'.repeat(1001)}`, 'must NOT have more than 1000 characters'],
    ['?sort=name', '("sort")'],
  ])('/vault/secrets%s', async (query, words) => {
    await refused('GET', `/vault/secrets${query}`, undefined, 400, 'BAD_REQUEST', words);
  });

  it.each([
    ['?limit=0', 'querystring/limit must match pattern'],
    ['?limit=1001', 'querystring/limit must match pattern'],
    ['?secret_id=abc', 'querystring/secret_id must match pattern'],
    ['?action=reveal', '("action")'],
  ])('/vault/audit%s', async (query, words) => {
    await refused('GET', `/vault/audit${query}`, undefined, 400, 'BAD_REQUEST', words);
  });
});
