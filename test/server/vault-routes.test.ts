/**
 * The vault's REST routes on a real Navi (real HTTP, real SQLite) with a real vault in a
 * temporary folder: every route, consent, masking, the audit log, `Cache-Control: no-store`, a
 * locked vault (423 with how to unlock it everywhere), an audit log that cannot be written (503,
 * nothing done), and no value ever in the server's log. Bad input is in vault-routes-input.test.ts.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditList, SecretList, SecretRecord, VaultState } from '../../src/protocol/vault.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { type VaultClient, vaultClient } from '../support/vault.js';

const PASSWORD = 'correct-horse-battery-staple-42';
const TOKEN = 'tok_9fQ2xLr7Vb3NcK8dHs1Jg5Yw';

const login = {
  name: 'Router admin',
  type: 'password',
  tags: ['home', 'network'],
  fields: [
    { name: 'username', value: 'admin', secret: false },
    { name: 'password', value: PASSWORD, secret: true },
  ],
};

describe('vault routes', () => {
  let navi: NaviHandle;
  let client: VaultClient;
  const logLines: string[] = [];

  beforeAll(async () => {
    // A logger of our own at the most verbose level, without masking: whatever the routes and
    // Fastify log is read below, and no secret value may be in it.
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    navi = await startNavi({ logger: pino({ level: 'trace' }, sink) });
    client = await vaultClient(navi);
  });
  afterAll(async () => navi.close());

  it('GET /vault says the vault is unlocked, without needing consent', async () => {
    const res = await fetch(`${navi.url}/vault`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      state: 'unlocked',
      keySource: 'file',
      path: join(navi.dir, 'vault.db'),
    });
  });

  it('creates a secret: 201, the secret field masked with its reference, the plain one shown', async () => {
    const res = await client.send('POST', '/vault/secrets', login);
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = await res.text();
    expect(text).not.toContain(PASSWORD);
    const record = JSON.parse(text) as SecretRecord;
    expect(record).toMatchObject({
      name: 'Router admin',
      type: 'password',
      tags: ['home', 'network'],
      status: 'actual',
    });
    expect(record.fields).toEqual([
      { name: 'username', secret: false, value: 'admin' },
      {
        name: 'password',
        secret: true,
        value: expect.not.stringContaining(PASSWORD),
        reference: `{{secret:${record.id}.password}}`,
      },
    ]);
  });

  it('lists secrets masked, filtered by words, type, tag and status', async () => {
    const token = await client.create({
      name: 'CI token',
      type: 'api_token',
      tags: ['work'],
      fields: [{ name: 'token', value: TOKEN, secret: true }],
    });
    const names = async (query: string): Promise<string[]> => {
      const res = await client.send('GET', `/vault/secrets${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const text = await res.text();
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(TOKEN);
      return ((JSON.parse(text) as SecretList).secrets ?? []).map((s) => s.name);
    };
    expect(await names('')).toEqual(expect.arrayContaining(['Router admin', 'CI token']));
    expect(await names('?query=router')).toEqual(['Router admin']);
    // A plain field's value is searchable; a secret field's never is.
    expect(await names('?query=admin')).toEqual(['Router admin']);
    expect(await names(`?query=${encodeURIComponent(TOKEN)}`)).toEqual([]);
    expect(await names('?type=api_token')).toEqual(['CI token']);
    expect(await names('?tag=network')).toEqual(['Router admin']);
    expect(await names('?status=outdated')).toEqual([]);
    expect(await names('?limit=1')).toHaveLength(1);
    const one = await client.send('GET', `/vault/secrets/${token.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(token);
  });

  it('reveals one field to the person, no-store, and audits it with actor user and the reason', async () => {
    const record = await client.create({ ...login, name: 'Reveal me' });
    const res = await client.send('POST', `/vault/secrets/${record.id}/reveal`, {
      field: 'password',
      reason: 'typing it into the router',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ value: PASSWORD });
    const audit = await client.send('GET', `/vault/audit?secret_id=${record.id}`);
    expect(audit.headers.get('cache-control')).toBe('no-store');
    const { entries } = (await audit.json()) as AuditList;
    expect(entries.map((e) => e.action)).toEqual(['reveal', 'create']);
    expect(entries[0]).toMatchObject({
      action: 'reveal',
      actor: 'user',
      secret_id: record.id,
      secret_name: 'Reveal me',
      field: 'password',
      reason: 'typing it into the router',
    });
    expect(JSON.stringify(entries)).not.toContain(PASSWORD);
  });

  it('changes a secret: renames it, replaces and adds fields, removes one', async () => {
    const record = await client.create({ ...login, name: 'Old name' });
    const res = await client.send('PATCH', `/vault/secrets/${record.id}`, {
      name: 'New name',
      tags: ['moved'],
      fields: [
        { name: 'password', value: 'a-new-password-77', secret: true },
        { name: 'url', value: 'http://192.168.1.1', secret: false },
      ],
      remove_fields: ['username'],
    });
    expect(res.status).toBe(200);
    const changed = (await res.json()) as SecretRecord;
    expect(changed).toMatchObject({ name: 'New name', tags: ['moved'] });
    expect(changed.fields.map((f) => f.name)).toEqual(['password', 'url']);
    const reveal = await client.send('POST', `/vault/secrets/${record.id}/reveal`, { field: 'password' });
    expect(await reveal.json()).toEqual({ value: 'a-new-password-77' });
    const audit = (await (
      await client.send('GET', `/vault/audit?secret_id=${record.id}&limit=5`)
    ).json()) as AuditList;
    expect(audit.entries.find((e) => e.action === 'update')).toMatchObject({
      actor: 'user',
      detail: expect.stringContaining('removed username'),
    });
    expect(JSON.stringify(audit)).not.toContain('a-new-password-77');
  });

  it('marks outdated, archives, shows archived only on request, refuses changes, restores', async () => {
    const record = await client.create({ ...login, name: 'Lifecycle' });
    const status = (body: unknown) => client.send('POST', `/vault/secrets/${record.id}/status`, body);
    const listed = async (query: string) =>
      ((await (await client.send('GET', `/vault/secrets${query}`)).json()) as SecretList).secrets.some(
        (s) => s.id === record.id,
      );

    const outdated = await status({ status: 'outdated' });
    expect(outdated.status).toBe(200);
    expect(((await outdated.json()) as SecretRecord).status).toBe('outdated');
    expect(await listed('?status=outdated')).toBe(true);

    const archived = await client.send('POST', `/vault/secrets/${record.id}/archive`);
    expect(archived.status).toBe(200);
    expect(((await archived.json()) as SecretRecord).status).toBe('archived');
    expect(await listed('')).toBe(false);
    expect(await listed('?include_archived=true')).toBe(true);
    expect(await listed('?status=archived')).toBe(true);
    const get = await client.send('GET', `/vault/secrets/${record.id}`);
    expect(((await get.json()) as SecretRecord).status).toBe('archived');
    // The person may still read it…
    const reveal = await client.send('POST', `/vault/secrets/${record.id}/reveal`, { field: 'password' });
    expect(await reveal.json()).toEqual({ value: PASSWORD });
    // …but not change it before restoring it.
    const patch = await client.send('PATCH', `/vault/secrets/${record.id}`, { name: 'x' });
    expect(patch.status).toBe(400);
    expect(await patch.json()).toEqual({
      code: 'VAULT_INVALID',
      error: expect.stringContaining('set its status to actual first'),
    });

    const restored = await status({ status: 'actual' });
    expect(restored.status).toBe(200);
    expect(((await restored.json()) as SecretRecord).status).toBe('actual');
    expect(await listed('')).toBe(true);
    // Archiving through the status route is the same as the archive route.
    expect(((await (await status({ status: 'archived' })).json()) as SecretRecord).status).toBe('archived');

    const { entries } = (await (
      await client.send('GET', `/vault/audit?secret_id=${record.id}`)
    ).json()) as AuditList;
    expect(entries.map((e) => [e.action, e.detail ?? ''])).toEqual([
      ['archive', ''],
      ['status', 'actual'],
      ['reveal', ''],
      ['archive', ''],
      ['status', 'outdated'],
      ['create', ''],
    ]);
    expect(entries.every((e) => e.actor === 'user')).toBe(true);
  });

  it('answers 404 VAULT_NOT_FOUND for an unknown secret or field, saying what to do', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['GET', `/vault/secrets/${unknown}`, undefined],
      ['PATCH', `/vault/secrets/${unknown}`, { name: 'x' }],
      ['POST', `/vault/secrets/${unknown}/status`, { status: 'outdated' }],
      ['POST', `/vault/secrets/${unknown}/archive`, undefined],
      ['POST', `/vault/secrets/${unknown}/reveal`, { field: 'password' }],
    ] as const) {
      const res = await client.send(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({
        code: 'VAULT_NOT_FOUND',
        error: expect.stringContaining('search the vault'),
      });
    }
    const record = await client.create({ ...login, name: 'Fields' });
    const res = await client.send('POST', `/vault/secrets/${record.id}/reveal`, { field: 'pin' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toContain('its fields are username, password');
  });

  it('refuses every route but GET /vault to a client without consent', async () => {
    const record = await client.create({ ...login, name: 'Consent' });
    for (const [method, path, body] of [
      ['GET', '/vault/secrets', undefined],
      ['POST', '/vault/secrets', login],
      ['GET', `/vault/secrets/${record.id}`, undefined],
      ['PATCH', `/vault/secrets/${record.id}`, { name: 'x' }],
      ['POST', `/vault/secrets/${record.id}/status`, { status: 'outdated' }],
      ['POST', `/vault/secrets/${record.id}/archive`, undefined],
      ['POST', `/vault/secrets/${record.id}/reveal`, { field: 'password' }],
      ['GET', '/vault/audit', undefined],
    ] as const) {
      const res = await client.send(method, path, body, { cookie: '' });
      expect(res.status, `${method} ${path}`).toBe(403);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({
        code: 'CONSENT_REQUIRED',
        error: expect.stringContaining('navi pair'),
      });
      expect(text).not.toContain(PASSWORD);
    }
    const after = await client.send('GET', `/vault/secrets/${record.id}`);
    expect(((await after.json()) as SecretRecord).name).toBe('Consent');
  });

  it('the audit log lists everything newest first, with a limit', async () => {
    const all = (await (await client.send('GET', '/vault/audit')).json()) as AuditList;
    expect(all.entries.length).toBeGreaterThanOrEqual(10);
    const times = all.entries.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.entries.every((e) => e.actor === 'user')).toBe(true);
    const two = (await (await client.send('GET', '/vault/audit?limit=2')).json()) as AuditList;
    expect(two.entries).toEqual(all.entries.slice(0, 2));
  });

  it('never writes a value to the server log', async () => {
    // Provoke what does get logged: refused requests, broken JSON that contains a value.
    await client.send('POST', '/vault/secrets', `{"name":"x","fields":[{"value":"${PASSWORD}"`);
    await client.send('POST', '/vault/secrets', { ...login, extra: PASSWORD });
    await client.send('GET', '/vault/secrets/not-an-id');
    const log = logLines.join('');
    expect(log).toContain('request refused');
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain('a-new-password-77');
  });
});

describe('a locked vault', () => {
  let navi: NaviHandle;
  let client: VaultClient;

  beforeAll(async () => {
    const dir = tempDir();
    // A key file that is a folder: the vault cannot be unlocked, and says how to fix it.
    mkdirSync(join(dir, 'not-a-key'));
    navi = await startNavi({ dir, settings: { GNEXUS_KEY_FILE: join(dir, 'not-a-key') } });
    client = await vaultClient(navi);
  });
  afterAll(async () => {
    await navi.close();
    rmSync(navi.dir, { recursive: true, force: true });
  });

  it('GET /vault says why it is locked and how to unlock it', async () => {
    const res = await fetch(`${navi.url}/vault`);
    expect(res.status).toBe(200);
    const state = (await res.json()) as VaultState;
    expect(state).toMatchObject({ state: 'locked', reason: expect.stringContaining('not-a-key') });
    expect(state.state === 'locked' && state.howToUnlock).toContain('GNEXUS_MASTER_KEY');
  });

  it('answers 423 VAULT_LOCKED with the unlock instructions on every other route', async () => {
    const state = (await (await fetch(`${navi.url}/vault`)).json()) as VaultState;
    const how = state.state === 'locked' ? state.howToUnlock : 'unlocked?';
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['GET', '/vault/secrets', undefined],
      ['POST', '/vault/secrets', login],
      ['GET', `/vault/secrets/${id}`, undefined],
      ['PATCH', `/vault/secrets/${id}`, { name: 'x' }],
      ['POST', `/vault/secrets/${id}/status`, { status: 'actual' }],
      ['POST', `/vault/secrets/${id}/archive`, undefined],
      ['POST', `/vault/secrets/${id}/reveal`, { field: 'password' }],
      ['GET', '/vault/audit', undefined],
    ] as const) {
      const res = await client.send(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(423);
      expect(await res.json()).toEqual({
        code: 'VAULT_LOCKED',
        error: expect.stringMatching(/^The vault is locked: .*not-a-key.*To unlock it, /),
      });
      expect((await client.send(method, path, body)).headers.get('cache-control')).toBe('no-store');
    }
    const res = await client.send('GET', '/vault/secrets');
    expect(((await res.json()) as { error: string }).error).toContain(how);
  });
});

describe('an audit log that cannot be written', () => {
  let navi: NaviHandle;
  let client: VaultClient;
  let auditPath: string;

  beforeAll(async () => {
    navi = await startNavi();
    auditPath = join(navi.dir, 'vault-audit.jsonl');
    client = await vaultClient(navi);
  });
  afterAll(async () => navi.close());

  it('answers 503 VAULT_AUDIT_FAILED, reveals nothing and changes nothing', async () => {
    const record = await client.create(login);
    // The log becomes a folder: appending to it fails (whatever the user's rights, root too).
    rmSync(auditPath);
    mkdirSync(auditPath);
    const reveal = await client.send('POST', `/vault/secrets/${record.id}/reveal`, { field: 'password' });
    expect(reveal.status).toBe(503);
    const text = await reveal.text();
    expect(text).not.toContain(PASSWORD);
    expect(JSON.parse(text)).toEqual({
      code: 'VAULT_AUDIT_FAILED',
      error: expect.stringContaining('GNEXUS_AUDIT_LOG'),
    });
    const create = await client.send('POST', '/vault/secrets', { ...login, name: 'Never stored' });
    expect(create.status).toBe(503);
    const rename = await client.send('PATCH', `/vault/secrets/${record.id}`, { name: 'Never renamed' });
    expect(rename.status).toBe(503);
    const list = (await (await client.send('GET', '/vault/secrets')).json()) as SecretList;
    expect(list.secrets.map((s) => s.name)).toEqual(['Router admin']);
    // Reading a log that is a folder is a failure of the disk, not of the request: 503, never 500.
    const audit = await client.send('GET', '/vault/audit');
    expect(audit.status).toBe(503);
    expect(((await audit.json()) as { code: string }).code).toBe('VAULT_UNAVAILABLE');
  });
});
