import { describe, expect, it } from 'vitest';
import { defaultAction } from './hooks.js';
import { groupOf } from './policy.js';
import type { ToolRisk } from './risk.js';
import { ok, type ToolDefinition } from './types.js';

const withRisk = (risk?: ToolRisk, group?: ToolDefinition['group']): ToolDefinition => ({
  name: 't',
  description: 't',
  parameters: { type: 'object' },
  execute: async () => ok(''),
  ...(risk && { risk }),
  ...(group && { group }),
});

const action = (risk: ToolRisk | undefined, sandboxAvailable: boolean) =>
  defaultAction(withRisk(risk), { sandboxAvailable }).action;

describe('hook defaults from risk', () => {
  it('asks before unsandboxed execution, and before sandboxed execution only without the sandbox', () => {
    expect(action({ executes: true }, true)).toBe('confirm');
    expect(action({ executes: true, sandboxed: true }, true)).toBe('log');
    expect(action({ executes: true, sandboxed: true }, false)).toBe('confirm');
  });

  it('logs tools that may change something or reveal secrets, and leaves readers silent', () => {
    expect(action({ reads: true, writes: true }, false)).toBe('log');
    expect(action({ reads: true, secrets: true }, false)).toBe('log');
    expect(action({ reads: true, network: true }, false)).toBe('silent');
    expect(action({}, false)).toBe('silent');
  });

  it('asks before every call of a tool that declares asks, whatever else it declares', () => {
    expect(action({ reads: true, asks: true }, true)).toBe('confirm');
    expect(action({ executes: true, sandboxed: true, asks: true }, true)).toBe('confirm');
  });

  it('logs a tool that declares nothing', () => {
    expect(action(undefined, false)).toBe('log');
  });
});

describe('groups from risk', () => {
  it('keeps a named group and derives web and secrets for tools that name none', () => {
    expect(groupOf({ tool: withRisk({ reads: true, network: true }, 'fs') })).toBe('fs');
    expect(groupOf({ tool: withRisk({ reads: true, network: true }) })).toBe('web');
    expect(groupOf({ tool: withRisk({ reads: true, network: true, secrets: true }) })).toBe('secrets');
    expect(groupOf({ tool: withRisk({ reads: true, writes: true, network: true }) })).toBeUndefined();
    expect(groupOf({ tool: withRisk(undefined) })).toBeUndefined();
  });
});
