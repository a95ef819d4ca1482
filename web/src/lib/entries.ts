/** What the chat shows: one entry per bubble, card or notice, built from events or history. */
import type { AttachedFile } from '../../../src/protocol/commands.js';
import type { ErrorCode } from '../../../src/protocol/error-codes.js';
import type {
  ElicitationAction,
  NoticeCode,
  SamplingConfirmArgs,
  ToolArgs,
  ToolOutcome,
} from '../../../src/protocol/events.js';
import type { RecallStamp } from '../../../src/protocol/rest.js';
import type { FormPayload } from '../../../src/protocol/ui-components.js';

/**
 * The id of the stored message an entry shows (rendered as `data-message-id`). Entries from the
 * history have it at once; a run's user message and final answer get it from the run's events
 * (lib/timeline.ts), and what no event names once the run has ended and the client has read the
 * session again (lib/message-ids.ts).
 */
interface Stored {
  messageId?: string;
}

export interface UserEntry extends Stored {
  kind: 'user';
  key: string;
  text: string;
  /** Image sources ready for `<img src>` (data: URIs). */
  images: string[];
  files: string[];
  /** The files as sent (name and path), so an edited message can carry them again. */
  attachments?: AttachedFile[];
  /** Set on the prompt of a run a recall started: nobody typed it, the agent scheduled it. */
  recall?: RecallStamp;
}

export interface AssistantEntry extends Stored {
  kind: 'assistant';
  key: string;
  text: string;
  streaming: boolean;
  /** A partial answer saved when the run was stopped or failed. */
  interrupted: boolean;
  /** Actions the answer claims that no tool call of its turn performed (the claim check). */
  unverifiedClaims?: string[];
}

export interface ThinkingEntry extends Stored {
  kind: 'thinking';
  key: string;
  text: string;
  done: boolean;
}

export interface PlanEntry extends Stored {
  kind: 'plan';
  key: string;
  plan: string;
}

export type ToolStatus = 'running' | 'done' | 'failed' | 'cancelled';
export type ConfirmState = 'pending' | 'sent-approve' | 'sent-deny' | null;

export interface ToolEntry extends Stored {
  kind: 'tool';
  key: string;
  callId: string;
  tool: string;
  args: ToolArgs;
  status: ToolStatus;
  /** How the call ended, as the server said (`denied`, `timed_out`…; see lib/tool-outcome.ts). */
  outcome?: ToolOutcome;
  result: string | null;
  metadata: Record<string, unknown>;
  isSubagent: boolean;
  /** Subagent calls and reasoning nested under a `spawn_agent` card. */
  children: (ToolEntry | ThinkingEntry)[];
  confirm: ConfirmState;
  /** Values of a submitted form component (sent by this client, or found in the history). */
  formSubmitted: Record<string, unknown> | null;
  /** Forms an MCP server asked the person for during the call (`elicitation_request`). */
  elicitations?: ElicitationView[];
  /** Requests of an MCP server to use Navi's model during the call (`mcp_sampling` confirmations). */
  samplings?: SamplingView[];
}

/**
 * One server's form in the chat: `open` to answer, `sending` until the server takes the answer
 * (a refused answer opens it again), `resolved` once `elicitation_resolved` said how it ended.
 */
export interface ElicitationView {
  id: string;
  server: string;
  message: string;
  form: FormPayload;
  state: 'open' | 'sending' | 'resolved';
  action?: ElicitationAction;
  /** Why it ended without the person (a timeout, a stop, the server withdrew it). */
  reason?: string;
  /** The values this client sent, shown once the answer was taken. */
  sent?: Record<string, unknown>;
}

export interface SamplingView {
  /** The confirmation's call id (`<call id>/sampling/<n>`), which the answer names. */
  callId: string;
  args: SamplingConfirmArgs;
  /** null: no longer waiting (the call ended before anyone answered). */
  state: ConfirmState;
}

export interface NoticeEntry extends Stored {
  kind: 'notice';
  key: string;
  text: string;
  /** Set on a `notice` event's line: how the run adapts to its model (information, not an error). */
  code?: NoticeCode;
}

export interface ErrorEntry extends Stored {
  kind: 'error';
  key: string;
  message: string;
  hint: string;
  code?: ErrorCode;
  /**
   * A failed turn: the run ended with this error (stored as a `kind: 'error'` message, so it
   * comes back after a reload) and Retry runs the message again. Unset on a refusal that ended
   * no run.
   */
  failed?: true;
}

export type ChatEntry =
  | UserEntry
  | AssistantEntry
  | ThinkingEntry
  | PlanEntry
  | ToolEntry
  | NoticeEntry
  | ErrorEntry;

let counter = 0;
/** A key unique within the page, for `v-for`. */
export function newKey(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** `data:` URI for a stored base64 image (the server keeps them without prefix). */
export function imageSource(image: string): string {
  if (image.startsWith('data:')) return image;
  // Browsers sniff the real format, so the declared type only has to be an image type.
  const mime = image.startsWith('/9j/') ? 'image/jpeg' : image.startsWith('R0lG') ? 'image/gif' : 'image/png';
  return `data:${mime};base64,${image}`;
}

export function newToolEntry(callId: string, tool: string, args: ToolArgs, isSubagent: boolean): ToolEntry {
  return {
    kind: 'tool',
    key: newKey('tool'),
    callId,
    tool,
    args,
    status: 'running',
    result: null,
    metadata: {},
    isSubagent,
    children: [],
    confirm: null,
    formSubmitted: null,
  };
}
