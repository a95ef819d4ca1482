import { describe, expect, it } from 'vitest';
import { defaultAction } from '../tools/hooks.js';
import { groupOf } from '../tools/policy.js';
import { ok } from '../tools/types.js';
import { mcpToolRisk } from './tool-risk.js';

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
