/**
 * Server → client events of the WebSocket protocol (see docs/protocol.md).
 *
 * One discriminated union, imported by the agent, the server, the tests and the web client.
 * The agent yields `AgentEvent`s; the server stamps each event of a run with `run_id` and a
 * per-run `seq` (starting at 1) before it goes on the wire, giving a `ServerEvent`.
 *
 * Ids that let a client place an event without comparing text:
 * - `parent_call_id`: on the events of a subagent, the id of the `spawn_agent` call it runs
 *   under (its nearest one, at any depth); absent on the run's own events.
 * - `turn`: the LLM call (0, 1, 2… within the run or subagent) that the reasoning belongs to,
 *   so `turn_thinking` can be matched with the `thinking_delta`s already shown. Navi always
 *   sends it; it is optional only so that older recordings stay valid.
 */
import type { ErrorCode } from './error-codes.js';
import type { FormPayload } from './ui-components.js';

export type RunTrigger = 'user' | 'form' | 'recall';

export type ToolArgs = Record<string, unknown>;

/**
 * The tokens every LLM call of a run used, its subagents' included, summed: as the backend
 * reported them, or estimated (four characters a token) for a call it reported none for. The
 * OpenAI-compatible API reports them as `usage`.
 */
export interface RunUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type AgentEvent =
  /**
   * `user_message_id`: the id of the user message the run answers, as `GET /sessions/{id}` will
   * list it: the message this run stores (a new one for a message, an edit, a form or a recall's
   * prompt) or, for a regenerate, the one already stored. A run refused before it stores its
   * message (its `error` says so) stores nothing under that id. Navi always sends it.
   *
   * When `trigger` is `recall`: `recall_id` names the recall, `prompt` is the prompt it runs (no
   * client sent it, so a client shows it from here), `scheduled_for` (ISO) when it was due and
   * `late_ms` how late it started, when it was late (the stored prompt's `recall` stamp).
   */
  | {
      type: 'stream_start';
      trigger: RunTrigger;
      user_message_id?: string;
      recall_id?: string;
      prompt?: string;
      scheduled_for?: string;
      late_ms?: number;
    }
  | { type: 'thinking_delta'; delta: string; turn?: number }
  | { type: 'thinking_end'; turn?: number }
  | {
      type: 'turn_thinking';
      thinking: string;
      is_subagent: boolean;
      turn?: number;
      parent_call_id?: string;
    }
  | { type: 'plan_ready'; plan: string }
  | {
      type: 'tool_started';
      call_id: string;
      tool: string;
      args: ToolArgs;
      is_subagent: boolean;
      parent_call_id?: string;
    }
  | {
      type: 'tool_confirm_request';
      call_id: string;
      tool: string;
      args: ToolArgs;
      parent_call_id?: string;
    }
  | {
      type: 'tool_call';
      call_id: string;
      tool: string;
      args: ToolArgs;
      result: string;
      success: boolean;
      /** How the call ended, in more detail than `success` (Navi always sends it). */
      outcome?: ToolOutcome;
      is_subagent: boolean;
      parent_call_id?: string;
      metadata?: Record<string, unknown>;
    }
  /**
   * An MCP server asks the person for input in the middle of a tool call (`elicitation/create`,
   * docs/mcp.md#elicitation): `form` is the server's requested schema as a navi-ui form (its
   * defaults, enums and formats), rendered by the same form component. The person answers with
   * an `elicitation_answer` command; `elicitation_resolved` follows in every case. A run nobody
   * can answer for never sends it: the request is declined with a reason.
   */
  | {
      type: 'elicitation_request';
      elicitation_id: string;
      /** The tool call during which the server asked. */
      call_id: string;
      /** The MCP server's name as configured. */
      server: string;
      message: string;
      form: FormPayload;
    }
  /** How an elicitation ended: the person's answer, or why it was declined or cancelled without one. */
  | {
      type: 'elicitation_resolved';
      elicitation_id: string;
      action: ElicitationAction;
      /** Set when the person did not choose the action (timeout, the run stopped, the call ended). */
      reason?: string;
    }
  | { type: 'stream_delta'; delta: string }
  /**
   * `message_id`: the id of the stored final answer, present when the run stored one (an empty
   * answer is not stored). `usage`: the tokens the run's LLM calls used (see `RunUsage`).
   */
  | {
      type: 'stream_end';
      content: string;
      context_tokens: number;
      max_context_tokens: number;
      message_id?: string;
      usage?: RunUsage;
    }
  /**
   * `context_tokens` / `max_context_tokens`: the session's context as it stands after the stop,
   * the same figures `GET /sessions/{id}` then reports (Navi always sends them). `message_id`: the
   * id of the partial answer the stop saved, present when it saved one.
   */
  | {
      type: 'stream_stopped';
      content: string;
      context_tokens?: number;
      max_context_tokens?: number;
      message_id?: string;
      usage?: RunUsage;
    }
  /**
   * A `regenerate` or `edit` run removed the message `from_message_id` and every message after it
   * from both buffers (their ids in `removed_ids`, oldest first). Sent right after `stream_start`;
   * a client drops those messages from its view, and the run's events add what replaces them.
   */
  | { type: 'history_rewound'; from_message_id: string; removed_ids: string[] }
  /**
   * `context_tokens`: an estimate (four characters a token) of what the context holds after the
   * compression, the figure the session then stores, until the next LLM call reports the real one
   * (Navi always sends it).
   */
  | { type: 'context_compressed'; messages_before: number; messages_after: number; context_tokens?: number }
  | { type: 'profile_switched'; profile_id: string; profile_name: string }
  /**
   * Something the person should know about how the run is being done, which does not stop it
   * (see `NoticeCode`). Sent at most once per code per run.
   */
  | { type: 'notice'; code: NoticeCode; message: string }
  /**
   * The answer just finished claims actions ("I have saved the file") that no tool call of its
   * turn performed. `claims` quotes them; the answer is stored with `unverified_claims`.
   */
  | { type: 'claim_unverified'; claims: string[]; message: string }
  /**
   * `code` comes from the table in `error-codes.ts` (e.g. `CONSENT_REQUIRED`,
   * `LLM_UNREACHABLE`): clients act on it, people read `message`. Navi always sends it.
   */
  | { type: 'error'; message: string; recoverable: boolean; code?: ErrorCode };

/**
 * - `TOOLS_UNSUPPORTED`: the model cannot call tools, so none were offered.
 * - `TOOLS_TRIMMED`: the profile's tools did not fit the model's tool budget; the most relevant
 *   were offered (`list_tools` and `tool_manual` always are, as the route to the rest).
 * - `CONTEXT_CLAMPED`: the configured context window is larger than the model supports.
 */
export type NoticeCode = 'TOOLS_UNSUPPORTED' | 'TOOLS_TRIMMED' | 'CONTEXT_CLAMPED';

/**
 * How a tool call ended:
 * - `ok`: it ran and succeeded; `failed`: it ran (or was called with bad arguments) and failed;
 * - `denied`: the person answered its confirmation with no;
 * - `confirmation_timeout`: nobody answered its confirmation in time (or the run had no one to ask);
 * - `refused`: the profile's policy does not allow the tool (or it does not exist);
 * - `timed_out`: it ran longer than its time limit and was stopped;
 * - `stopped`: the person stopped the run before or while it ran.
 */
export const TOOL_OUTCOMES = [
  'ok',
  'failed',
  'denied',
  'confirmation_timeout',
  'refused',
  'timed_out',
  'stopped',
] as const;

export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** What the person did with a server's request for input; the MCP result's `action`. */
export const ELICITATION_ACTIONS = ['accept', 'decline', 'cancel'] as const;
export type ElicitationAction = (typeof ELICITATION_ACTIONS)[number];

/**
 * The `tool` of a `tool_confirm_request` that asks the person to let an MCP server use Navi's
 * model (`sampling/createMessage`, docs/mcp.md#sampling). Its `args` are `SamplingConfirmArgs`;
 * the answer is an ordinary `tool_confirm`.
 */
export const MCP_SAMPLING_TOOL = 'mcp_sampling';

/** What the person is shown before an MCP server may use Navi's model. */
export interface SamplingConfirmArgs {
  server: string;
  /**
   * The backend that would answer: its id (`ollama`, `openai`, `llamacpp`), its description (where
   * it lives), and `location`, when Navi can tell: `local` (this machine) or `remote` (the prompt
   * leaves the machine).
   */
  backend: { id: string; description: string; location?: 'local' | 'remote' };
  /** The model that would answer. */
  model: string;
  /** The server's system prompt, when it sent one. */
  system_prompt?: string;
  /** The conversation the server wants answered; non-text parts are named (`[image]`). */
  messages: { role: 'user' | 'assistant'; text: string }[];
  max_tokens: number;
  temperature?: number;
  /** The server's model hints, by name, in its order of preference. */
  model_hints?: string[];
}

export type AgentEventType = AgentEvent['type'];

/** An event as sent to clients: events of a run carry `run_id` and `seq`. */
export type ServerEvent = AgentEvent & { run_id?: string; seq?: number };

/** The event of a given type, e.g. `EventOf<'tool_call'>`. */
export type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/**
 * Events that may follow a run's terminal event: the post-turn workers run after `stream_end`
 * (docs/architecture.md#the-end-of-a-run), so a compression they trigger is reported then. They carry the run's `run_id`
 * and the next `seq`, and go to every client watching the session.
 */
export function isAfterRunEvent(event: AgentEvent): boolean {
  return event.type === 'context_compressed';
}

/** True for the events that end a run: exactly one of them closes every run. */
export function isTerminalEvent(event: AgentEvent): boolean {
  return (
    event.type === 'stream_end' ||
    event.type === 'stream_stopped' ||
    (event.type === 'error' && !event.recoverable)
  );
}
