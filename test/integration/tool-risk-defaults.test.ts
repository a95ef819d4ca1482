/**
 * The hook default and policy group of every built-in tool, as the real composition root
 * registers them. The table is the one Navi shipped while defaults were listed by tool name;
 * deriving them from each tool's declared risk must not change a single entry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { NaviServices } from '../../src/server/services.js';
import { resolveHookAction } from '../../src/tools/hooks.js';
import { groupOf } from '../../src/tools/policy.js';
import { testProfile } from '../../src/tools/test-helpers.js';
import { realServices } from '../server/real-services.js';

type Action = 'silent' | 'log' | 'confirm';
/** tool → [group, default with the sandbox, default without it] */
const SHIPPED: Record<string, [string, Action, Action]> = {
  code_exec: ['runtime', 'log', 'confirm'],
  content_publish: ['session', 'log', 'log'],
  create_mcp_server: ['meta', 'confirm', 'confirm'],
  filesystem: ['fs', 'log', 'log'],
  image_view: ['web', 'silent', 'silent'],
  list_profiles: ['session', 'silent', 'silent'],
  list_tools: ['meta', 'silent', 'silent'],
  manage_recall: ['schedule', 'log', 'log'],
  mcp_status: ['meta', 'silent', 'silent'],
  memory: ['memory', 'log', 'log'],
  process: ['runtime', 'log', 'confirm'],
  read_mcp_resource: ['meta', 'silent', 'silent'],
  reflect: ['agents', 'silent', 'silent'],
  reload_tools: ['meta', 'log', 'log'],
  schedule_recall: ['schedule', 'log', 'log'],
  scratchpad: ['session', 'silent', 'silent'],
  share_file: ['session', 'log', 'log'],
  spawn_agent: ['agents', 'log', 'log'],
  ssh_exec: ['runtime', 'confirm', 'confirm'],
  switch_profile: ['session', 'log', 'log'],
  system_info: ['meta', 'silent', 'silent'],
  terminal: ['runtime', 'log', 'confirm'],
  test_mcp_tool: ['meta', 'log', 'log'],
  todo: ['session', 'silent', 'silent'],
  tool_manual: ['meta', 'silent', 'silent'],
  write_tool: ['meta', 'confirm', 'confirm'],
};

let dir: string;
let services: NaviServices;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'navi-risk-'));
  services = await realServices(dir, {});
});

afterAll(async () => {
  await services?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('defaults derived from declared risk', () => {
  it('give every built-in the group and hook default it shipped with', () => {
    const standard = testProfile({ autonomy: 'standard' });
    const actual: Record<string, [string, Action, Action]> = {};
    for (const entry of services.tools.list()) {
      if (entry.source !== 'builtin') continue;
      actual[entry.tool.name] = [
        groupOf(entry) ?? '',
        resolveHookAction(standard, entry, { sandboxAvailable: true }).action,
        resolveHookAction(standard, entry, { sandboxAvailable: false }).action,
      ];
    }
    expect(actual).toEqual(SHIPPED);
  });

  it('come from a declaration every built-in makes, next to a schema written in zod', () => {
    for (const entry of services.tools.list()) {
      if (entry.source !== 'builtin') continue;
      const { tool } = entry;
      expect(tool.risk, tool.name).toBeDefined();
      expect('schema' in tool && tool.schema instanceof z.ZodObject, tool.name).toBe(true);
      expect(tool.parameters, tool.name).toMatchObject({ type: 'object', properties: {} });
      expect(tool.parameters, tool.name).not.toHaveProperty('$schema');
    }
  });
});
