/** Shapes of the REST API (see docs/protocol.md) shared by the server, the tests and the web client. */
import type { AttachedFile } from './commands.js';
import type { RunTrigger, ToolArgs } from './events.js';

export interface SessionSummary {
  id: string;
  profile_id: string;
  title: string;
  pinned: boolean;
  created_at: string;
  last_active: string;
  context_token_count: number;
}

export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: ToolArgs;
}

/**
 * What a message is, beyond its role. Absent on ordinary messages (the user's own words, an
 * answer, a tool call or result).
 * - `plan`: the numbered plan of the planning phase (assistant).
 * - `form_submit`: the values of a submitted form (user; see `form_submit`).
 * - `injected_image`: images a tool loaded, handed to the model as a user message (context only).
 * - `summary`: the summary that replaced older context (context only; `content` is the summary).
 * - `iteration_limit`: the answer written when a run reached its profile's step limit.
 */
export type MessageKind = 'plan' | 'form_submit' | 'injected_image' | 'summary' | 'iteration_limit';

/** A UI component a tool asked the client to render (`{component, payload}`). */
export interface UiComponent {
  component: string;
  payload: Record<string, unknown>;
}

/** A session file a tool published for inline viewing (`model`: an STL shown in the 3D viewer). */
export interface PublishedContent {
  name: string;
  url: string;
  kind: 'image' | 'markdown' | 'html' | 'text' | 'pdf' | 'model';
  mime_type: string;
  title: string;
}

/** A submitted form: its id and the values the person entered. */
export interface FormSubmission {
  form_id: string;
  values: Record<string, unknown>;
}

/**
 * A message as stored and as shown to clients. Every field past `created_at` is optional and
 * present only when it applies; what the model reads is derived from them in one place (the
 * agent's context view), never stored as text markers in `content`.
 */
export interface SessionMessage {
  id: string;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string | null;
  created_at: string;
  kind?: MessageKind;
  /** Base64 images, without a data: prefix. */
  images?: string[];
  /** Files of this session attached to a user message (the model is told their paths). */
  attachments?: AttachedFile[];
  /** How the run of this user message started, when not by the user's own message. */
  trigger?: Exclude<RunTrigger, 'user'>;
  /** On the prompt of a recall-started run: which recall, when it was due, how late it ran. */
  recall?: RecallStamp;
  /** The submitted form of a `form_submit` message. */
  form_submit?: FormSubmission;
  tool_calls?: ToolCallRecord[];
  tool_call_id?: string;
  /** The tool's name, on a tool result. */
  name?: string;
  /** Reasoning of an assistant turn, kept for display. */
  thinking?: string;
  /** An answer saved before its run finished (the run failed or was stopped, or Navi stopped). */
  interrupted?: true;
  /** The person stopped the run of this (interrupted) answer. */
  stopped?: true;
  /** On a tool result: whether the call succeeded. */
  success?: boolean;
  /** On a tool result: the component the tool asked to render. */
  ui_component?: UiComponent;
  /** On a tool result: content the tool published. */
  published?: PublishedContent;
  /**
   * On a tool result: the rest of what the tool reported beside its output (exit code,
   * sandboxing, why it was refused…), as the `tool_call` event's `metadata` carried it.
   */
  tool_metadata?: Record<string, unknown>;
}

export interface SessionDetail extends SessionSummary {
  messages: SessionMessage[];
  /** Context window of the session's backend (what `stream_end` reports); 0 when unknown. */
  max_context_tokens?: number;
}

export interface ProfileSummary {
  id: string;
  name: string;
  model: string | null;
  llm_backend: string | null;
  temperature: number;
  max_iterations: number;
  planning_enabled: boolean;
  enabled_tools: string[];
  scratchpad_sections: string[];
}

export interface ToolSummary {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  source: 'builtin' | 'user' | 'mcp';
  server?: string;
}

/**
 * A file a tool saved among the session's files, as its result's metadata names it:
 * `shared_file` (share_file) or `shared_files` (the images and files an MCP tool returned).
 */
export interface SessionFile {
  name: string;
  /** `/sessions/<id>/files/<name>`. */
  url: string;
  size: number;
  mime_type: string;
}

export interface UploadedFile {
  name: string;
  path: string;
  size: number;
  expires_at: string;
}

export interface MessageReply {
  content: string;
  stopped: boolean;
  tool_calls: { call_id: string; tool: string; args: ToolArgs; result: string; success: boolean }[];
}

export interface ErrorBody {
  error: string;
  code?: string;
}

/** `GET /auth/status`: what this client may do. */
export interface AuthStatus {
  /** NAVI_API_TOKEN is set: every API call needs it (header or the cookie of POST /auth/login). */
  token_required: boolean;
  /**
   * This client holds the person's consent credential (the token or a paired-browser cookie),
   * so it may answer tool confirmations and approve MCP servers.
   */
  consent: boolean;
}

/** `POST /auth/pair` body: a code from `navi pair` (or printed by `navi serve`). */
export interface PairRequest {
  code: string;
}

/** `POST /auth/pair` answer; the `navi_consent` cookie comes with it. */
export interface PairReply {
  ok: true;
  consent: true;
}

/** What a recall-started user message records of the recall that fired it. */
export interface RecallStamp {
  recall_id: string;
  /** When the occurrence that fired was due (ISO). */
  scheduled_for: string;
  /** How long after `scheduled_for` it started, when that was more than a few seconds. */
  late_ms?: number;
}

/** How a recall is timed. Times are ISO 8601 in UTC; `timezone` is IANA (e.g. Europe/Berlin). */
export type RecallSchedule =
  | { kind: 'once'; at: string; timezone?: string }
  | { kind: 'recurring'; cron: string; timezone: string }
  | { kind: 'recurring'; every_ms: number }
  | { kind: 'immediate' };

export type RecallStatus = 'active' | 'done' | 'cancelled';

/** How a recall's last run ended. */
export interface RecallOutcome {
  status: 'completed' | 'failed' | 'stopped' | 'not_run';
  /** The error, or why it did not run. */
  message?: string;
}

/**
 * A recall as listed by `GET /sessions/{id}/recalls` and changed by cancel and skip: a prompt
 * that runs later, headless, in its session.
 */
export interface RecallSummary {
  id: string;
  session_id: string;
  prompt: string;
  schedule: RecallSchedule;
  /** The schedule in plain words ("every day at 09:00, Europe/Berlin"). */
  description: string;
  status: RecallStatus;
  /** The next time it fires (ISO), or null once it no longer will. */
  next_run_at: string | null;
  last_run_at: string | null;
  last_outcome: RecallOutcome | null;
  run_count: number;
  /**
   * Recalls scheduled by recall runs form a chain: 1 for one scheduled in a person's run, one
   * more for each recall run in between. RECALL_MAX_CHAIN bounds it.
   */
  chain: number;
  created_at: string;
}

/** `GET /sessions/{id}/recalls`: active recalls first (soonest first), then finished ones. */
export interface RecallList {
  recalls: RecallSummary[];
}
