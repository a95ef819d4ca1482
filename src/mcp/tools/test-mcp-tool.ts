/**
 * `test_mcp_tool`: one call of one MCP tool in isolation, returning the time it took and the
 * raw MCP result as JSON (capped), to debug a server without going through the agent.
 */

import { z } from 'zod';
import type { Profile } from '../../config/profiles.js';
import { defineTool, type TypedTool } from '../../tools/define-tool.js';
import { resolveHookAction } from '../../tools/hooks.js';
import { checkPolicy, groupOf } from '../../tools/policy.js';
import { fail, ok, type ToolContext } from '../../tools/types.js';
import type { McpManager } from '../manager.js';

export interface TestMcpToolOptions {
  /**
   * The profile of a call. When given, the tested tool must be allowed for that profile, and a
   * tool the profile would ask about is asked about here too: test_mcp_tool must not be a way
   * around `denied_tools` or a confirmation.
   */
  profileFor?: (profileId: string) => Profile | undefined;
}

/** Why the call may not be made under the caller's profile, or undefined when it may. */
async function refusal(
  manager: McpManager,
  options: TestMcpToolOptions,
  server: string,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<string | undefined> {
  const entry = manager.registeredTool(server, tool);
  // Its raw result would carry a revealed value past the masking a secrets tool's own call gets.
  if (entry && groupOf(entry) === 'secrets')
    return `${server} is a secrets server; call ${entry.tool.name} itself, which keeps revealed values masked afterwards`;
  if (!options.profileFor || !manager.server(server)) return undefined;
  const profile = options.profileFor(ctx.profileId);
  if (!profile) return `the profile "${ctx.profileId}" is unknown, so its policy cannot be checked`;
  if (!entry) return `${tool} is not a registered tool of ${server}; mcp_status lists its tools`;
  const policy = checkPolicy(profile, entry);
  if (!policy.allowed) return policy.reason;
  // MCP tools never depend on the sandbox; `true` keeps terminal-style defaults out of it.
  const hook = resolveHookAction(profile, entry, { sandboxAvailable: true });
  if (hook.action !== 'confirm') return undefined;
  const answer = await ctx.confirm({ callId: ctx.callId, tool: entry.tool.name, args });
  return answer.approved ? undefined : `the user did not approve the call (${answer.reason})`;
}

/** The raw JSON is capped at TOOL_MAX_OUTPUT_CHARS. */
const parameters = z.strictObject({
  server: z.string().describe('Server name as in mcp_status.'),
  tool: z.string().describe("The server's tool name (e.g. echo) or the full mcp__… name."),
  arguments: z.looseObject({}).optional().describe('Arguments for the tool.'),
});

export function createTestMcpTool(
  manager: McpManager,
  options: TestMcpToolOptions = {},
): TypedTool<typeof parameters> {
  const maxOutputChars = manager.outputLimit;
  return defineTool({
    name: 'test_mcp_tool',
    description:
      'Calls one tool of an MCP server directly and returns the duration and the raw MCP result (JSON). ' +
      'Use it to check a server or a tool after creating or changing it.',
    group: 'meta',
    risk: { reads: true, writes: true, network: true },
    parameters,
    async execute(params, ctx) {
      const { server, tool } = params;
      const args = params.arguments ?? {};
      const refused = await refusal(manager, options, server, tool, args, ctx);
      if (refused !== undefined) return fail(`${server}/${tool} was not called: ${refused}.`);
      const started = performance.now();
      try {
        const result = await manager.callRaw(server, tool, args, ctx.signal);
        const durationMs = Math.round(performance.now() - started);
        let raw = JSON.stringify(result, null, 2);
        if (raw.length > maxOutputChars) {
          raw = `${raw.slice(0, maxOutputChars)}\n[raw result truncated: ${raw.length - maxOutputChars} characters cut]`;
        }
        const verdict = result.isError ? 'the tool reported an error' : 'the tool succeeded';
        return ok(`${server}/${tool}: ${verdict} in ${durationMs} ms.\nRaw result:\n${raw}`, {
          duration_ms: durationMs,
          is_error: result.isError === true,
        });
      } catch (err) {
        const durationMs = Math.round(performance.now() - started);
        const message = err instanceof Error ? err.message : String(err);
        return fail(`${server}/${tool} failed after ${durationMs} ms: ${message}`, {
          duration_ms: durationMs,
        });
      }
    },
  });
}
