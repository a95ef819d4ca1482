/**
 * `spawn_agent` (DESIGN §11): hands a self-contained task to a subagent that runs in memory only,
 * with its own scratchpad, and answers with the subagent's final text. Its events reach the
 * parent's stream flagged `is_subagent` (the agent does the forwarding).
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

export interface SpawnAgentDeps {
  profiles: ProfileRegistry;
  /** SUBAGENT_MAX_DEPTH: a call at this depth or deeper is refused. */
  maxDepth: number;
}

export function createSpawnAgentTool(deps: SpawnAgentDeps): ToolDefinition {
  return {
    name: 'spawn_agent',
    group: 'agents',
    description:
      'Runs a subagent on a self-contained task and returns its final answer. The subagent starts with an empty ' +
      'conversation, so put everything it needs in "task". Optional profile_id picks another profile; ' +
      'inherit_system_prompt=true gives it the current profile instructions.',
    parameters: {
      type: 'object',
      properties: {
        task: {
          type: 'string',
          minLength: 1,
          description: 'The complete task, with all the context the subagent needs.',
        },
        profile_id: { type: 'string', description: 'Profile for the subagent (default: the current one).' },
        inherit_system_prompt: {
          type: 'boolean',
          description: "Give the subagent this profile's instructions.",
        },
      },
      required: ['task'],
      additionalProperties: false,
    },
    async execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
      if (ctx.depth >= deps.maxDepth) {
        return fail(
          `spawn_agent refused: subagents may nest at most ${deps.maxDepth} level(s) (SUBAGENT_MAX_DEPTH) and this ` +
            `call is at depth ${ctx.depth}. Do this part of the task yourself with your own tools.`,
        );
      }
      if (!ctx.agent) return fail('spawn_agent is only available inside an agent run.');
      const task = typeof params.task === 'string' ? params.task.trim() : '';
      if (!task) return fail('"task" must describe what the subagent should do.');
      const profileId =
        typeof params.profile_id === 'string' && params.profile_id ? params.profile_id : undefined;
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
  };
}
