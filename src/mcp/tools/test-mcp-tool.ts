/**
 * `test_mcp_tool`: one call of one MCP tool in isolation, returning the time it took and the
 * raw MCP result as JSON (capped), to debug a server without going through the agent.
 */
import { fail, ok, type ToolDefinition } from '../../tools/types.js';
import type { McpManager } from '../manager.js';

/** The raw JSON is capped at TOOL_MAX_OUTPUT_CHARS. */
export function createTestMcpTool(manager: McpManager): ToolDefinition {
  const maxOutputChars = manager.outputLimit;
  return {
    name: 'test_mcp_tool',
    description:
      'Calls one tool of an MCP server directly and returns the duration and the raw MCP result (JSON). ' +
      'Use it to check a server or a tool after creating or changing it.',
    group: 'meta',
    parameters: {
      type: 'object',
      properties: {
        server: { type: 'string', description: 'Server name as in mcp_status.' },
        tool: { type: 'string', description: "The server's tool name (e.g. echo) or the full mcp__… name." },
        arguments: { type: 'object', description: 'Arguments for the tool.', additionalProperties: true },
      },
      required: ['server', 'tool'],
      additionalProperties: false,
    },
    async execute(params, ctx) {
      const server = String(params.server);
      const tool = String(params.tool);
      const args = (params.arguments ?? {}) as Record<string, unknown>;
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
  };
}
