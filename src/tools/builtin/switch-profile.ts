/**
 * `switch_profile`: moves the session to another profile from the next LLM call on,
 * and tells the clients with a `profile_switched` event.
 */

import { z } from 'zod';
import type { ProfileRegistry } from '../../config/profiles.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface SwitchProfileDeps {
  profiles: ProfileRegistry;
}

const parameters = z.strictObject({
  profile_id: z.string().min(1).describe('Id of the profile to switch to.'),
});

export function createSwitchProfileTool(deps: SwitchProfileDeps): TypedTool<typeof parameters> {
  return defineTool({
    name: 'switch_profile',
    group: 'session',
    risk: { writes: true },
    description:
      'Switches this session to another agent profile (its instructions, tools and model apply from your next step). ' +
      'Use list_profiles to see the ids.',
    parameters,
    async execute(params, ctx) {
      if (!ctx.agent) return fail('switch_profile is only available inside an agent run.');
      const id = params.profile_id.trim();
      const known = () =>
        deps.profiles
          .list()
          .map((p) => p.id)
          .join(', ');
      if (!deps.profiles.has(id)) return fail(`Unknown profile "${id}". Available profiles: ${known()}.`);
      if (ctx.agent.currentProfileId() === id) {
        return ok(`This session already uses the profile "${id}".`, { profile_id: id });
      }
      try {
        const profile = await ctx.agent.switchProfile(id);
        ctx.emit({ type: 'profile_switched', profile_id: profile.id, profile_name: profile.name });
        return ok(`Switched to the profile "${profile.name}" (${profile.id}).`, { profile_id: profile.id });
      } catch (err) {
        return fail(`Could not switch profile: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  });
}
