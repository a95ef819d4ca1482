/**
 * The MCP section of `navi doctor`: one line per skipped config file and per server, with the
 * server's last error exactly as the manager recorded it (an HTTP status and what the server
 * said, the end of a crashed process's error output), and for a server that waits for the
 * person's authorisation, the command that starts it.
 */
import { plural } from '../mcp/tools/mcp-status.js';
import type { McpConfigError, McpServerStatus } from '../mcp/types.js';
import type { CheckLevel, CheckResult } from './doctor.js';

function levelOf(s: McpServerStatus): CheckLevel {
  if (s.state === 'ready') return 'ok';
  // A step the person takes, not a fault: the server itself answered.
  if (s.state === 'disabled' || s.state === 'awaiting_approval' || s.state === 'needs_auth') return 'warn';
  return 'fail';
}

/** What the person does about a server that is not ready for a reason they can act on. */
function advice(s: McpServerStatus): string | undefined {
  if (s.state === 'needs_auth')
    return `Navi needs your authorisation: run navi mcp login ${s.name} and open the address it prints, or press "Connect" on the MCP servers page`;
  if (s.auth?.status === 'pending')
    return `an authorisation was started and not finished: run navi mcp login ${s.name} again`;
  if (s.state === 'awaiting_approval')
    return `approve it on the MCP servers page first; it runs ${s.command}`;
  return undefined;
}

export function serverCheck(s: McpServerStatus): CheckResult {
  const counts = [`${s.transport}`, plural(s.tool_count, 'tool')];
  if (s.resource_count > 0) counts.push(plural(s.resource_count, 'resource'));
  if (s.prompt_count > 0) counts.push(plural(s.prompt_count, 'prompt'));
  const parts = [`${s.state} (${counts.join(', ')})`];
  const todo = advice(s);
  if (todo) parts.push(todo);
  if (s.last_error) parts.push(`last error: ${s.last_error}`);
  return { name: `mcp ${s.name}`, level: levelOf(s), detail: parts.join('; ') };
}

/** The lines of the MCP section, skipped config files first. */
export function mcpChecks(
  errors: readonly McpConfigError[],
  servers: readonly McpServerStatus[],
): CheckResult[] {
  return [
    ...errors.map((e): CheckResult => ({ name: `mcp config ${e.file}`, level: 'fail', detail: e.error })),
    ...servers.map(serverCheck),
  ];
}
