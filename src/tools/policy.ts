/**
 * Which tools a profile may use. A profile names tools by exact name, by glob (`*`, `?`) or by
 * group (`group:fs`); `denied_tools` wins over `enabled_tools`; user tools listed in
 * `tools/enabled.json` count as enabled in every profile, unless denied.
 */
import type { Profile } from '../config/profiles.js';
import type { RegisteredTool } from './registry.js';
import { derivedGroup, riskOf } from './risk.js';
import type { ToolGroup } from './types.js';

export type PolicyProfile = Pick<Profile, 'enabled_tools' | 'denied_tools'>;

/** The policy group of a tool: the one it names, else one derived from its declared risk. */
export function groupOf(entry: Pick<RegisteredTool, 'tool'>): ToolGroup | undefined {
  return entry.tool.group ?? derivedGroup(riskOf(entry.tool));
}

// Compiled on every check, not cached: profiles hold a handful of globs and a cache would be
// state shared by every profile ever loaded.
function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
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
