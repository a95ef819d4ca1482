/**
 * What a tool can do, declared by the tool itself. The shipped hook default (silent, log,
 * confirm) and the policy group of a tool that names none are derived from this declaration,
 * so a new tool gets sensible defaults without being added to any list.
 */
import type { ToolDefinition, ToolGroup } from './types.js';

/** The effects a tool may have. An absent flag means the tool never does that. */
export interface ToolRisk {
  /** Reads data beyond its arguments: files, memory, the tool registry, other sessions. */
  readonly reads?: boolean;
  /**
   * Changes something that outlives the call beyond the session's own working notes (todo,
   * scratchpad): files, memory, settings, the tool set, the session's profile, remote hosts.
   * A tool that delegates to an agent which may change things counts as writing.
   */
  readonly writes?: boolean;
  /** Runs commands or code chosen by its arguments. */
  readonly executes?: boolean;
  /** Reaches other machines. */
  readonly network?: boolean;
  /** Can hand back credentials. */
  readonly secrets?: boolean;
  /** What it executes runs inside the bubblewrap sandbox when one is available. */
  readonly sandboxed?: boolean;
  /**
   * Asks the person to approve every call, whatever else it does: its author wants a person in
   * the loop (an MCP server's `confirm_tools`, such as gnexus-creds' `reveal_secret`).
   */
  readonly asks?: boolean;
}

/** Every flag of `ToolRisk`, for checking what a user tool exports. */
export const RISK_FLAGS = [
  'reads',
  'writes',
  'executes',
  'network',
  'secrets',
  'sandboxed',
  'asks',
] as const satisfies readonly (keyof ToolRisk)[];

// Does not compile when ToolRisk gains a flag missing above.
const _everyFlagListed: Record<Exclude<keyof ToolRisk, (typeof RISK_FLAGS)[number]>, never> = {};

/**
 * The assumption for a tool that declares nothing (user tools; MCP tools without annotations):
 * it reads, writes and reaches the network. It does not count as executing, so such tools are
 * logged rather than asked about, as they always were.
 */
export const UNDECLARED_RISK: ToolRisk = Object.freeze({ reads: true, writes: true, network: true });

/** The tool's declared risk, or the cautious assumption when it declares none. */
export function riskOf(tool: Pick<ToolDefinition, 'risk'>): ToolRisk {
  return tool.risk ?? UNDECLARED_RISK;
}

export type HookDefault =
  | { action: 'silent' | 'log' | 'confirm'; reason: string }
  | { action: 'sandbox'; reason: string };

/**
 * The shipped hook action for a risk, before the sandbox is known (`sandbox`: log inside the
 * sandbox, confirm without it) and before the profile's autonomy and overrides.
 */
export function hookDefaultFor(risk: ToolRisk): HookDefault {
  if (risk.asks) return { action: 'confirm', reason: 'it asks for approval of every call' };
  if (risk.executes) {
    return risk.sandboxed
      ? { action: 'sandbox', reason: 'it runs commands or code' }
      : { action: 'confirm', reason: 'it changes things outside Navi without a sandbox' };
  }
  if (risk.writes) return { action: 'log', reason: 'default for tools that may change something' };
  // Credentials handed back leave a trace in the audit log, even from a read-only tool.
  if (risk.secrets) return { action: 'log', reason: 'it can reveal secrets' };
  return { action: 'silent', reason: 'it only reads or keeps working notes' };
}

/**
 * The policy group a tool belongs to when it names none: `secrets` for tools that can reveal
 * credentials, `web` for tools that only read from other machines. Others have no group.
 */
export function derivedGroup(risk: ToolRisk): ToolGroup | undefined {
  if (risk.secrets) return 'secrets';
  if (risk.network && !risk.writes && !risk.executes) return 'web';
  return undefined;
}
