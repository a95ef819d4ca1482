/** Shapes of the REST API (see docs/protocol.md) shared by the server, the tests and the web client. */
import type { AttachedFile } from './commands.js';
import type { ErrorCode } from './error-codes.js';
import type { RunTrigger, ToolArgs, ToolOutcome } from './events.js';
import type { LlmBackendId } from './llm.js';

export interface SessionSummary {
  id: string;
  profile_id: string;
  title: string;
  pinned: boolean;
  created_at: string;
  last_active: string;
  context_token_count: number;
  /**
   * The backend and model this session uses instead of its profile's (set with
   * `PATCH /sessions/{id}` `{model: {backend, model}}`, cleared with `{model: null}`).
   */
  model_override?: ModelChoice;
}

/** A backend and one of its models. */
export interface ModelChoice {
  backend: LlmBackendId;
  model: string;
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
 * - `error`: a run that failed (display only, role `system`): `error` holds what the `error` event
 *   said. What the run did before it failed stays before it (tool calls, a partial answer marked
 *   `interrupted`); `regenerate` retries it.
 * - `client_system`: a system message of an OpenAI client's own history (context only, role
 *   `system`), the one kind of stored system message the model reads. Only Navi sets it, when it
 *   adopts such a history: an imported session's is dropped, so a file cannot instruct the model.
 */
export const MESSAGE_KINDS = [
  'plan',
  'form_submit',
  'injected_image',
  'summary',
  'iteration_limit',
  'error',
  'client_system',
] as const;

export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** The failure a `kind: 'error'` message records. */
export interface TurnFailure {
  message: string;
  code?: ErrorCode;
}

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
  /** On a tool result: how the call ended (the `tool_call` event's `outcome`). */
  outcome?: ToolOutcome;
  /** On a `kind: 'error'` message: the failure of the run. */
  error?: TurnFailure;
  /**
   * On an answer: actions it claims ("I have saved the file") that no tool call of its turn
   * performed, as the claim check found them (the `claim_unverified` event).
   */
  unverified_claims?: string[];
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

/**
 * Paged history. `GET /sessions/{id}/messages?limit=&before=<message id>` answers one page of the
 * display buffer: the `limit` messages just older than `before` (the newest ones when `before` is
 * absent), oldest first within the page. `next_before` is the id to pass as `before` for the page
 * older still, or null when this page reaches the session's first message. An unknown `before`
 * is 404 MESSAGE_NOT_FOUND; a `limit` outside 1…MAX_PAGE_LIMIT is 400 INVALID_PAGE.
 */
export interface MessagePage {
  messages: SessionMessage[];
  next_before: string | null;
}

/** Messages in a page when the request names no `limit` (also the first page of `GET /sessions/{id}`). */
export const DEFAULT_PAGE_LIMIT = 100;
/** The most messages one page holds. */
export const MAX_PAGE_LIMIT = 1000;

/**
 * `GET /sessions/{id}?limit=`: the session and the newest page of its display buffer (`messages`,
 * oldest first, at most `limit`, default DEFAULT_PAGE_LIMIT), with `next_before` as in MessagePage.
 */
export interface SessionDetail extends SessionSummary, MessagePage {
  /** Context window of the session's backend (what `stream_end` reports); 0 when unknown. */
  max_context_tokens?: number;
}

export interface ProfileSummary {
  id: string;
  name: string;
  /** One or two sentences on what the profile is for (its file's `description`; may be empty). */
  description: string;
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
  /** Present when `GET /agents/tools?profile_id=` names a profile: what that profile's policy says. */
  policy?: ToolPolicyInfo;
}

/** What one profile's policy says about one tool. */
export interface ToolPolicyInfo {
  /** The profile offers the tool to its model. */
  allowed: boolean;
  /** Why not, when it is not allowed ("denied by group:runtime", "not in enabled_tools"). */
  reason?: string;
  /**
   * When a call asks the person first: `never`, `always`, or `per_call` (the tool decides from
   * each call's arguments: `gmail` asks before sending, not before reading).
   */
  confirm: 'never' | 'always' | 'per_call';
}

/**
 * `GET /agents/profiles/{id}`: a profile as its file holds it, for viewing and editing.
 * `PUT /agents/profiles/{id}` takes the same `profile` object back; it is validated (400
 * INVALID_PROFILE with what is wrong), written to the profiles folder and used from the next run.
 */
export interface ProfileDocument {
  id: string;
  /** The profile file's contents. */
  profile: Record<string, unknown>;
  /** The file's name in the profiles folder. */
  file: string;
}

/**
 * `GET /search?q=&limit=`: sessions and messages matching words, best first. A hit on a
 * session's title has `message_id: null`.
 */
export interface SearchHit {
  session_id: string;
  session_title: string;
  message_id: string | null;
  role: SessionMessage['role'] | null;
  /** A piece of the matching text, plain (never HTML). */
  snippet: string;
  /** Where the matched words are in `snippet`: `[start, end)` character offsets. */
  highlights: [number, number][];
  created_at: string;
}

export interface SearchResults {
  query: string;
  results: SearchHit[];
}

/**
 * `GET /sessions/{id}/export?format=json` (the Markdown export is `format=markdown`), and the body
 * `POST /sessions/import` takes back, which creates a new session from it (201, the same answer
 * as `POST /sessions`).
 */
export interface SessionExport {
  /** The export format's version. */
  navi_export: 1;
  exported_at: string;
  session: { title: string; profile_id: string; created_at: string; pinned: boolean };
  /** The display buffer, oldest first. */
  messages: SessionMessage[];
  /** The model's context (may hold a summary); absent, it is rebuilt from `messages`. */
  context?: SessionMessage[];
}

/** The answer of `POST /sessions/import`: that of `POST /sessions`, and what did not come along. */
export interface SessionImportResult {
  session_id: string;
  profile_id: string;
  created_at: string;
  /** Sentences for the person: a profile that is not here, files the export could not carry. */
  warnings: string[];
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

/** A fact of long-term memory (`GET /memory/facts`, `PATCH /memory/facts/{id}`). */
export interface MemoryFactRecord {
  id: number;
  /** Lower case, `[a-z0-9_]` and other letters or digits, at most 40 characters. */
  category: string;
  /** Like `category`, at most 80 characters; unique within its category. */
  key: string;
  value: string;
  /** The session the fact was learnt in, when known. */
  source_session_id: string | null;
  created_at: string;
  updated_at: string;
}

/** `GET /memory/facts?offset=&limit=&category=`: most recently updated first. */
export interface MemoryFactPage {
  facts: MemoryFactRecord[];
  /** Facts matching the filter, across all pages. */
  total: number;
  offset: number;
  limit: number;
}

/** `GET /memory/summary`: the narrative summary of the facts. */
export interface MemorySummaryView {
  text: string;
  updated_at: string | null;
  /** Facts changed after the summary was written. */
  stale: boolean;
}

/** `GET /memory/search?q=&limit=`: facts by words and (with embeddings) by meaning, best first. */
export interface MemorySearchResults {
  hits: { fact: MemoryFactRecord; score: number; fts_rank: number | null; vector_rank: number | null }[];
  /** `hybrid` when vectors took part, `fts` otherwise. */
  mode: 'hybrid' | 'fts';
}

/** `GET /agents/tools/errors`: a tool file, context provider or MCP server that failed to load. */
export interface ToolLoadErrorInfo {
  /** The file (user tools, context providers) or the MCP server. */
  origin: string;
  source: ToolSummary['source'] | 'context_provider';
  error: string;
}

/** Where an MCP server stands. */
export type McpServerState =
  /** `enabled: false` in its config. */
  | 'disabled'
  /** Written by the agent: never started until the person approves its `command`. */
  | 'awaiting_approval'
  | 'connecting'
  | 'ready'
  /** Exited, failed to start or stopped answering; a restart is scheduled. */
  | 'down'
  /**
   * An HTTP server that answered 401 (or 403 for a scope it was not granted): it waits, without
   * restarts, until the person authorises Navi ("Connect", `navi mcp login`).
   */
  | 'needs_auth'
  | 'stopped';

/** One MCP server as `GET /agents/mcp` shows it (the MCP manager's own status). */
export interface McpServerInfo {
  name: string;
  /** Sanitised name used in tool names: `mcp__<key>__<tool>`. */
  key: string;
  /** Its config file. */
  file: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** The exact launch line (stdio) or URL (http); an approval must send it back unchanged. */
  command: string;
  /** Registered tool names (`mcp__<key>__<tool>`). */
  tools: string[];
  tool_count: number;
  last_error: string | null;
  /** Milliseconds since the current connection became ready; null when not ready. */
  uptime_ms: number | null;
  restarts: number;
  /** Milliseconds until the next restart attempt, when down. */
  restart_in_ms: number | null;
  pid: number | null;
  created_by: 'agent' | 'user';
  /** Shipped with Navi; a user's config of the same name replaces it. */
  shipped: boolean;
  /** OAuth of an HTTP server (docs/mcp.md#oauth); null for stdio and servers that never asked. */
  auth: McpAuthInfo | null;
  /** The server's resources (first pages, at most `MCP_LIST_LIMIT`); empty when it has none. */
  resources: McpResourceInfo[];
  resource_count: number;
  /** The server's prompts (at most `MCP_LIST_LIMIT`). */
  prompts: McpPromptInfo[];
  prompt_count: number;
}

/** How many resources or prompts of one server a status lists. */
export const MCP_LIST_LIMIT = 200;

export interface McpAuthInfo {
  /**
   * - `needs_authorization`: no usable token; the person must authorise (Connect);
   * - `pending`: an authorisation page was opened and Navi waits for its callback;
   * - `authorized`: Navi holds a token (stored encrypted in the vault).
   */
  status: 'needs_authorization' | 'pending' | 'authorized';
  /** The scopes granted, or asked for while pending; null when the server named none. */
  scope: string | null;
  /** When the access token expires (ISO time), when the server said. */
  expires_at: string | null;
}

export interface McpResourceInfo {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mime_type?: string;
}

export interface McpPromptInfo {
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/**
 * `POST /agents/mcp/servers/:name/authorize` `{redirect_base?}`: the page where the person
 * authorises Navi. `redirect_base` is the origin the person reaches Navi at (the web client
 * sends its own); the authorisation server sends the browser back to
 * `<redirect_base>/agents/mcp/oauth/callback`.
 */
export interface McpAuthorizeView {
  authorization_url: string;
}

/** `GET /agents/mcp`: every configured server, and config files that were skipped with why. */
export interface McpStatusView {
  servers: McpServerInfo[];
  errors: { file: string; error: string }[];
}

/**
 * `GET /internal/metrics` (behind the token): how the server process is doing, for the bench,
 * the soak run and anyone watching a long-running Navi. `?reset=1` also restarts the event-loop
 * delay histogram, so the next reading covers only the time since.
 */
export interface ServerMetrics {
  uptime_s: number;
  rss_bytes: number;
  heap_used_bytes: number;
  heap_total_bytes: number;
  external_bytes: number;
  /** Open file descriptors of the process (null where the system does not tell). */
  open_fds: number | null;
  /** CPU time the process used since it started. */
  cpu_user_ms: number;
  cpu_system_ms: number;
  /** Event-loop delay since start or the last reset, in milliseconds. */
  event_loop_delay_ms: { p50: number; p99: number; max: number; mean: number };
  /** Runs in progress and WebSocket connections open right now. */
  active_runs: number;
  websockets: number;
}
