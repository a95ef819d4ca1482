/**
 * Hook actions (DESIGN §9): what happens around an allowed call before it runs.
 * - `silent`: nothing beyond the logging middleware's record.
 * - `log`: an audit line with the arguments, at info level, before the call runs.
 * - `confirm`: the user must approve the call first (`ToolContext.confirm`).
 *
 * Shipped defaults ask before tools that change things outside Navi's own data without a
 * sandbox. A profile tightens or loosens them with `autonomy`, and overrides single tools
 * with `confirm_tools` (always ask) and `trusted_tools` (never ask); `confirm_tools` wins.
 */
import type { Profile } from '../config/profiles.js';
import { firstMatch } from './policy.js';
import type { RegisteredTool } from './registry.js';

export type HookAction = 'silent' | 'log' | 'confirm';

export type HookProfile = Pick<Profile, 'confirm_tools' | 'trusted_tools' | 'autonomy'>;

export interface HookEnvironment {
  /** Whether bubblewrap can contain terminal and code_exec. */
  sandboxAvailable: boolean;
}

export interface HookDecision {
  action: HookAction;
  /** Why, for logs and refusal messages. */
  reason: string;
}

/** Change things outside Navi's own data with nothing to contain them. */
export const CONFIRM_BY_DEFAULT: readonly string[] = ['ssh_exec', 'write_tool', 'create_mcp_server'];
/** Contained by bubblewrap when it is installed; otherwise they run directly on the host. */
export const CONFIRM_WITHOUT_SANDBOX: readonly string[] = ['terminal', 'code_exec'];
/**
 * Read-only, or touching only the run's own working state. Everything not listed here or
 * above (including user and unknown MCP tools) defaults to `log`.
 */
export const SILENT_BY_DEFAULT: readonly string[] = [
  'todo',
  'scratchpad',
  'list_tools',
  'tool_manual',
  'list_profiles',
  'mcp_status',
  'reflect',
  'image_view',
  'mcp__navi_web__web_search',
  'mcp__navi_web__web_view',
  'mcp__gnexus_creds__search_secrets',
  'mcp__gnexus_creds__get_secret',
];

/** The shipped default for a tool, before the profile's autonomy and overrides. */
export function defaultAction(name: string, env: HookEnvironment): HookDecision {
  if (CONFIRM_BY_DEFAULT.includes(name)) {
    return { action: 'confirm', reason: 'it changes things outside Navi without a sandbox' };
  }
  if (CONFIRM_WITHOUT_SANDBOX.includes(name)) {
    return env.sandboxAvailable
      ? { action: 'log', reason: 'it runs inside the bubblewrap sandbox' }
      : {
          action: 'confirm',
          reason:
            'without the bubblewrap sandbox (not installed, or NAVI_SANDBOX=off) it would run directly on this machine',
        };
  }
  if (SILENT_BY_DEFAULT.includes(name))
    return { action: 'silent', reason: 'it only reads or keeps working notes' };
  return { action: 'log', reason: 'default for tools that may change something' };
}

/** The action for one call of `entry` under `profile`. */
export function resolveHookAction(
  profile: HookProfile,
  entry: RegisteredTool,
  env: HookEnvironment,
): HookDecision {
  const asked = firstMatch(profile.confirm_tools, entry);
  if (asked !== undefined)
    return { action: 'confirm', reason: `the profile asks for approval of "${asked}"` };
  const base = defaultAction(entry.tool.name, env);
  const trusted = firstMatch(profile.trusted_tools, entry);
  if (trusted !== undefined) {
    // Trust removes the question, not the audit line.
    return base.action === 'confirm' ? { action: 'log', reason: `the profile trusts "${trusted}"` } : base;
  }
  if (profile.autonomy === 'strict' && base.action === 'log') {
    return {
      action: 'confirm',
      reason: 'the profile is strict: every tool that may change something asks first',
    };
  }
  if (profile.autonomy === 'autonomous' && base.action === 'confirm') {
    return { action: 'log', reason: 'the profile is autonomous' };
  }
  return base;
}
