/**
 * Which tools a profile may use. A profile names tools by exact name, by glob (`*`, `?`) or by
 * group (`group:fs`); `denied_tools` wins over `enabled_tools`; user tools listed in
 * `tools/enabled.json` count as enabled in every profile, unless denied. A profile's `backends`
 * section changes both lists for runs on one backend (`policyFor`).
 */
import type { Profile } from '../config/profiles.js';
import type { RegisteredTool } from './registry.js';
import { derivedGroup, riskOf } from './risk.js';
import type { ToolGroup } from './types.js';

export type PolicyProfile = Pick<Profile, 'enabled_tools' | 'denied_tools'> & {
  /** Set by `policyFor` when a backend's section changed the lists, so refusals can say so. */
  policy_backend?: string;
};

/**
 * `profile` as it applies to a run on backend `backendId`: the backend's `enabled_tools` replace
 * the profile's, its `denied_tools` add to them. The same object comes back when the profile has
 * nothing for that backend, so the common case costs nothing.
 */
export function policyFor<P extends Profile>(
  profile: P,
  backendId: string | undefined,
): P & Pick<PolicyProfile, 'policy_backend'> {
  const section = backendId === undefined ? undefined : profile.backends[backendId];
  if (!section || (section.enabled_tools === undefined && section.denied_tools === undefined)) return profile;
  return {
    ...profile,
    enabled_tools: section.enabled_tools ?? profile.enabled_tools,
    denied_tools: [...profile.denied_tools, ...(section.denied_tools ?? [])],
    policy_backend: backendId,
  };
}

/** The share of the context the tool list may take on `backendId`: the profile's say, else the setting's. */
export function toolBudgetRatioFor(profile: Profile, backendId: string, setting: number): number {
  return profile.backends[backendId]?.tool_budget_ratio ?? setting;
}

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

/**
 * `reason` is phrased for the LLM; `rule` names the rule that refused, for people ("denied by
 * \"group:runtime\"", "not in enabled_tools", with the backend when its section decided).
 */
export type PolicyDecision = { allowed: true } | { allowed: false; reason: string; rule: string };

/** Whether `profile` may use the tool, and if not, why (phrased for the LLM). */
export function checkPolicy(profile: PolicyProfile & { id?: string }, entry: RegisteredTool): PolicyDecision {
  const onBackend = profile.policy_backend ? ` on the ${profile.policy_backend} backend` : '';
  const who = `${profile.id ? `profile "${profile.id}"` : 'this profile'}${onBackend}`;
  const denied = firstMatch(profile.denied_tools, entry);
  if (denied !== undefined) {
    return {
      allowed: false,
      reason: `Tool "${entry.tool.name}" is denied for ${who} (matches "${denied}").`,
      rule: `denied by "${denied}"${onBackend}`,
    };
  }
  if (entry.enabledEverywhere === true) return { allowed: true };
  if (firstMatch(profile.enabled_tools, entry) !== undefined) return { allowed: true };
  return {
    allowed: false,
    reason: `Tool "${entry.tool.name}" is not enabled for ${who}; use only the tools you were offered.`,
    rule: `not in enabled_tools${onBackend}`,
  };
}
