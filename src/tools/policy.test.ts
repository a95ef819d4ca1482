import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ToolExecutor } from './executor.js';
import { policyFor, toolBudgetRatioFor } from './policy.js';
import { ToolRegistry } from './registry.js';
import { testContext, testProfile } from './test-helpers.js';
import { ok, type ToolDefinition } from './types.js';

function tool(name: string, ran: string[]): ToolDefinition {
  return {
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: {} },
    risk: { reads: true },
    execute: async () => {
      ran.push(name);
      return ok(`${name} ran`);
    },
  };
}

function executorWith(names: string[], ran: string[]): ToolExecutor {
  const registry = new ToolRegistry();
  for (const name of names) registry.register({ tool: tool(name, ran), source: 'builtin' });
  return new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: 5_000, TOOL_MAX_OUTPUT_CHARS: 10_000 },
    logger: pino({ level: 'silent' }),
  });
}

const profile = testProfile({
  id: 'split',
  enabled_tools: ['*'],
  denied_tools: ['shred'],
  backends: {
    ollama: { enabled_tools: ['notes', 'todo', 'shred'], denied_tools: ['todo'] },
    openai: { tool_budget_ratio: 0.5 },
  },
});

describe('policyFor: a profile as it applies on one backend', () => {
  it("replaces enabled_tools and adds denied_tools to the profile's", () => {
    const onOllama = policyFor(profile, 'ollama');
    expect(onOllama.enabled_tools).toEqual(['notes', 'todo', 'shred']);
    expect(onOllama.denied_tools).toEqual(['shred', 'todo']);
    expect(onOllama.policy_backend).toBe('ollama');
    // The profile itself is left as it was.
    expect(profile.enabled_tools).toEqual(['*']);
  });

  it('hands back the same profile when the backend changes no tool list', () => {
    expect(policyFor(profile, 'openai')).toBe(profile);
    expect(policyFor(profile, 'llamacpp')).toBe(profile);
    expect(policyFor(profile, undefined)).toBe(profile);
  });

  it('offers and allows only what the backend policy allows, and says why it refuses', async () => {
    const ran: string[] = [];
    const executor = executorWith(['notes', 'todo', 'shred', 'web'], ran);
    const onOllama = policyFor(profile, 'ollama');
    expect(executor.specsFor(onOllama).map((s) => s.name)).toEqual(['notes']);
    expect(executor.specsFor(profile).map((s) => s.name)).toEqual(['notes', 'todo', 'web']);

    const denied = await executor.execute({ id: 'c1', name: 'todo', arguments: {} }, testContext(), onOllama);
    expect(denied).toMatchObject({ success: false, metadata: { refused: 'policy' } });
    expect(denied.output).toBe(
      'Tool "todo" is denied for profile "split" on the ollama backend (matches "todo").',
    );
    const notEnabled = await executor.execute(
      { id: 'c2', name: 'web', arguments: {} },
      testContext(),
      onOllama,
    );
    expect(notEnabled.output).toContain('is not enabled for profile "split" on the ollama backend');
    const allowed = await executor.execute(
      { id: 'c3', name: 'notes', arguments: {} },
      testContext(),
      onOllama,
    );
    expect(allowed).toMatchObject({ success: true, output: 'notes ran' });
    expect(ran).toEqual(['notes']);
  });
});

describe('toolBudgetRatioFor', () => {
  it("takes the backend's ratio when the profile sets one, else the setting", () => {
    expect(toolBudgetRatioFor(profile, 'openai', 0.25)).toBe(0.5);
    expect(toolBudgetRatioFor(profile, 'ollama', 0.25)).toBe(0.25);
    expect(toolBudgetRatioFor(testProfile(), 'ollama', 0.3)).toBe(0.3);
  });
});
