/**
 * The gnexus-creds tools through a real MCP client and server: the seven tools as a client lists
 * them, bad arguments of every kind refused before the vault is touched (each answer naming the
 * argument), and a reveal whose `_meta` and audit entry travel over the protocol.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CREDS_TOOL_NAMES,
  openTestVault,
  type TestVault,
  textOf,
} from '../../../test/support/gnexus-vault.js';
import { MAX_FIELDS, MAX_REASON_CHARS, MAX_VALUE_BYTES } from './input.js';

const PASSWORD = 'hunter2-but-longer';
let t: TestVault;
let client: Client;
let id: string;

const call = async (name: string, args: unknown, meta?: Record<string, unknown>) =>
  (await client.callTool({
    name,
    arguments: args as Record<string, unknown>,
    ...(meta && { _meta: meta }),
  })) as CallToolResult;

/** The vault as a whole: any change, or any audit entry, alters it. */
function vaultState(): string {
  return JSON.stringify(t.vault.search({ limit: 200 })) + readFileSync(t.options.auditLog, 'utf8');
}

beforeAll(async () => {
  t = openTestVault();
  const server = t.creds.createServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(clientSide);
  id = t.vault.create(
    {
      name: 'Router',
      type: 'password',
      fields: [
        { name: 'username', value: 'admin', secret: false },
        { name: 'password', value: PASSWORD, secret: true },
      ],
    },
    { actor: 'user' },
  ).id;
});

afterAll(async () => {
  await client.close();
  t.remove();
});

describe('the tools as a client sees them', () => {
  it('lists the seven tools with their annotations and limits', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(CREDS_TOOL_NAMES);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['search_secrets', 'get_secret', 'reveal_secret'])
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    for (const name of ['create_secret', 'update_secret', 'set_secret_status', 'archive_secret'])
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: false });
    expect(byName.get('archive_secret')?.annotations?.destructiveHint).toBe(true);
    expect(byName.get('reveal_secret')?.inputSchema.required?.sort()).toEqual(['field', 'id', 'reason']);
    expect(byName.get('create_secret')?.inputSchema.properties?.fields).toMatchObject({
      maxItems: MAX_FIELDS,
      minItems: 1,
    });
    expect(byName.get('reveal_secret')?.inputSchema.properties?.reason).toMatchObject({
      maxLength: MAX_REASON_CHARS,
    });
    // Every description teaches use by reference.
    for (const name of ['search_secrets', 'get_secret', 'reveal_secret'])
      expect(byName.get(name)?.description).toContain('{{secret:<id>.<field>}}');
  });
});

describe('bad arguments are refused before the vault is touched', () => {
  const field = (value: unknown, secret?: unknown) => ({ name: 'password', value, secret });
  const create = (extra: Record<string, unknown>) => ({
    name: 'New',
    type: 'password',
    fields: [field('x')],
    ...extra,
  });
  const hostileIds: unknown[] = [
    '../../etc/passwd',
    "' OR 1=1 --",
    '00000000-0000-4000-8000-00000000000g',
    `${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/../x`,
    '',
    'x'.repeat(100_000),
    42,
    null,
    { $ne: null },
    ['a'],
  ];

  const long = (n: number) => 'x'.repeat(n);
  const manyFields = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => ({ name: `f${i}`, value: 'v' }));
  // [what is wrong, tool, arguments ("ID" stands for a real secret's id), the path the answer names]
  it.each([
    ['a number as query', 'search_secrets', { query: 42 }, 'query'],
    ['an oversized query', 'search_secrets', { query: long(201) }, 'query'],
    ['an unknown type', 'search_secrets', { type: 'bogus' }, 'type'],
    ['status archived', 'search_secrets', { status: 'archived' }, 'status'],
    ['an empty tag', 'search_secrets', { tag: '' }, 'tag'],
    ['an oversized tag', 'search_secrets', { tag: long(65) }, 'tag'],
    ['limit 0', 'search_secrets', { limit: 0 }, 'limit'],
    ['limit 201', 'search_secrets', { limit: 201 }, 'limit'],
    ['a fractional limit', 'search_secrets', { limit: 1.5 }, 'limit'],
    ['a limit as text', 'search_secrets', { limit: '10' }, 'limit'],
    ['no id', 'get_secret', {}, 'id'],
    ['no id', 'reveal_secret', { field: 'password', reason: 'r' }, 'id'],
    ['no field', 'reveal_secret', { id: 'ID', reason: 'r' }, 'field'],
    ['no reason', 'reveal_secret', { id: 'ID', field: 'password' }, 'reason'],
    ['an empty reason', 'reveal_secret', { id: 'ID', field: 'password', reason: '  ' }, 'reason'],
    [
      'an oversized reason',
      'reveal_secret',
      { id: 'ID', field: 'password', reason: long(MAX_REASON_CHARS + 1) },
      'reason',
    ],
    ['a path as field', 'reveal_secret', { id: 'ID', field: '../password', reason: 'r' }, 'field'],
    ['a field with a space', 'reveal_secret', { id: 'ID', field: 'pass word', reason: 'r' }, 'field'],
    ['an oversized field', 'reveal_secret', { id: 'ID', field: long(65), reason: 'r' }, 'field'],
    ['a list as field', 'reveal_secret', { id: 'ID', field: ['password'], reason: 'r' }, 'field'],
    ['no name', 'create_secret', { type: 'password', fields: [field('x')] }, 'name'],
    ['an empty name', 'create_secret', create({ name: ' ' }), 'name'],
    ['an oversized name', 'create_secret', create({ name: long(201) }), 'name'],
    ['an object as name', 'create_secret', create({ name: { toString: 'x' } }), 'name'],
    ['no type', 'create_secret', create({ type: undefined }), 'type'],
    ['a type in capitals', 'create_secret', create({ type: 'PASSWORD' }), 'type'],
    ['no fields', 'create_secret', create({ fields: undefined }), 'fields'],
    ['no field in fields', 'create_secret', create({ fields: [] }), 'fields'],
    ['fields as text', 'create_secret', create({ fields: 'password=x' }), 'fields'],
    ['too many fields', 'create_secret', create({ fields: manyFields }), 'fields'],
    ['an empty value', 'create_secret', create({ fields: [field('')] }), 'fields[0].value'],
    ['a number as value', 'create_secret', create({ fields: [field(12345)] }), 'fields[0].value'],
    [
      'an oversized value',
      'create_secret',
      create({ fields: [field(long(MAX_VALUE_BYTES + 1))] }),
      'fields[0].value',
    ],
    // Under the limit in characters, over it in bytes.
    [
      'a value over the limit in bytes',
      'create_secret',
      create({ fields: [field('é'.repeat(MAX_VALUE_BYTES / 2 + 1))] }),
      'fields[0].value',
    ],
    ['secret as text', 'create_secret', create({ fields: [field('x', 'yes')] }), 'fields[0].secret'],
    [
      'an empty field name',
      'create_secret',
      create({ fields: [{ name: '', value: 'x' }] }),
      'fields[0].name',
    ],
    [
      'a field name with a slash',
      'create_secret',
      create({ fields: [{ name: 'a/b', value: 'x' }] }),
      'fields[0].name',
    ],
    ['tags as text', 'create_secret', create({ tags: 'work' }), 'tags'],
    [
      'too many tags',
      'create_secret',
      create({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }),
      'tags',
    ],
    ['an oversized tag', 'create_secret', create({ tags: [long(65)] }), 'tags[0]'],
    ['no id', 'update_secret', { name: 'x' }, 'id'],
    ['an empty name', 'update_secret', { id: 'ID', name: '' }, 'name'],
    [
      'an oversized value',
      'update_secret',
      { id: 'ID', fields: [field(long(MAX_VALUE_BYTES + 1))] },
      'fields[0].value',
    ],
    ['remove_fields as text', 'update_secret', { id: 'ID', remove_fields: 'password' }, 'remove_fields'],
    ['a path in remove_fields', 'update_secret', { id: 'ID', remove_fields: ['../x'] }, 'remove_fields[0]'],
    ['a number as tag', 'update_secret', { id: 'ID', tags: [1] }, 'tags[0]'],
    ['no status', 'set_secret_status', { id: 'ID' }, 'status'],
    ['an unknown status', 'set_secret_status', { id: 'ID', status: 'deleted' }, 'status'],
    ['no id', 'set_secret_status', { status: 'outdated' }, 'id'],
    ['no id', 'archive_secret', {}, 'id'],
    ['an oversized reason', 'archive_secret', { id: 'ID', reason: long(MAX_REASON_CHARS + 1) }, 'reason'],
    ['a number as reason', 'archive_secret', { id: 'ID', reason: 7 }, 'reason'],
  ])('refuses %s for %s, naming the argument', async (_what, tool, rawArgs, path) => {
    const before = vaultState();
    const args = JSON.parse(JSON.stringify(rawArgs).replaceAll('"ID"', JSON.stringify(id)));
    const result = await call(tool, args);
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain(`Input validation error: Invalid arguments for tool ${tool}: `);
    expect(
      text.split('\n').some((line) => line.endsWith(` at ${path}`)),
      text,
    ).toBe(true);
    expect(vaultState()).toBe(before);
  });

  it.each(['get_secret', 'reveal_secret', 'update_secret', 'set_secret_status', 'archive_secret'])(
    '%s refuses hostile ids, saying what an id looks like',
    async (tool) => {
      const before = vaultState();
      for (const hostile of hostileIds) {
        const result = await call(tool, {
          id: hostile,
          field: 'password',
          reason: 'asked',
          name: 'x',
          status: 'outdated',
        });
        expect(result.isError, JSON.stringify(hostile).slice(0, 60)).toBe(true);
        const text = textOf(result);
        expect(text).toContain('Input validation error');
        expect(text).toMatch(/(: |\n)id (must|is) [^\n]* at id(\n|$)/);
        if (typeof hostile === 'string') expect(text).toContain('id must be the id of a secret (a UUID');
        expect(text).not.toContain(PASSWORD);
      }
      expect(vaultState()).toBe(before);
    },
  );

  it('refuses arguments that are not an object at all', async () => {
    const result = await client
      .callTool({ name: 'get_secret', arguments: 'id' as never })
      .catch((err) => err);
    expect(result instanceof Error || (result as CallToolResult).isError).toBe(true);
  });
});

describe('reveal_secret over the protocol', () => {
  it('carries _meta navi/revealed back, and the audit entry names the session from the request _meta', async () => {
    const session = 'a2b3c4d5-0000-4000-8000-000000000001';
    const result = await call(
      'reveal_secret',
      { id, field: 'password', reason: 'the person asked to see it' },
      { 'navi/session_id': session },
    );
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['navi/revealed']).toEqual([{ label: 'Router.password', value: PASSWORD }]);
    expect(t.vault.auditLog({ limit: 1 })[0]).toMatchObject({
      action: 'reveal',
      secret_id: id,
      field: 'password',
      actor: 'agent',
      tool: 'reveal_secret',
      session_id: session,
      reason: 'the person asked to see it',
    });
  });

  it('no other tool ever answers with a value or _meta', async () => {
    const answers = [
      await call('search_secrets', {}),
      await call('get_secret', { id }),
      await call('update_secret', { id, tags: ['net'] }),
      await call('set_secret_status', { id, status: 'outdated' }),
    ];
    for (const answer of answers) {
      expect(answer.isError).toBeFalsy();
      expect(JSON.stringify(answer)).not.toContain(PASSWORD);
      expect(answer._meta).toBeUndefined();
    }
  });
});
