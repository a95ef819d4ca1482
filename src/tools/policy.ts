/**
 * Which tools a profile may use (DESIGN §9, policy after Flynn). A profile names tools by exact
 * name, by glob (`*`, `?`) or by group (`group:fs`); `denied_tools` wins over `enabled_tools`;
 * user tools listed in `tools/enabled.json` count as enabled in every profile, unless denied.
 */
import type { Profile } from '../config/profiles.js';
import type { RegisteredTool } from './registry.js';
import type { ToolGroup } from './types.js';

export type PolicyProfile = Pick<Profile, 'enabled_tools' | 'denied_tools'>;

/** MCP servers whose tools belong to a group without declaring one. */
const MCP_SERVER_GROUPS: Record<string, ToolGroup> = {
  navi_web: 'web',
  gnexus_creds: 'secrets',
};

/** Policy group of the MCP servers that ship with Navi (by sanitised key), if any. */
export function mcpServerGroup(key: string): ToolGroup | undefined {
  // Own keys only: a server named "constructor" must not find Object's prototype.
  return Object.hasOwn(MCP_SERVER_GROUPS, key) ? MCP_SERVER_GROUPS[key] : undefined;
}

/** The policy group of a tool: its own `group`, else one derived from its MCP server name. */
export function groupOf(entry: Pick<RegisteredTool, 'tool'>): ToolGroup | undefined {
  if (entry.tool.group) return entry.tool.group;
  const m = /^mcp__(.+?)__/.exec(entry.tool.name);
  return m ? mcpServerGroup(m[1]!) : undefined;
}

const globCache = new Map<string, RegExp>();

function globToRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (!re) {
    const body = glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    re = new RegExp(`^${body}$`);
    globCache.set(glob, re);
  }
  return re;
}

/** Whether one pattern (`name`, glob, `group:x`) names the tool. */
export function matchesPattern(pattern: string, name: string, group: ToolGroup | undefined): boolean {
  if (pattern.startsWith('group:')) return group !== undefined && pattern.slice(6) === group;
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === name;
  return globToRegExp(pattern).test(name);
}

/** The first pattern of `patterns` that names the tool, if any (for messages that say why). */
export function firstMatch(
  patterns: readonly string[],
  entry: Pick<RegisteredTool, 'tool'>,
): string | undefined {
  const group = groupOf(entry);
  return patterns.find((p) => matchesPattern(p, entry.tool.name, group));
}

export type PolicyDecision = { allowed: true } | { allowed: false; reason: string };

/** Whether `profile` may use the tool, and if not, why (phrased for the LLM). */
export function checkPolicy(profile: PolicyProfile & { id?: string }, entry: RegisteredTool): PolicyDecision {
  const who = profile.id ? `profile "${profile.id}"` : 'this profile';
  const denied = firstMatch(profile.denied_tools, entry);
  if (denied !== undefined) {
    return {
      allowed: false,
      reason: `Tool "${entry.tool.name}" is denied for ${who} (matches "${denied}").`,
    };
  }
  if (entry.enabledEverywhere === true) return { allowed: true };
  if (firstMatch(profile.enabled_tools, entry) !== undefined) return { allowed: true };
  return {
    allowed: false,
    reason: `Tool "${entry.tool.name}" is not enabled for ${who}; use only the tools you were offered.`,
  };
}
