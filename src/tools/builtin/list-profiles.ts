/** `list_profiles`: the profiles a session can switch to or a subagent can run with. */

import { z } from 'zod';
import type { ProfileRegistry } from '../../config/profiles.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { ok } from '../types.js';

export interface ListProfilesDeps {
  profiles: ProfileRegistry;
}

const parameters = z.strictObject({});

export function createListProfilesTool(deps: ListProfilesDeps): TypedTool<typeof parameters> {
  return defineTool({
    name: 'list_profiles',
    group: 'session',
    risk: { reads: true },
    description: 'Lists the agent profiles (id, name, model, tools) and marks the one in use.',
    parameters,
    async execute(_params, ctx) {
      const current = ctx.agent?.currentProfileId() ?? ctx.profileId;
      const profiles = deps.profiles.list();
      const lines = profiles.map((p) => {
        const mark = p.id === current ? ' (current)' : '';
        const model = p.model ? `model ${p.model}` : 'default model';
        const tools = p.enabled_tools.join(', ');
        const firstLine = p.system_prompt.trim().split('\n')[0] ?? '';
        const about = firstLine ? ` — ${firstLine.slice(0, 160)}` : '';
        return `- ${p.id}: ${p.name}${mark}; ${model}; planning ${p.planning_enabled ? 'on' : 'off'}; tools: ${tools}${about}`;
      });
      return ok(`${profiles.length} profile(s):\n${lines.join('\n')}`, {
        profiles: profiles.map((p) => ({ id: p.id, name: p.name })),
        current,
      });
    },
  });
}
