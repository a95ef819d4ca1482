/**
 * `mcp_status`: state, transport, tool count, last error and uptime of every configured MCP
 * server, plus config files that could not be used.
 */
import { z } from 'zod';
import { defineTool, type TypedTool } from '../../tools/define-tool.js';
import { ok } from '../../tools/types.js';
import type { McpManager } from '../manager.js';
import type { McpServerStatus } from '../types.js';

function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function line(s: McpServerStatus): string {
  const parts = [`${s.name} [${s.transport}] ${s.state}`, `${s.tool_count} tools`];
  if (s.uptime_ms !== null) parts.push(`up ${duration(s.uptime_ms)}`);
  if (s.restart_in_ms !== null) parts.push(`restart in ${duration(s.restart_in_ms)}`);
  if (s.restarts > 0) parts.push(`${s.restarts} restarts`);
  if (s.pid !== null) parts.push(`pid ${s.pid}`);
  if (s.state === 'awaiting_approval') parts.push(`waits for the user to approve: ${s.command}`);
  parts.push(`last error: ${s.last_error ?? 'none'}`);
  return `- ${parts.join(', ')}`;
}

const parameters = z.strictObject({
  server: z.string().optional().describe('Name of one server (optional).'),
});

export function createMcpStatusTool(manager: McpManager): TypedTool<typeof parameters> {
  return defineTool({
    name: 'mcp_status',
    description:
      'Shows every configured MCP server: state (ready, connecting, down, disabled, awaiting_approval), transport, ' +
      'number of tools, last error and uptime. Give `server` to see one server and its tool names.',
    group: 'meta',
    risk: { reads: true },
    parameters,
    async execute(params) {
      const name = params.server;
      if (name !== undefined) {
        const status = manager.server(name);
        if (!status) {
          const known = manager.status().map((s) => s.name);
          return ok(`No MCP server named "${name}". Configured: ${known.join(', ') || 'none'}.`, {
            servers: [],
          });
        }
        return ok(`${line(status)}\n  tools: ${status.tools.join(', ') || 'none'}`, { servers: [status] });
      }
      const servers = manager.status();
      const errors = manager.errors();
      const lines =
        servers.length > 0 ? servers.map(line) : [`No MCP servers configured in ${manager.serversDir}.`];
      for (const e of errors) lines.push(`- config ${e.file} skipped: ${e.error}`);
      return ok(lines.join('\n'), { servers, config_errors: errors });
    },
  });
}
