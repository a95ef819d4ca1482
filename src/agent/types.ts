/**
 * What the server sees of the agent: `runStream`, the one entry point of a run. Tools reach
 * the agent through the `AgentHandle` of their context instead.
 */
import type { AttachedFile } from '../protocol/commands.js';
import type { AgentEvent, RunTrigger } from '../protocol/events.js';
import type { FormSubmission, RecallStamp } from '../protocol/rest.js';
import type { ConfirmAnswer, ConfirmRequest, ElicitAnswer, ElicitRequest } from '../tools/types.js';

export interface RunInput {
  /** The user's text (for a form submission, the JSON of its values). */
  content: string;
  /** Base64 images, without a data: prefix. */
  images?: string[];
  /** Files already uploaded to this session; the server checked they belong to it. */
  files?: AttachedFile[];
  trigger: RunTrigger;
  /** Form submissions reach the LLM but are not shown as a chat bubble (context-only). */
  contextOnly?: boolean;
  /** The submitted form, when this run answers one (`content` is then its JSON). */
  formSubmit?: FormSubmission;
  /** The recall that started this run (`trigger` is then `recall`). */
  recall?: RecallStamp & { chain: number };
  /**
   * Regenerate and edit (docs/architecture.md#rewinding): before the run, every message after
   * `messageId` is removed from both buffers (`history_rewound`). With `rerun` (regenerate) that
   * message stays and the run answers it again: nothing is appended and `content` is not read.
   * Without (edit) it is removed too, and `content`, `images` and `files` are appended in its place.
   */
  rewind?: { messageId: string; rerun: boolean };
  /**
   * A client that cannot answer a tool confirmation started the run (the OpenAI-compatible API,
   * Navi's MCP server): a call that needs one is refused with a reason saying so, even when a
   * web client watches the session; the profile's autonomy and trusted tools still apply.
   */
  source?: RunSource;
  /**
   * The conversation as the client holds it, before `content` (the OpenAI-compatible API). When
   * its user and assistant texts differ from the session's display buffer, the session's context
   * buffer is replaced by it before the run (the client's history wins for what the LLM sees);
   * when they agree, the context is kept as stored, with its tool calls and summaries.
   * docs/openai-api.md#sessions-and-history.
   */
  history?: HistoryMessage[];
}

export type RunSource = 'openai' | 'mcp';

/** One message of a client's history: its text, and the base64 images of a user message. */
export interface HistoryMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  images?: string[];
}

export interface RunOptions {
  runId: string;
  /** Aborting stops the run cooperatively: the LLM request is aborted and the partial answer saved. */
  signal: AbortSignal;
  /**
   * Asks the user to approve a tool call. When `asked` is true the agent puts a
   * `tool_confirm_request` into its own event stream, after the call's `tool_started` and
   * before its `tool_call`; when false nobody could be asked and `answer` is already a refusal
   * (no event is sent), as for a run nobody watches.
   */
  confirm: (request: ConfirmRequest) => ConfirmTicket;
  /**
   * Asks the person to fill in an MCP server's form. When `asked` is true the agent puts an
   * `elicitation_request` into its own stream (and `elicitation_resolved` once answered); when
   * false nobody could be asked and `answer` is already a decline with the reason. Absent: every
   * request is declined (a run nobody brokers).
   */
  elicit?: (request: ElicitRequest) => ElicitTicket;
}

/** The answer to one elicitation, and whether a person was asked at all. */
export interface ElicitTicket {
  asked: boolean;
  answer: Promise<ElicitAnswer>;
}

/** The answer to one confirmation, and whether a person was asked at all. */
export interface ConfirmTicket {
  asked: boolean;
  answer: Promise<ConfirmAnswer>;
}

export interface AgentApi {
  /**
   * Streams the events of one run of `sessionId`. Never throws: failures end the stream with an
   * `error` event (`recoverable: false`). Exactly one of `stream_end`, `stream_stopped` or a
   * non-recoverable `error` ends the run; only after-run events (`isAfterRunEvent`: the
   * post-turn `context_compressed`) may follow it before the stream closes.
   */
  runStream(sessionId: string, input: RunInput, options: RunOptions): AsyncIterable<AgentEvent>;
}
