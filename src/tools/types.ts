/**
 * The tool contract. Every tool — built-in, user-written or bridged from an MCP
 * server — is a `ToolDefinition`; every call goes through the `ToolExecutor`.
 *
 * `execute` receives arguments already validated against `parameters` and a `ToolContext`
 * describing the run it is part of. It resolves to a `ToolResult` whose `output` is always a
 * string (what the LLM reads). Throwing is allowed — the executor turns it into
 * `success: false` — but a well-behaved tool returns failures as results with a message that
 * says how to do better.
 */
import type { Logger } from 'pino';
import type { Profile } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import type { AgentEvent } from '../protocol/events.js';
import type { FormPayload } from '../protocol/ui-components.js';
import type { StoredMessage } from '../store/types.js';
import type { ToolRisk } from './risk.js';

export type { ToolRisk } from './risk.js';

export type JsonSchema = Record<string, unknown>;
export type ToolParams = Record<string, unknown>;

export interface ToolResult {
  success: boolean;
  output: string;
  error?: string;
  /**
   * Hints for the agent and the client: `is_image` + `base64` (inject an image into the
   * context only), `ui_component`, `published`, `structured_content`…
   */
  metadata?: Record<string, unknown>;
}

export type ToolSource = 'builtin' | 'user' | 'mcp';

/** Policy groups; `group:<name>` in a profile names every tool of the group. */
export type ToolGroup =
  | 'fs'
  | 'runtime'
  | 'web'
  | 'memory'
  | 'session'
  | 'agents'
  | 'meta'
  | 'schedule'
  | 'secrets';

/** What the running agent offers to tools that act on the agent itself. */
export interface AgentHandle {
  /**
   * Runs a subagent in memory only and resolves to its final answer. `signal` (the calling
   * tool's) stops it too, so a tool timeout never leaves a subagent running unseen.
   */
  runEphemeral(
    task: string,
    options: { profileId?: string; inheritSystemPrompt?: boolean; signal?: AbortSignal },
  ): Promise<string>;
  /** Changes the session's profile; the next LLM call uses it. Rejects for an unknown id. */
  switchProfile(profileId: string): Promise<{ id: string; name: string }>;
  /** The profile the run is using now. */
  currentProfileId(): string;
  /**
   * The run's context as the LLM sees it now. A subagent's lives in memory only, so tools that
   * look back at the conversation (reflect) read it here rather than from the session store.
   */
  context?(): readonly StoredMessage[];
}

export interface ConfirmRequest {
  callId: string;
  tool: string;
  args: ToolParams;
  /**
   * Aborted when nobody waits for the answer any more (a server's sampling request whose call
   * ended or which the server withdrew): the confirmation is then refused with the signal's
   * reason and stops waiting.
   */
  signal?: AbortSignal;
}

/**
 * `true` approved; `false` refused, `reason` saying why (the person said no, a timeout, nobody to
 * ask, stopped). `declined` marks the person's own no, so the call's outcome can tell `denied` from
 * `confirmation_timeout`; without it nobody answered.
 */
export type ConfirmAnswer = { approved: true } | { approved: false; reason: string; declined?: true };

/**
 * An MCP server's request for input during a call (docs/mcp.md#elicitation): `form` is its
 * requested schema as a navi-ui form, `schema` the schema itself, to check the answer against.
 */
export interface ElicitRequest {
  /** Unique within the run. */
  id: string;
  callId: string;
  server: string;
  message: string;
  form: FormPayload;
  schema: Record<string, unknown>;
  /**
   * Aborted when the server withdraws the request or its call ends: the form is then cancelled
   * with the signal's reason.
   */
  signal?: AbortSignal;
}

/**
 * The person's answer, or why there was none: a run nobody can answer for (a recall, a REST or
 * API client, no one connected) gets `decline` with `reason`; a timeout or a stop gets `cancel`.
 */
export type ElicitAnswer =
  | { action: 'accept'; content: Record<string, unknown> }
  | { action: 'decline' | 'cancel'; reason?: string };

export interface ToolContext {
  /** Session the call belongs to; `subagent_<uuid>` inside a subagent. */
  sessionId: string;
  runId: string;
  callId: string;
  /** Aborted when the user stops the run or the tool's time limit passes. */
  signal: AbortSignal;
  isSubagent: boolean;
  /** Depth of subagent nesting: 0 for the main agent. */
  depth: number;
  profileId: string;
  /** Sends an event into the run's stream (used for subagent forwarding, profile switches). */
  emit(event: AgentEvent): void;
  /** Asks the user to approve a call; resolves to a refusal when nobody can answer. */
  confirm(request: ConfirmRequest): Promise<ConfirmAnswer>;
  /**
   * Shows an MCP server's form to the person and waits for the answer; resolves to a decline
   * with a reason when nobody can answer. Absent where no run backs the call (a test harness).
   */
  elicit?(request: ElicitRequest): Promise<ElicitAnswer>;
  log: Logger;
  agent?: AgentHandle;
  /**
   * Navi's settings, filled in by the executor. User tools read their own settings here
   * (secret values included: the executor masks them in whatever the tool hands back).
   */
  settings?: Settings;
  /**
   * Set when a recall started the run: which one and how long its chain is, so a recall
   * scheduled now continues the chain (and the chain's limit holds).
   */
  recall?: RecallOrigin;
}

/** The recall that started a run. */
export interface RecallOrigin {
  id: string;
  /** 1 for a recall scheduled in a person's run, one more per recall run in between. */
  chain: number;
}

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /** Policy group, for `group:<name>` patterns; derived from `risk` when absent. */
  readonly group?: ToolGroup;
  /**
   * What the tool can do; its shipped hook default follows from it. Built-ins always declare
   * it; a tool without one is assumed to read, write and reach the network.
   */
  readonly risk?: ToolRisk;
  /**
   * Whether THIS call should ask the person first, for tools where only some calls need it
   * (gmail's `send` but not its `search`). Receives the validated arguments; returns the reason
   * to ask (shown in logs and refusals), or undefined when the call needs no approval. Its answer
   * counts as a shipped `confirm` default: `autonomous` autonomy and `trusted_tools` lift it,
   * `confirm_tools` asks anyway. Must be cheap and synchronous; a throw counts as "ask".
   */
  confirmCall?(params: ToolParams): string | undefined;
  /**
   * The description offered to the LLM under one profile, when it depends on the profile
   * (the scratchpad lists the profile's sections). Defaults to `description`.
   */
  describeFor?(profile: Profile): string;
  execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * Base class for class-format tools, built-in or user-written:
 * `export default class MyTool extends Tool { name = 'my_tool'; … }`.
 */
export abstract class Tool implements ToolDefinition {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly parameters: JsonSchema;
  readonly group?: ToolGroup;
  readonly risk?: ToolRisk;
  abstract execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult>;
}

export function ok(output: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata ? { success: true, output, metadata } : { success: true, output };
}

export function fail(error: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata
    ? { success: false, output: error, error, metadata }
    : { success: false, output: error, error };
}
