/**
 * `switch_profile` (DESIGN §11): moves the session to another profile from the next LLM call on,
 * and tells the clients with a `profile_switched` event.
 */
import type { ProfileRegistry } from '../../config/profiles.js';
import {
  fail,
  ok,
  type ToolContext,
  type ToolDefinition,
  type ToolParams,
  type ToolResult,
} from '../types.js';

export interface SwitchProfileDeps {
  profiles: ProfileRegistry;
}

export function createSwitchProfileTool(deps: SwitchProfileDeps): ToolDefinition {
  return {
    name: 'switch_profile',
    group: 'session',
    description:
      'Switches this session to another agent profile (its instructions, tools and model apply from your next step). ' +
      'Use list_profiles to see the ids.',
    parameters: {
      type: 'object',
      properties: {
        profile_id: { type: 'string', minLength: 1, description: 'Id of the profile to switch to.' },
      },
      required: ['profile_id'],
      additionalProperties: false,
    },
    async execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
      if (!ctx.agent) return fail('switch_profile is only available inside an agent run.');
      const id = typeof params.profile_id === 'string' ? params.profile_id.trim() : '';
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
  };
}
