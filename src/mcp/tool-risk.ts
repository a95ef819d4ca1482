/**
 * The risk of an MCP tool, read from the annotations its server sends with `tools/list`.
 * Annotations are hints written by the server, so a missing one takes the cautious reading the
 * MCP specification gives it: a tool that does not say it is read-only may write, and one that
 * does not say its world is closed may reach other machines.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRisk } from '../tools/risk.js';
import type { ToolGroup } from '../tools/types.js';

/**
 * `readOnlyHint: true` drops `writes`; `openWorldHint: false` drops `network`; everything else
 * (absent annotations, `destructiveHint` either way) leaves the tool writing and networked.
 * MCP has no hint for credentials: a server configured with `"group": "secrets"` marks all its
 * tools as revealing secrets, so their audit lines are redacted.
 */
export function mcpToolRisk(annotations: ToolAnnotations | undefined, serverGroup?: ToolGroup): ToolRisk {
  const writes = annotations?.readOnlyHint !== true;
  const network = annotations?.openWorldHint !== false;
  return {
    reads: true,
    ...(writes && { writes: true }),
    ...(network && { network: true }),
    ...(serverGroup === 'secrets' && { secrets: true }),
  };
}
