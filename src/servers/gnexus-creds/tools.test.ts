/**
 * The seven gnexus-creds tools on a real vault in a temporary folder: what each answers, that
 * no secret value leaves except through reveal_secret, what the audit log records (with the
 * session named in the request's `_meta`), and archived secrets answering as unknown ones.
 */
import { readFileSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestVault, type TestVault, textOf } from '../../../test/support/gnexus-vault.js';
import { MASK, secretReference } from '../../vault/index.js';
import { USE_BY_REFERENCE } from './present.js';

const PASSWORD = 'pa55-w0rd-nobody-may-read';
const TOKEN = 'ghp_0123456789abcdefghijklmnopqrstuvwxyz';
const SESSION = { 'navi/session_id': '5f0c1d2e-3a4b-4c5d-8e6f-0a1b2c3d4e5f' };
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let t: TestVault;

/** The id a create_secret result names. */
function idOf(result: CallToolResult): string {
  const id = textOf(result).match(/ id: ([0-9a-f-]{36})/)?.[1];
  if (!id) throw new Error(`no id in ${textOf(result)}`);
  return id;
}

async function create(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const result = await t.call(
    'create_secret',
    {
      name,
      type: 'password',
      tags: ['work'],
      fields: [
        { name: 'username', value: 'alice', secret: false },
        { name: 'password', value: PASSWORD },
      ],
      ...extra,
    },
    SESSION,
  );
  expect(result.isError, textOf(result)).toBeFalsy();
  return idOf(result);
}

function auditLines(): Record<string, unknown>[] {
  return readFileSync(t.options.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(() => {
  t = openTestVault();
});
afterAll(() => t.remove());

describe('create_secret', () => {
  it('stores the secret and answers with it masked, its id and references, never the value', async () => {
    const result = await t.call(
      'create_secret',
      {
        name: 'Gitea admin',
        type: 'password',
        tags: ['work', 'git'],
        fields: [
          { name: 'username', value: 'alice', secret: false },
          { name: 'password', value: PASSWORD },
        ],
      },
      SESSION,
    );
    const text = textOf(result);
    const id = idOf(result);
    expect(result.isError).toBeFalsy();
    expect(text).toContain('Stored the secret:');
    expect(text).toContain('Gitea admin');
    expect(text).toContain('type: password');
    expect(text).toContain('tags: work, git');
    expect(text).toContain('status: actual');
    expect(text).toMatch(/created: \d{4}-\d\d-\d\dT/);
    expect(text).toContain('username: alice');
    expect(text).toContain(`password: ${MASK} (secret; use ${secretReference(id, 'password')})`);
    expect(text).toContain(USE_BY_REFERENCE);
    expect(text).not.toContain(PASSWORD);
    expect(t.vault.get(id).fields.find((f) => f.name === 'password')?.secret).toBe(true);
    expect(auditLines().at(-1)).toMatchObject({
      action: 'create',
      secret_id: id,
      actor: 'agent',
      tool: 'create_secret',
      session_id: SESSION['navi/session_id'],
    });
    expect(readFileSync(t.options.auditLog, 'utf8')).not.toContain(PASSWORD);
  });

  it("passes the vault's refusal on, saying what to fix", async () => {
    const result = await t.call('create_secret', {
      name: 'Twice',
      type: 'note',
      fields: [
        { name: 'text', value: 'a' },
        { name: 'text', value: 'b' },
      ],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^create_secret was refused: Field "text" appears twice; give each field/);
  });
});

describe('search_secrets and get_secret', () => {
  let tokenId: string;
  beforeAll(async () => {
    const made = await t.call('create_secret', {
      name: 'GitHub deploy token',
      type: 'api_token',
      tags: ['ci'],
      fields: [{ name: 'token', value: TOKEN }],
    });
    tokenId = idOf(made);
  });

  it('finds by words, type and tag, values masked, with the line about references', async () => {
    const byWords = textOf(await t.call('search_secrets', { query: 'github' }));
    expect(byWords).toMatch(/^1 secret matching the words "github", status actual or outdated:/);
    expect(byWords).toContain(`token: ${MASK} (secret; use ${secretReference(tokenId, 'token')})`);
    expect(byWords).toContain(USE_BY_REFERENCE);
    expect(byWords).not.toContain(TOKEN);

    const byType = textOf(await t.call('search_secrets', { type: 'api_token' }));
    expect(byType).toContain('GitHub deploy token');
    expect(byType).not.toContain('Gitea admin');
    const byTag = textOf(await t.call('search_secrets', { tag: 'ci' }));
    expect(byTag).toContain('GitHub deploy token');
    const all = textOf(await t.call('search_secrets', {}));
    expect(all).toContain('Gitea admin');
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(TOKEN);
  });

  it('never matches a secret value, and says what to try when nothing matches', async () => {
    const result = await t.call('search_secrets', { query: TOKEN.slice(0, 12) });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(
      'No secret matches the words "ghp_01234567", status actual or outdated. Try fewer words or no filter; ' +
        'to store a new one, use create_secret.',
    );
  });

  it('stops at the limit and says there may be more', async () => {
    const text = textOf(await t.call('search_secrets', { limit: 1 }));
    expect(text).toMatch(/^1 secret matching status actual or outdated \(the first 1; narrow the search/);
  });

  it('get_secret shows one secret by id, in any letter case', async () => {
    const text = textOf(await t.call('get_secret', { id: tokenId.toUpperCase() }));
    expect(text).toContain('GitHub deploy token');
    expect(text).toContain(`id: ${tokenId}`);
    expect(text).not.toContain(TOKEN);
  });

  it('get_secret of an unknown id says so and how to find the id', async () => {
    const result = await t.call('get_secret', { id: UNKNOWN_ID });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `get_secret: No secret with id "${UNKNOWN_ID}"; search the vault by name to find the id of the secret you mean.`,
    );
  });
});

describe('reveal_secret', () => {
  it('hands out the value after the audit entry naming the session, and names it in _meta', async () => {
    const id = await create('Reveal me');
    const before = auditLines().length;
    const result = await t.call(
      'reveal_secret',
      { id, field: 'password', reason: 'the person wants to type it on their phone' },
      SESSION,
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain(PASSWORD);
    expect(textOf(result)).toContain('Reveal me.password');
    expect(result._meta).toEqual({ 'navi/revealed': [{ label: 'Reveal me.password', value: PASSWORD }] });
    const entries = auditLines();
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({
      action: 'reveal',
      secret_id: id,
      field: 'password',
      actor: 'agent',
      tool: 'reveal_secret',
      reason: 'the person wants to type it on their phone',
      session_id: SESSION['navi/session_id'],
    });
  });

  it('leaves out a session id that is missing or not a plain token', async () => {
    const id = await create('Session check');
    await t.call('reveal_secret', { id, field: 'password', reason: 'asked' });
    expect(auditLines().at(-1)).not.toHaveProperty('session_id');
    for (const hostile of ['../../etc/passwd', 'x'.repeat(500), 42, { nested: true }]) {
      await t.call(
        'reveal_secret',
        { id, field: 'password', reason: 'asked' },
        { 'navi/session_id': hostile },
      );
      expect(auditLines().at(-1)).toMatchObject({ action: 'reveal', secret_id: id });
      expect(auditLines().at(-1)).not.toHaveProperty('session_id');
    }
  });

  it('refuses a field the secret does not have, or one that is not secret, naming the fields', async () => {
    const id = await create('Fields check');
    const before = auditLines().length;
    const missing = await t.call('reveal_secret', { id, field: 'pin', reason: 'asked' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe(
      'The secret "Fields check" has no field "pin"; its fields are username, password.',
    );
    const plain = await t.call('reveal_secret', { id, field: 'username', reason: 'asked' });
    expect(plain.isError).toBe(true);
    expect(textOf(plain)).toContain('is not secret: get_secret shows its value');
    expect(auditLines()).toHaveLength(before);
  });
});

describe('update_secret', () => {
  it('replaces values keeping each field secret or plain, adds secret fields, removes fields', async () => {
    const id = await create('Rotating');
    const result = await t.call(
      'update_secret',
      {
        id,
        name: 'Rotated',
        tags: ['home'],
        fields: [
          { name: 'password', value: 'n3w-pa55' },
          { name: 'username', value: 'bob' },
          { name: 'pin', value: '1234' },
        ],
      },
      SESSION,
    );
    expect(result.isError, textOf(result)).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain('Updated the secret:');
    expect(text).toContain('Rotated');
    expect(text).toContain('tags: home');
    expect(text).toContain('username: bob');
    expect(text).toContain(`pin: ${MASK}`);
    expect(text).not.toContain('n3w-pa55');
    expect(text).not.toContain('1234');
    expect(auditLines().at(-1)).toMatchObject({
      action: 'update',
      secret_id: id,
      tool: 'update_secret',
      session_id: SESSION['navi/session_id'],
    });
    expect(t.vault.reveal(id, 'password', { actor: 'user' })).toBe('n3w-pa55');

    const removed = await t.call('update_secret', { id, remove_fields: ['pin'], type: 'custom' });
    expect(textOf(removed)).not.toContain('pin:');
    expect(textOf(removed)).toContain('type: custom');
    const madePlain = await t.call('update_secret', {
      id,
      fields: [{ name: 'password', value: 'shown', secret: false }],
    });
    expect(textOf(madePlain)).toContain('password: shown');
  });

  it('refuses a call that changes nothing, and a change the vault refuses', async () => {
    const id = await create('Unchanged');
    const nothing = await t.call('update_secret', { id });
    expect(nothing.isError).toBe(true);
    expect(textOf(nothing)).toBe(
      'Nothing to change: give at least one of name, type, tags, fields or remove_fields.',
    );
    const empty = await t.call('update_secret', { id, remove_fields: ['username', 'password'] });
    expect(empty.isError).toBe(true);
    expect(textOf(empty)).toMatch(
      /^update_secret was refused: A secret keeps 1 to 50 fields .*keep at least one field/,
    );
    const gone = await t.call('update_secret', { id, remove_fields: ['nope'] });
    expect(textOf(gone)).toContain('has no field "nope"');
    expect(t.vault.get(id).fields.map((f) => f.name)).toEqual(['username', 'password']);
  });
});

describe('set_secret_status', () => {
  it('marks a secret outdated and back, and search filters by it', async () => {
    const id = await create('Old VPN');
    const outdated = await t.call('set_secret_status', { id, status: 'outdated' }, SESSION);
    expect(textOf(outdated)).toMatch(/^Marked "Old VPN" as outdated:/);
    expect(auditLines().at(-1)).toMatchObject({
      action: 'status',
      detail: 'outdated',
      tool: 'set_secret_status',
    });
    expect(textOf(await t.call('search_secrets', { query: 'vpn', status: 'outdated' }))).toContain('Old VPN');
    expect(textOf(await t.call('search_secrets', { query: 'vpn', status: 'actual' }))).toMatch(/^No secret/);
    await t.call('set_secret_status', { id, status: 'actual' });
    expect(t.vault.get(id).status).toBe('actual');
  });
});

describe('an archived secret', () => {
  /** What each tool answers for `id`, with the id itself blanked out. */
  async function answers(id: string): Promise<Record<string, { isError: boolean; text: string }>> {
    const calls: [string, Record<string, unknown>][] = [
      ['get_secret', { id }],
      ['reveal_secret', { id, field: 'password', reason: 'asked' }],
      ['update_secret', { id, name: 'Changed' }],
      ['set_secret_status', { id, status: 'actual' }],
      ['set_secret_status', { id, status: 'archived' }],
      ['archive_secret', { id }],
    ];
    const out: Record<string, { isError: boolean; text: string }> = {};
    for (const [tool, args] of calls) {
      const result = await t.call(tool, args);
      out[`${tool} ${JSON.stringify(args.status ?? '')}`] = {
        isError: result.isError === true,
        text: textOf(result).replaceAll(id, '<id>'),
      };
    }
    return out;
  }

  it.each(['archive_secret', 'set_secret_status'])(
    'is invisible to every tool after %s, which answer as for an unknown id',
    async (how) => {
      const id = await create(`Retired by ${how}`);
      const result =
        how === 'archive_secret'
          ? await t.call('archive_secret', { id, reason: 'the service is gone' }, SESSION)
          : await t.call('set_secret_status', { id, status: 'archived' }, SESSION);
      expect(textOf(result)).toBe(
        `Archived "Retired by ${how}" (${id}). No tool can see it any more; the person can still find it on the Vault page.`,
      );
      expect(auditLines().at(-1)).toMatchObject({ action: 'archive', secret_id: id, actor: 'agent' });

      const archived = await answers(id);
      const unknown = await answers(UNKNOWN_ID);
      expect(archived).toEqual(unknown);
      for (const answer of Object.values(archived)) expect(answer.isError).toBe(true);
      expect(textOf(await t.call('search_secrets', { query: `retired by ${how}` }))).toMatch(/^No secret/);
      expect(textOf(await t.call('search_secrets', {}))).not.toContain(id);
      // The person still has it.
      expect(t.vault.get(id, { includeArchived: true }).name).toBe(`Retired by ${how}`);
    },
  );
});

describe('a locked vault', () => {
  let locked: TestVault;
  let lockedId: string;
  beforeAll(async () => {
    lockedId = await create('Behind the lock');
    // The same vault file, opened with another key.
    locked = openTestVault(t.dir, 'not the key this vault was made with');
  });
  afterAll(() => locked.vault.close());

  it.each([
    ['search_secrets', {}],
    ['get_secret', { id: UNKNOWN_ID }],
    ['reveal_secret', { id: UNKNOWN_ID, field: 'password', reason: 'asked' }],
    ['create_secret', { name: 'New', type: 'note', fields: [{ name: 'text', value: 'x' }] }],
    ['update_secret', { id: UNKNOWN_ID, name: 'x' }],
    ['set_secret_status', { id: UNKNOWN_ID, status: 'outdated' }],
    ['archive_secret', { id: UNKNOWN_ID }],
  ])('%s says the vault is locked, why, and how to unlock it', async (tool, args) => {
    expect(locked.vault.status().state).toBe('locked');
    const result = await locked.call(tool, {
      ...args,
      ...(tool !== 'search_secrets' && 'id' in args && { id: lockedId }),
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(new RegExp(`^The secrets vault is locked, so ${tool} cannot run: `));
    expect(text).toContain('GNEXUS_MASTER_KEY does not unlock the vault');
    expect(text).toContain('Set GNEXUS_MASTER_KEY to the key the vault was created with');
    expect(text).toContain('restart Navi');
    expect(text).not.toContain(PASSWORD);
  });
});
