/**
 * `create_mcp_server`: scaffolds MCP_SCAFFOLD_DIR/<name>/ (a TypeScript stdio server on the
 * official SDK) and MCP_SERVERS_DIR/<name>.json, disabled and marked `"created_by": "agent"`.
 * The server only starts after the user has seen its exact launch line and approved it:
 * `ctx.confirm({tool: 'create_mcp_server', args: {command}})`, then `manager.approve(name)`.
 */
import { z } from 'zod';
import { defineTool, type TypedTool } from '../../tools/define-tool.js';
import { fail, ok } from '../../tools/types.js';
import type { McpManager } from '../manager.js';
import { type ScaffoldSpec, type ScaffoldTool, validateScaffoldSpec, writeScaffold } from '../scaffold.js';

const parameters = z.strictObject({
  name: z.string().describe('Server name: lower-case letters, digits and "-" (e.g. "weather").'),
  description: z.string().describe('What the server is for.'),
  tools: z
    .array(
      z.object({
        name: z.string(),
        description: z.string(),
        parameters: z.looseObject({}).describe('JSON Schema of the arguments ("type": "object").'),
        implementation: z.string().describe('JavaScript body of async (args) => { ... }.'),
      }),
    )
    .min(1),
});

function toSpec(params: z.output<typeof parameters>): ScaffoldSpec {
  return {
    name: params.name,
    description: params.description,
    tools: params.tools.map(
      (t): ScaffoldTool => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        implementation: t.implementation,
      }),
    ),
  };
}

export function createCreateMcpServerTool(manager: McpManager): TypedTool<typeof parameters> {
  return defineTool({
    name: 'create_mcp_server',
    description:
      'Creates a new MCP server (TypeScript, stdio, official SDK) with the given tools, writes its config, and asks ' +
      'the user to approve the exact command that starts it. Each tool has a JSON Schema `parameters` object and ' +
      'an `implementation`: the body of `async (args) => { ... }` in JavaScript returning a string or JSON.',
    group: 'meta',
    // It starts the server it scaffolds.
    risk: { writes: true, executes: true },
    parameters,
    async execute(params, ctx) {
      const spec = toSpec(params);
      const problems = validateScaffoldSpec(spec);
      if (problems.length > 0) return fail(`Nothing was written: ${problems.join('; ')}.`);
      let written: Awaited<ReturnType<typeof writeScaffold>>;
      try {
        written = await writeScaffold(spec, manager.scaffoldDir, manager.serversDir);
      } catch (err) {
        return fail(`Nothing was started: ${err instanceof Error ? err.message : String(err)}.`);
      }
      const where = `Created ${written.dir} (code in src/handlers.js, schemas in src/tools.json) and ${written.configFile}.`;
      const answer = await ctx.confirm({
        callId: ctx.callId,
        tool: 'create_mcp_server',
        args: { command: written.command, server: spec.name },
      });
      if (!answer.approved) {
        return ok(
          `${where} The server was NOT started: the user did not approve the command (${answer.reason}). ` +
            `It stays disabled until the user approves: ${written.command}`,
          { server: spec.name, dir: written.dir, approved: false },
        );
      }
      let status: Awaited<ReturnType<McpManager['approve']>>;
      try {
        status = await manager.approve(spec.name, written.command);
      } catch (err) {
        return fail(
          `${where} Approval could not be recorded: ${err instanceof Error ? err.message : String(err)}.`,
        );
      }
      if (status.state !== 'ready') {
        return fail(
          `${where} The user approved it, but the server is ${status.state}: ${status.last_error ?? 'no error recorded'}. ` +
            'Fix the code and check it with mcp_status and test_mcp_tool.',
          { server: spec.name, dir: written.dir, approved: true },
        );
      }
      return ok(
        `${where} The user approved it and it is running with ${status.tool_count} tools: ${status.tools.join(', ')}. ` +
          'They can be used from the next message; try one now with test_mcp_tool.',
        { server: spec.name, dir: written.dir, approved: true, tools: status.tools },
      );
    },
  });
}
