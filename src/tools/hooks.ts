/**
 * Hook actions: what happens around an allowed call before it runs.
 * - `silent`: nothing beyond the logging middleware's record.
 * - `log`: an audit line with the arguments, at info level, before the call runs.
 * - `confirm`: the user must approve the call first (`ToolContext.confirm`).
 *
 * Shipped defaults follow each tool's declared risk (see risk.ts): tools that execute without
 * a sandbox or declare `asks` ask, tools that may change something log, read-only tools stay
 * silent. A profile tightens or loosens them with `autonomy`, and overrides single tools with
 * `confirm_tools` (always ask) and `trusted_tools` (never ask); `confirm_tools` wins. A tool
 * may also ask for single calls (`ToolDefinition.confirmCall`); such a call is treated like a
 * tool whose shipped default is `confirm`.
 */
import type { Profile } from '../config/profiles.js';
import type { ToolPolicyInfo } from '../protocol/rest.js';
import { firstMatch } from './policy.js';
import type { RegisteredTool } from './registry.js';
import { hookDefaultFor, riskOf } from './risk.js';
import type { ToolDefinition, ToolParams } from './types.js';

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

/** The shipped default for a tool, from its declared risk, before the profile's autonomy and overrides. */
export function defaultAction(tool: Pick<ToolDefinition, 'risk'>, env: HookEnvironment): HookDecision {
  const base = hookDefaultFor(riskOf(tool));
  if (base.action !== 'sandbox') return base;
  return env.sandboxAvailable
    ? { action: 'log', reason: 'it runs inside the bubblewrap sandbox' }
    : {
        action: 'confirm',
        reason:
          'without the bubblewrap sandbox (not installed, or NAVI_SANDBOX=off) it would run directly on this machine',
      };
}

/**
 * The action for one call of `entry` under `profile`. `params` are the call's validated
 * arguments, for tools that ask about single calls; without them only the tool-wide default counts.
 */
export function resolveHookAction(
  profile: HookProfile,
  entry: RegisteredTool,
  env: HookEnvironment,
  params?: ToolParams,
): HookDecision {
  const callReason =
    params && entry.tool.confirmCall ? () => callConfirmReason(entry.tool, params) : undefined;
  return decide(profile, entry, env, callReason);
}

/**
 * When calls of `entry` under `profile` ask the person first: `always` (every call), `per_call`
 * (the tool's `confirmCall` decides from each call's arguments and the profile lets such a
 * question stand) or `never`. Derived from `resolveHookAction`'s own rules, so what the client
 * is shown is what the executor does.
 */
export function confirmationOf(
  profile: HookProfile,
  entry: RegisteredTool,
  env: HookEnvironment,
): ToolPolicyInfo['confirm'] {
  if (decide(profile, entry, env, undefined).action === 'confirm') return 'always';
  if (!entry.tool.confirmCall) return 'never';
  // A call the tool asks about: does the profile let that question through?
  const asking = decide(profile, entry, env, () => 'the tool asks for approval of this call');
  return asking.action === 'confirm' ? 'per_call' : 'never';
}

/** The rules of `resolveHookAction`; `callReason` is the tool's say about one call, when known. */
function decide(
  profile: HookProfile,
  entry: RegisteredTool,
  env: HookEnvironment,
  callReason: (() => string | undefined) | undefined,
): HookDecision {
  const asked = firstMatch(profile.confirm_tools, entry);
  if (asked !== undefined)
    return { action: 'confirm', reason: `the profile asks for approval of "${asked}"` };
  let base = defaultAction(entry.tool, env);
  if (callReason && base.action !== 'confirm') {
    const reason = callReason();
    if (reason !== undefined) base = { action: 'confirm', reason };
  }
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

const MAX_REASON = 300;

/**
 * The reason a tool gives for asking about this call, or undefined. The check is the tool's own
 * code (a user tool's, possibly): a throw or an answer of the wrong type asks rather than skips.
 */
function callConfirmReason(tool: ToolDefinition, params: ToolParams): string | undefined {
  let answer: unknown;
  try {
    answer = tool.confirmCall?.(params);
  } catch (err) {
    return `its check of whether this call needs approval failed (${String((err as Error)?.message ?? err).slice(0, MAX_REASON)})`;
  }
  if (answer === undefined || answer === null || answer === '' || answer === false) return undefined;
  return typeof answer === 'string' ? answer.slice(0, MAX_REASON) : 'the tool asks for approval of this call';
}
