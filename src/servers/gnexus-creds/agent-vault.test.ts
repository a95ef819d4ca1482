/**
 * Navi's own records in the vault (the OAuth tokens of MCP servers, tagged MCP_OAUTH_TAG) do
 * not exist for the gnexus-creds tools, on a real vault in a temporary folder: searches leave
 * them out, every tool answers for their id as for an unknown one, and no secret can be given
 * the tag. Navi's own view of the vault is unchanged.
 */
import { readFileSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestVault, type TestVault, textOf } from '../../../test/support/gnexus-vault.js';
import { MCP_OAUTH_TAG } from '../../protocol/vault.js';

const TOKENS = '{"tokens":{"access_token":"at-0123456789-nobody-may-read","refresh_token":"rt-9876"}}';
const PASSWORD = 'pa55-w0rd-of-an-ordinary-secret';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let t: TestVault;
let oauthId: string;
let ordinaryId: string;

function idOf(result: CallToolResult): string {
  const id = textOf(result).match(/ id: ([0-9a-f-]{36})/)?.[1];
  if (!id) throw new Error(`no id in ${textOf(result)}`);
  return id;
}

beforeAll(async () => {
  t = openTestVault();
  const made = await t.call('create_secret', {
    name: 'Docs admin',
    type: 'api_token',
    tags: ['work'],
    fields: [
      { name: 'username', value: 'docs', secret: false },
      { name: 'password', value: PASSWORD },
    ],
  });
  expect(made.isError, textOf(made)).toBeFalsy();
  ordinaryId = idOf(made);
  // As Navi's token store writes it, after the person's secret: the newest change, listed first.
  oauthId = t.vault.create(
    {
      name: 'MCP OAuth: docs',
      type: 'api_token',
      tags: [MCP_OAUTH_TAG],
      fields: [
        { name: 'server', value: 'docs', secret: false },
        { name: 'record', value: TOKENS, secret: true },
      ],
    },
    { actor: 'navi', reason: 'OAuth tokens of MCP server docs' },
  ).id;
});
afterAll(() => t.remove());

describe("Navi's MCP OAuth records, to the gnexus-creds tools", () => {
  it.each([
    [{}],
    [{ query: 'mcp oauth' }],
    [{ query: 'docs' }],
    [{ type: 'api_token' }],
    [{ tag: MCP_OAUTH_TAG }],
    [{ tag: MCP_OAUTH_TAG.toUpperCase() }],
    [{ limit: 1 }],
  ])('are left out of search_secrets %j', async (args) => {
    const text = textOf(await t.call('search_secrets', args));
    expect(text).not.toContain(oauthId);
    expect(text).not.toContain('MCP OAuth');
    expect(text).not.toContain(`tags: ${MCP_OAUTH_TAG}`);
    if ('tag' in args) expect(text).toMatch(/^No secret matches tag /);
  });

  it('leave the other secrets found, and do not take places of the limit', async () => {
    for (const args of [{}, { query: 'docs' }, { type: 'api_token' }, { limit: 1 }]) {
      const text = textOf(await t.call('search_secrets', args));
      expect(text).toMatch(/^1 secret matching/);
      expect(text).toContain(ordinaryId);
    }
  });

  it('answer every tool as an unknown id does, and stay untouched', async () => {
    const calls: [string, (id: string) => Record<string, unknown>][] = [
      ['get_secret', (id) => ({ id })],
      ['reveal_secret', (id) => ({ id, field: 'record', reason: 'the person asked' })],
      ['update_secret', (id) => ({ id, name: 'Mine now', fields: [{ name: 'record', value: 'x' }] })],
      ['update_secret', (id) => ({ id, tags: [] })],
      ['set_secret_status', (id) => ({ id, status: 'outdated' })],
      ['set_secret_status', (id) => ({ id, status: 'archived' })],
      ['archive_secret', (id) => ({ id, reason: 'tidy up' })],
    ];
    const auditBefore = readFileSync(t.options.auditLog, 'utf8');
    for (const [tool, args] of calls) {
      const hidden = await t.call(tool, args(oauthId.toUpperCase()));
      const unknown = await t.call(tool, args(UNKNOWN_ID));
      expect(hidden.isError, tool).toBe(true);
      expect(textOf(hidden).replaceAll(oauthId, '<id>')).toBe(textOf(unknown).replaceAll(UNKNOWN_ID, '<id>'));
      expect(textOf(hidden)).toMatch(new RegExp(`^${tool}: No secret with id `));
      expect(JSON.stringify(hidden)).not.toContain('at-0123456789');
    }
    // Nothing was revealed or changed: not one audit entry.
    expect(readFileSync(t.options.auditLog, 'utf8')).toBe(auditBefore);
    const record = t.vault.get(oauthId);
    expect(record).toMatchObject({ name: 'MCP OAuth: docs', status: 'actual', tags: [MCP_OAUTH_TAG] });
  });

  it.each([[MCP_OAUTH_TAG], [` ${MCP_OAUTH_TAG.toUpperCase()} `]])(
    'cannot be made by create_secret with the tag %j',
    async (tag) => {
      const result = await t.call('create_secret', {
        name: 'MCP OAuth: evil',
        type: 'api_token',
        tags: ['work', tag],
        fields: [{ name: 'record', value: '{"tokens":{"access_token":"planted"}}' }],
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `create_secret was refused: The tags ${MCP_OAUTH_TAG} are reserved for the records Navi keeps for itself ` +
          '(such as the OAuth tokens of MCP servers); choose other tags.',
      );
      expect(t.vault.search({ query: 'evil' })).toEqual([]);
    },
  );

  it('cannot be made by giving an ordinary secret the tag', async () => {
    const result = await t.call('update_secret', { id: ordinaryId, tags: ['work', MCP_OAUTH_TAG] });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^update_secret was refused: The tags navi-mcp-oauth are reserved/);
    expect(t.vault.get(ordinaryId).tags).toEqual(['work']);
  });

  it('leave the other secrets to every tool', async () => {
    expect(textOf(await t.call('get_secret', { id: ordinaryId }))).toContain('Docs admin');
    const revealed = await t.call('reveal_secret', { id: ordinaryId, field: 'password', reason: 'asked' });
    expect(textOf(revealed)).toContain(PASSWORD);
    const updated = await t.call('update_secret', { id: ordinaryId, tags: ['work', 'docs'] });
    expect(textOf(updated)).toContain('tags: work, docs');
    const outdated = await t.call('set_secret_status', { id: ordinaryId, status: 'outdated' });
    expect(textOf(outdated)).toMatch(/^Marked "Docs admin" as outdated:/);
    const archived = await t.call('archive_secret', { id: ordinaryId });
    expect(textOf(archived)).toMatch(/^Archived "Docs admin"/);
  });

  it('stay in Navi’s own view of the vault, where the person can archive them', () => {
    expect(t.vault.search({ tag: MCP_OAUTH_TAG }).map((s) => s.id)).toEqual([oauthId]);
    expect(t.vault.reveal(oauthId, 'record', { actor: 'navi' })).toBe(TOKENS);
    t.vault.archive(oauthId, { actor: 'user' });
    expect(t.vault.get(oauthId, { includeArchived: true }).status).toBe('archived');
  });
});
