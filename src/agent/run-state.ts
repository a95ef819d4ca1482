/** The state one run carries through the loop: passed explicitly, never held in globals. */
import type { Profile } from '../config/profiles.js';
import type { ErrorCode } from '../protocol/error-codes.js';
import type { AgentEvent, NoticeCode, RunUsage } from '../protocol/events.js';
import type { ModelChoice } from '../protocol/rest.js';
import type { StoredMessage } from '../store/types.js';
import type { ConfirmRequest, ElicitRequest, RecallOrigin } from '../tools/types.js';
import type { RunCall } from './claims.js';
import type { Transcript } from './transcript.js';
import type { ConfirmTicket, ElicitTicket } from './types.js';

export interface RunState {
  runId: string;
  transcript: Transcript;
  /** The context as the LLM will see it; kept in memory for the run, persisted as it grows. */
  context: StoredMessage[];
  profile: Profile;
  signal: AbortSignal;
  /** The run's confirmation broker; the tool turn announces each question it asks. */
  ask: (request: ConfirmRequest) => ConfirmTicket;
  /** The run's broker of MCP servers' forms; absent, every form is declined (tool-turn.ts). */
  elicit?: (request: ElicitRequest) => ElicitTicket;
  emit: (event: AgentEvent) => void;
  isSubagent: boolean;
  depth: number;
  /** Parent's system prompt, for subagents spawned with `inherit_system_prompt`. */
  basePrompt?: string;
  /** Tokens the context holds after the last LLM call. */
  tokens: number;
  /**
   * The system prompt, built at the run's first LLM call and reused by every later one; the
   * profile it was built for, so a `switch_profile` mid-run gets a prompt of its own.
   */
  system?: { profileId: string; text: string };
  /** The recall that started the run, if one did (subagents do not inherit it). */
  recall?: RecallOrigin;
  /** The session's model choice, read when the run starts; a subagent of the same profile shares it. */
  modelOverride?: ModelChoice;
  /** Notice codes already sent in this run: each goes out once (shared with subagents). */
  notices: Set<NoticeCode>;
  /** The backend of the latest LLM call: its tool calls run under that backend's policy. */
  backendId?: string;
  /** The context window of the latest LLM call (the backend's, clamped to the model's). */
  window?: number;
  /** The run's tool calls so far, for the claim check (a subagent keeps its own). */
  calls: RunCall[];
  /** Tokens of every LLM call of the run so far: one object, shared by reference with subagents. */
  usage: RunUsage;
}

/** How the loop ended; `messageId` names the final answer it stored, when it stored one. */
export type LoopOutcome =
  | { kind: 'end'; content: string; messageId?: string }
  | { kind: 'stopped'; content: string; messageId?: string }
  | { kind: 'error'; message: string; code: ErrorCode };
