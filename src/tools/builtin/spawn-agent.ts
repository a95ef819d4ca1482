/**
 * `spawn_agent`: hands a self-contained task to a subagent that runs in memory only,
 * with its own scratchpad, and answers with the subagent's final text. Its events reach the
 * parent's stream flagged `is_subagent` (the agent does the forwarding).
 */

import { z } from 'zod';
import type { ProfileRegistry } from '../../config/profiles.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface SpawnAgentDeps {
  profiles: ProfileRegistry;
  /** SUBAGENT_MAX_DEPTH: a call at this depth or deeper is refused. */
  maxDepth: number;
}

const parameters = z.strictObject({
  task: z.string().min(1).describe('The complete task, with all the context the subagent needs.'),
  profile_id: z.string().optional().describe('Profile for the subagent (default: the current one).'),
  inherit_system_prompt: z.boolean().optional().describe("Give the subagent this profile's instructions."),
});

export function createSpawnAgentTool(deps: SpawnAgentDeps): TypedTool<typeof parameters> {
  return defineTool({
    name: 'spawn_agent',
    group: 'agents',
    // The subagent may change things through its own tools, each of which is checked on its own.
    risk: { reads: true, writes: true },
    description:
      'Runs a subagent on a self-contained task and returns its final answer. The subagent starts with an empty ' +
      'conversation, so put everything it needs in "task". Optional profile_id picks another profile; ' +
      'inherit_system_prompt=true gives it the current profile instructions.',
    parameters,
    async execute(params, ctx) {
      if (ctx.depth >= deps.maxDepth) {
        return fail(
          `spawn_agent refused: subagents may nest at most ${deps.maxDepth} level(s) (SUBAGENT_MAX_DEPTH) and this ` +
            `call is at depth ${ctx.depth}. Do this part of the task yourself with your own tools.`,
        );
      }
      if (!ctx.agent) return fail('spawn_agent is only available inside an agent run.');
      const task = params.task.trim();
      if (!task) return fail('"task" must describe what the subagent should do.');
      // An empty id means the current profile, as an absent one does.
      const profileId = params.profile_id || undefined;
      if (profileId && !deps.profiles.has(profileId)) {
        const known = deps.profiles
          .list()
          .map((p) => p.id)
          .join(', ');
        return fail(`Unknown profile "${profileId}". Available profiles: ${known}.`);
      }
      try {
        const answer = await ctx.agent.runEphemeral(task, {
          ...(profileId ? { profileId } : {}),
          ...(params.inherit_system_prompt === true ? { inheritSystemPrompt: true } : {}),
          signal: ctx.signal,
        });
        return ok(answer.trim() ? answer : '(the subagent finished without an answer)', {
          profile_id: profileId ?? ctx.agent.currentProfileId(),
        });
      } catch (err) {
        return fail(`The subagent did not finish: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  });
}
