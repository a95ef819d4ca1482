/**
 * `mcp_status`: state, transport, tool, resource and prompt counts, authorisation, last error
 * and uptime of every configured MCP server, plus config files that could not be used; for one
 * server, its tools, resources, resource templates and prompts by name.
 */
import { z } from 'zod';
import { defineTool, type TypedTool } from '../../tools/define-tool.js';
import { ok } from '../../tools/types.js';
import type { McpResourceTemplateInfo } from '../catalog.js';
import type { McpManager } from '../manager.js';
import type { McpServerStatus } from '../types.js';

/** Entries of each list written out for one server; the rest are counted. */
const LISTED = 100;

function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function authPart(s: McpServerStatus): string | undefined {
  const auth = s.auth;
  if (s.state === 'needs_auth' || auth?.status === 'needs_authorization')
    return `waits for the user to authorise Navi: "Connect" on the MCP servers page, or navi mcp login ${s.name}`;
  if (!auth) return undefined;
  if (auth.status === 'pending')
    return 'authorisation started, waiting for the user to finish it in the browser';
  const scope = auth.scope ? ` (scope ${auth.scope})` : '';
  return `authorised${scope}${auth.expires_at ? `, token expires ${auth.expires_at}` : ''}`;
}

/** `n one` or `n ones`. */
export function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** One server's line: its state, counts, authorisation, uptime and last error. */
export function statusLine(s: McpServerStatus): string {
  const parts = [`${s.name} [${s.transport}] ${s.state}`, `${s.tool_count} tools`];
  if (s.resource_count > 0) parts.push(plural(s.resource_count, 'resource'));
  if (s.prompt_count > 0) parts.push(plural(s.prompt_count, 'prompt'));
  const auth = authPart(s);
  if (auth) parts.push(auth);
  if (s.uptime_ms !== null) parts.push(`up ${duration(s.uptime_ms)}`);
  if (s.restart_in_ms !== null) parts.push(`restart in ${duration(s.restart_in_ms)}`);
  if (s.restarts > 0) parts.push(`${s.restarts} restarts`);
  if (s.pid !== null) parts.push(`pid ${s.pid}`);
  if (s.state === 'awaiting_approval') parts.push(`waits for the user to approve: ${s.command}`);
  parts.push(`last error: ${s.last_error ?? 'none'}`);
  return `- ${parts.join(', ')}`;
}

function listed<T>(title: string, items: T[], count: number, show: (item: T) => string): string[] {
  if (count === 0) return [];
  const shown = items.slice(0, LISTED);
  const lines = [`  ${title} (${count}):`, ...shown.map((i) => `    - ${show(i)}`)];
  if (count > shown.length) lines.push(`    … ${count - shown.length} more not shown`);
  return lines;
}

/** One server in full: its tools, resources, templates and prompts. */
function details(s: McpServerStatus, templates: { templates: McpResourceTemplateInfo[]; count: number }) {
  const what = (title?: string, description?: string) =>
    [title, description].filter((t) => t !== undefined && t !== '').join(': ');
  const lines = [statusLine(s), `  tools: ${s.tools.join(', ') || 'none'}`];
  lines.push(
    ...listed('resources', s.resources, s.resource_count, (r) => {
      const about = what(r.title ?? r.name, r.description);
      return `${r.uri}${about ? ` — ${about}` : ''}${r.mime_type ? ` [${r.mime_type}]` : ''}`;
    }),
    ...listed('resource templates', templates.templates, templates.count, (t) => {
      const about = what(t.title ?? t.name, t.description);
      return `${t.uri_template}${about ? ` — ${about}` : ''}${t.mime_type ? ` [${t.mime_type}]` : ''}`;
    }),
    ...listed('prompts', s.prompts, s.prompt_count, (p) => {
      const args = p.arguments.map((a) => (a.required ? a.name : `${a.name}?`)).join(', ');
      const about = what(p.title, p.description);
      return `${p.name}(${args})${about ? ` — ${about}` : ''}`;
    }),
  );
  if (s.resource_count > 0 || templates.count > 0)
    lines.push('  read_mcp_resource reads a listed URI, or one made from a template.');
  return lines.join('\n');
}

const parameters = z.strictObject({
  server: z.string().optional().describe('Name of one server (optional).'),
});

export function createMcpStatusTool(manager: McpManager): TypedTool<typeof parameters> {
  return defineTool({
    name: 'mcp_status',
    description:
      'Shows every configured MCP server: state (ready, connecting, down, needs_auth, disabled, awaiting_approval), ' +
      'transport, number of tools, resources and prompts, authorisation, last error and uptime. Give `server` to see ' +
      'one server with its tool names, resources, resource templates and prompts.',
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
        const templates = manager.resourceTemplates(status.name);
        return ok(details(status, templates), {
          servers: [status],
          resource_templates: templates.templates,
        });
      }
      const servers = manager.status();
      const errors = manager.errors();
      const lines =
        servers.length > 0
          ? servers.map(statusLine)
          : [`No MCP servers configured in ${manager.serversDir}.`];
      for (const e of errors) lines.push(`- config ${e.file} skipped: ${e.error}`);
      return ok(lines.join('\n'), { servers, config_errors: errors });
    },
  });
}
