import { describe, expect, it } from 'vitest';
import { defaultAction, resolveHookAction } from '../tools/hooks.js';
import { groupOf } from '../tools/policy.js';
import { testProfile } from '../tools/test-helpers.js';
import { ok } from '../tools/types.js';
import { parseServerConfig } from './config.js';
import { asksBeforeEveryCall, mcpToolRisk } from './tool-risk.js';

const asTool = (risk: ReturnType<typeof mcpToolRisk>) => ({
  tool: { name: 'mcp__s__t', description: '', parameters: {}, risk, execute: async () => ok('') },
});
const hook = (risk: ReturnType<typeof mcpToolRisk>) =>
  defaultAction(asTool(risk).tool, { sandboxAvailable: false }).action;

describe('risk of an MCP tool from its annotations', () => {
  it('assumes a tool without annotations writes and reaches the network', () => {
    const risk = mcpToolRisk(undefined);
    expect(risk).toEqual({ reads: true, writes: true, network: true });
    expect(hook(risk)).toBe('log');
    expect(groupOf(asTool(risk))).toBeUndefined();
  });

  it('takes readOnlyHint and openWorldHint, and only their explicit values', () => {
    expect(mcpToolRisk({ readOnlyHint: true, openWorldHint: false })).toEqual({ reads: true });
    expect(mcpToolRisk({ readOnlyHint: true })).toEqual({ reads: true, network: true });
    expect(mcpToolRisk({ readOnlyHint: false, destructiveHint: false, openWorldHint: false })).toEqual({
      reads: true,
      writes: true,
    });
    expect(mcpToolRisk({ destructiveHint: true, openWorldHint: true })).toEqual({
      reads: true,
      writes: true,
      network: true,
    });
  });

  it('makes a read-only web tool silent and group:web, and a secrets server group:secrets and logged', () => {
    const web = mcpToolRisk({ readOnlyHint: true, openWorldHint: true });
    expect(hook(web)).toBe('silent');
    expect(groupOf(asTool(web))).toBe('web');
    const secret = mcpToolRisk({ readOnlyHint: true }, 'secrets');
    expect(secret.secrets).toBe(true);
    expect(hook(secret)).toBe('log');
    expect(groupOf(asTool(secret))).toBe('secrets');
  });
});

describe('confirm_tools of a server config', () => {
  const config = parseServerConfig(
    JSON.stringify({ name: 'vault', command: 'node', group: 'secrets', confirm_tools: ['reveal_secret'] }),
    'vault.json',
  );
  const entry = (tool: string) => ({
    tool: {
      name: `mcp__vault__${tool}`,
      description: '',
      parameters: {},
      risk: mcpToolRisk(
        { readOnlyHint: true, openWorldHint: false },
        'secrets',
        asksBeforeEveryCall(config, tool),
      ),
      execute: async () => ok(''),
    },
    source: 'mcp' as const,
    server: 'vault',
  });
  const decide = (tool: string, profile = testProfile()) =>
    resolveHookAction(profile, entry(tool), { sandboxAvailable: true }).action;

  it('asks before every call of a listed tool, by its own name only', () => {
    expect(asksBeforeEveryCall(config, 'reveal_secret')).toBe(true);
    expect(asksBeforeEveryCall(config, 'mcp__vault__reveal_secret')).toBe(false);
    expect(asksBeforeEveryCall(config, 'get_secret')).toBe(false);
    expect(mcpToolRisk({ readOnlyHint: true }, 'secrets', true).asks).toBe(true);
    expect(decide('reveal_secret')).toBe('confirm');
    expect(decide('get_secret')).toBe('log');
  });

  it("gives way to the profile's trusted_tools and autonomous autonomy, like any shipped confirm", () => {
    expect(decide('reveal_secret', testProfile({ trusted_tools: ['mcp__vault__reveal_secret'] }))).toBe(
      'log',
    );
    expect(decide('reveal_secret', testProfile({ autonomy: 'autonomous' }))).toBe('log');
    expect(decide('reveal_secret', testProfile({ autonomy: 'strict' }))).toBe('confirm');
    // The profile's own confirm_tools still wins over its trust.
    expect(
      decide(
        'reveal_secret',
        testProfile({ trusted_tools: ['mcp__vault__*'], confirm_tools: ['mcp__vault__reveal_secret'] }),
      ),
    ).toBe('confirm');
  });
});
