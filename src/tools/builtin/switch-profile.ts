/**
 * `switch_profile`: moves the session to another profile from the next LLM call on,
 * and tells the clients with a `profile_switched` event. `switchProfile` is the one way a
 * session changes profile: the tool and `PATCH /sessions/{id} {profile_id}` both go through it.
 */

import { z } from 'zod';
import type { Profile, ProfileRegistry } from '../../config/profiles.js';
import type { EventOf } from '../../protocol/events.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface SwitchProfileDeps {
  profiles: ProfileRegistry;
}

/** How a switch went: nothing to do, done (with the event to send), or refused. */
export type ProfileSwitch =
  | { status: 'unknown'; id: string; known: string[] }
  | { status: 'unchanged'; profile: Profile }
  | { status: 'switched'; profile: Profile; event: EventOf<'profile_switched'> };

/**
 * Moves a session from profile `currentId` to `targetId` (trimmed). An unknown id changes
 * nothing and answers with the ids there are; the current one changes nothing either. Otherwise
 * `apply` records the new profile (the running agent's state and the session row, or the row
 * alone between runs), and the answer carries the `profile_switched` event for the caller to send
 * to the session's clients: inside a run as one of its events, between runs to every socket
 * watching the session.
 */
export async function switchProfile(
  profiles: ProfileRegistry,
  currentId: string,
  targetId: string,
  apply: (profile: Profile) => Promise<void>,
): Promise<ProfileSwitch> {
  const id = targetId.trim();
  const profile = profiles.get(id);
  if (!profile) return { status: 'unknown', id, known: profiles.list().map((p) => p.id) };
  if (currentId === id) return { status: 'unchanged', profile };
  await apply(profile);
  return {
    status: 'switched',
    profile,
    event: { type: 'profile_switched', profile_id: profile.id, profile_name: profile.name },
  };
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
      const agent = ctx.agent;
      if (!agent) return fail('switch_profile is only available inside an agent run.');
      try {
        const result = await switchProfile(
          deps.profiles,
          agent.currentProfileId(),
          params.profile_id,
          async (profile) => {
            await agent.switchProfile(profile.id);
          },
        );
        switch (result.status) {
          case 'unknown':
            return fail(`Unknown profile "${result.id}". Available profiles: ${result.known.join(', ')}.`);
          case 'unchanged':
            return ok(`This session already uses the profile "${result.profile.id}".`, {
              profile_id: result.profile.id,
            });
          case 'switched':
            ctx.emit(result.event);
            return ok(`Switched to the profile "${result.profile.name}" (${result.profile.id}).`, {
              profile_id: result.profile.id,
            });
        }
      } catch (err) {
        return fail(`Could not switch profile: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  });
}
