/**
 * The risk of an MCP tool, read from the annotations its server sends with `tools/list`.
 * Annotations are hints written by the server, so a missing one takes the cautious reading the
 * MCP specification gives it: a tool that does not say it is read-only may write, and one that
 * does not say its world is closed may reach other machines.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRisk } from '../tools/risk.js';
import type { ToolGroup } from '../tools/types.js';
import type { McpServerConfig } from './types.js';

/**
 * `readOnlyHint: true` drops `writes`; `openWorldHint: false` drops `network`; everything else
 * (absent annotations, `destructiveHint` either way) leaves the tool writing and networked.
 * MCP has no hint for credentials: a server configured with `"group": "secrets"` marks all its
 * tools as revealing secrets, so their audit lines are redacted. Nor has it one for "ask the
 * person first": `asks` comes from the server config's `confirm_tools`, written by whoever
 * installed the server, never from the server's own answer.
 */
export function mcpToolRisk(
  annotations: ToolAnnotations | undefined,
  serverGroup?: ToolGroup,
  asks = false,
): ToolRisk {
  const writes = annotations?.readOnlyHint !== true;
  const network = annotations?.openWorldHint !== false;
  return {
    reads: true,
    ...(writes && { writes: true }),
    ...(network && { network: true }),
    ...(serverGroup === 'secrets' && { secrets: true }),
    ...(asks && { asks: true }),
  };
}

/** Whether the server's config lists `tool` (its own name, without the `mcp__` prefix) in `confirm_tools`. */
export function asksBeforeEveryCall(config: Pick<McpServerConfig, 'confirmTools'>, tool: string): boolean {
  return config.confirmTools?.includes(tool) ?? false;
}
