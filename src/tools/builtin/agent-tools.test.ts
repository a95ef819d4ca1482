import { describe, expect, it } from 'vitest';
import { ProfileRegistry, profileSchema } from '../../config/profiles.js';
import type { AgentEvent } from '../../protocol/events.js';
import type { AgentHandle, ToolDefinition } from '../types.js';
import { createAgentTools } from './agent-tools.js';
import { makeCtx } from './test-support.js';

const profiles = new ProfileRegistry(
  [
    profileSchema.parse({
      id: 'secretary',
      name: 'Personal Secretary',
      system_prompt: 'Helps with mail.\nMore.',
    }),
    profileSchema.parse({
      id: 'server_admin',
      name: 'Server Administrator',
      model: 'big-model',
      planning_enabled: true,
    }),
  ],
  'secretary',
);

/** A handle standing in for the running agent: records what the tools asked of it. */
function handle(answer = 'subagent answer') {
  let current = 'secretary';
  const calls: { task: string; options: object }[] = [];
  const agent: AgentHandle = {
    async runEphemeral(task, options) {
      calls.push({ task, options });
      return answer;
    },
    async switchProfile(id) {
      const p = profiles.get(id);
      if (!p) throw new Error(`Unknown profile "${id}"`);
      current = id;
      return { id: p.id, name: p.name };
    },
    currentProfileId: () => current,
  };
  return { agent, calls };
}

function tools(maxSubagentDepth = 1): Record<string, ToolDefinition> {
  const list = createAgentTools({
    profiles,
    maxSubagentDepth,
    sessions: undefined as never,
    kv: undefined as never,
    backendFor: () => {
      throw new Error('no LLM in this test');
    },
  });
  return Object.fromEntries(list.map((t) => [t.name, t]));
}

describe('createAgentTools', () => {
  it('builds the four tools in their policy groups', () => {
    const t = tools();
    expect(Object.fromEntries(Object.values(t).map((x) => [x.name, x.group]))).toEqual({
      spawn_agent: 'agents',
      switch_profile: 'session',
      list_profiles: 'session',
      reflect: 'agents',
    });
  });
});

describe('spawn_agent', () => {
  it('runs the task in a subagent and returns its answer', async () => {
    const { agent, calls } = handle('42 files');
    const ctx = makeCtx({ agent });
    const r = await tools().spawn_agent!.execute(
      { task: 'count files', profile_id: 'server_admin', inherit_system_prompt: true },
      ctx,
    );
    expect(r).toMatchObject({ success: true, output: '42 files' });
    // The call's own signal goes along, so a tool timeout stops the subagent too.
    expect(calls).toEqual([
      {
        task: 'count files',
        options: { profileId: 'server_admin', inheritSystemPrompt: true, signal: ctx.signal },
      },
    ]);
  });

  it('refuses at the depth limit without starting a subagent', async () => {
    const { agent, calls } = handle();
    const r = await tools(1).spawn_agent!.execute(
      { task: 'nested' },
      makeCtx({ agent, depth: 1, isSubagent: true }),
    );
    expect(r.success).toBe(false);
    expect(r.output).toMatch(/at most 1 level.*SUBAGENT_MAX_DEPTH.*depth 1/);
    expect(calls).toHaveLength(0);
    const zero = await tools(0).spawn_agent!.execute({ task: 'any' }, makeCtx({ agent }));
    expect(zero.success).toBe(false);
    expect(calls).toHaveLength(0);
    expect((await tools(2).spawn_agent!.execute({ task: 'ok' }, makeCtx({ agent, depth: 1 }))).success).toBe(
      true,
    );
  });

  it('names the known profiles when given an unknown one, and reports a failed subagent', async () => {
    const { agent } = handle();
    const r = await tools().spawn_agent!.execute({ task: 'x', profile_id: 'ghost' }, makeCtx({ agent }));
    expect(r).toMatchObject({ success: false });
    expect(r.output).toContain('secretary, server_admin');
    const failing: AgentHandle = { ...agent, runEphemeral: async () => Promise.reject(new Error('stopped')) };
    const f = await tools().spawn_agent!.execute({ task: 'x' }, makeCtx({ agent: failing }));
    expect(f).toMatchObject({ success: false, output: 'The subagent did not finish: stopped' });
  });
});

describe('switch_profile', () => {
  it('switches through the handle and emits profile_switched', async () => {
    const { agent } = handle();
    const events: AgentEvent[] = [];
    const ctx = makeCtx({ agent, emit: (e) => events.push(e) });
    const r = await tools().switch_profile!.execute({ profile_id: 'server_admin' }, ctx);
    expect(r.success).toBe(true);
    expect(agent.currentProfileId()).toBe('server_admin');
    expect(events).toEqual([
      { type: 'profile_switched', profile_id: 'server_admin', profile_name: 'Server Administrator' },
    ]);
    // Already there: no second event.
    expect((await tools().switch_profile!.execute({ profile_id: 'server_admin' }, ctx)).output).toMatch(
      /already/,
    );
    expect(events).toHaveLength(1);
  });

  it('refuses an unknown profile without emitting', async () => {
    const { agent } = handle();
    const events: AgentEvent[] = [];
    const r = await tools().switch_profile!.execute(
      { profile_id: 'ghost' },
      makeCtx({ agent, emit: (e) => events.push(e) }),
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('Available profiles: secretary, server_admin');
    expect(events).toEqual([]);
  });
});

describe('list_profiles', () => {
  it('lists every profile and marks the current one', async () => {
    const { agent } = handle();
    await agent.switchProfile('server_admin');
    const r = await tools().list_profiles!.execute({}, makeCtx({ agent }));
    expect(r.output).toContain(
      '- secretary: Personal Secretary; default model; planning off; tools: * — Helps with mail.',
    );
    expect(r.output).toContain(
      '- server_admin: Server Administrator (current); model big-model; planning on',
    );
  });
});
