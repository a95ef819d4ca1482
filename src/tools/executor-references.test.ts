/**
 * Vault references in tool arguments, on a real vault in a temporary folder: substituted only
 * when the tool runs, only for tools the profile lets use secrets, masked in what comes back,
 * and revealed values shown once then masked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../protocol/events.js';
import { SecretMasker } from '../util/secret-masker.js';
import { openVault } from '../vault/index.js';
import type { Vault } from '../vault/types.js';
import { ToolExecutor } from './executor.js';
import { ToolRegistry } from './registry.js';
import { findReferences, substituteReferences } from './secret-references.js';
import { testContext, testProfile } from './test-helpers.js';
import { ok, type ToolDefinition, type ToolParams } from './types.js';

const VALUE = 'pw-7d1e5c0a93b2-PLANTED';

describe('secret references in tool calls', () => {
  const dir = mkdtempSync(join(tmpdir(), 'navi-refs-'));
  let vault: Vault;
  let ref: string;
  let shortRef: string;
  let id: string;

  beforeAll(() => {
    vault = openVault({
      path: join(dir, 'vault.db'),
      keyFile: join(dir, 'vault.key'),
      masterKey: '',
      auditLog: join(dir, 'audit.jsonl'),
    });
    const created = vault.create(
      {
        name: 'Mail',
        type: 'password',
        fields: [
          { name: 'password', value: VALUE, secret: true },
          { name: 'pin', value: '123', secret: true },
        ],
      },
      { actor: 'user' },
    );
    id = created.id;
    ref = created.fields[0]!.reference!;
    shortRef = created.fields[1]!.reference!;
  });
  afterAll(() => {
    vault.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function setup(tools: Partial<ToolDefinition>[]) {
    const registry = new ToolRegistry();
    const received: ToolParams[] = [];
    for (const t of tools)
      registry.register({
        source: 'builtin',
        tool: {
          name: 'echo',
          description: 'Repeats its text.',
          parameters: { type: 'object', properties: { text: { type: 'string' }, deep: { type: 'object' } } },
          execute: async (params) => {
            received.push(params);
            return ok(`got ${String(params.text)}`);
          },
          ...t,
        } as ToolDefinition,
      });
    const secrets = new SecretMasker();
    const executor = new ToolExecutor({
      registry,
      settings: { TOOL_TIMEOUT_MS: 5000, TOOL_MAX_OUTPUT_CHARS: 10_000 },
      logger: pino({ level: 'silent' }),
      secrets,
      references: {
        resolve: (sid, field, use) =>
          vault.resolve(sid, field, { actor: 'agent', session_id: use.sessionId, tool: use.tool }),
      },
    });
    return { executor, received, secrets };
  }

  it('finds references at any depth and substitutes only known ones', () => {
    const params = { text: `a ${ref} b ${ref}`, deep: { list: [ref, 'plain'], n: 3 } };
    expect(findReferences(params).map((r) => r.text)).toEqual([ref]);
    const out = substituteReferences(params, new Map([[ref, 'V']]));
    expect(out).toEqual({ text: 'a V b V', deep: { list: ['V', 'plain'], n: 3 } });
    expect(params.text).toContain(ref);
    expect(findReferences({ text: '{{secret:not-a-uuid.password}} {{secret:x}}' })).toEqual([]);
  });

  it('gives the tool the value, masks it on the way back, and audits the use', async () => {
    const { executor, received } = setup([{}]);
    const events: AgentEvent[] = [];
    const ctx = testContext({ sessionId: 's-1', emit: (e) => events.push(e) });
    const result = await executor.execute(
      { id: 'c1', name: 'echo', arguments: { text: `login ${ref}` } },
      ctx,
      testProfile({ secret_tools: ['echo'] }),
    );
    expect(received).toEqual([{ text: `login ${VALUE}` }]);
    expect(result).toMatchObject({ success: true, output: 'got login [secret hidden: Mail.password]' });
    const audit = vault.auditLog({ secret_id: id }).find((e) => e.action === 'use');
    expect(audit).toMatchObject({ field: 'password', session_id: 's-1', tool: 'echo', actor: 'agent' });
    expect(JSON.stringify(audit)).not.toContain(VALUE);
  });

  it("refuses a tool outside the profile's secret_tools, and the default list has no echo", async () => {
    const { executor, received } = setup([{}]);
    for (const profile of [testProfile(), testProfile({ secret_tools: ['terminal'] })]) {
      const result = await executor.execute(
        { id: 'c1', name: 'echo', arguments: { text: ref } },
        testContext(),
        profile,
      );
      expect(result.success).toBe(false);
      expect(result.metadata).toEqual({ refused: 'policy' });
      expect(result.output).toMatch(
        /may not use vault secrets by reference under profile "test" \(tools that may: /,
      );
    }
    expect(received).toEqual([]);
  });

  it('refuses unknown, archived and too-short secrets without running the tool', async () => {
    const { executor, received } = setup([{}]);
    const profile = testProfile({ secret_tools: ['*'] });
    const other = vault.create(
      {
        name: 'Gone',
        type: 'api_token',
        fields: [{ name: 'token', value: 'gone-value-0000', secret: true }],
      },
      { actor: 'user' },
    );
    vault.archive(other.id, { actor: 'user' });
    for (const text of [
      '{{secret:00000000-0000-4000-8000-000000000000.password}}',
      `{{secret:${other.id}.token}}`,
      `{{secret:${id}.nofield}}`,
      shortRef,
    ]) {
      const result = await executor.execute(
        { id: 'c', name: 'echo', arguments: { text } },
        testContext(),
        profile,
      );
      expect(result.success, text).toBe(false);
      expect(result.metadata).toEqual({ refused: 'secrets' });
      expect(result.output).toContain('was not run: ');
    }
    expect(received).toEqual([]);
  });

  it('shows a value a secrets tool reveals once, then masks it everywhere', async () => {
    let calls = 0;
    const { executor, secrets } = setup([
      {
        group: 'secrets',
        // The first call reveals; the second only mentions the value (as a listing might).
        execute: async () =>
          calls++ === 0
            ? {
                success: true,
                output: `Mail.password is ${VALUE}`,
                metadata: { revealed: [{ label: 'Mail.password', value: VALUE }] },
              }
            : ok(`Mail.password is ${VALUE}`),
      },
    ]);
    const profile = testProfile();
    const first = await executor.execute({ id: 'c1', name: 'echo', arguments: {} }, testContext(), profile);
    expect(first).toEqual({ success: true, output: `Mail.password is ${VALUE}` });
    expect(secrets.mask(`x ${VALUE}`)).toBe('x [secret hidden: Mail.password]');
    const second = await executor.execute({ id: 'c2', name: 'echo', arguments: {} }, testContext(), profile);
    expect(second.output).toBe('Mail.password is [secret hidden: Mail.password]');
  });

  it('ignores `revealed` from a tool outside the secrets group, and never passes it on', async () => {
    const { executor, secrets } = setup([
      {
        execute: async () => ({
          success: true,
          output: 'nothing here',
          metadata: { revealed: [{ label: 'x', value: 'common-word-value' }] },
        }),
      },
    ]);
    const result = await executor.execute(
      { id: 'c1', name: 'echo', arguments: {} },
      testContext(),
      testProfile(),
    );
    expect(result.metadata).toBeUndefined();
    expect(secrets.size).toBe(0);
  });
});
