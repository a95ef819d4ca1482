/**
 * The OpenAI-compatible API (`GET /v1/models`, `POST /v1/chat/completions`) as its clients see
 * it: the subset of OpenAI's Chat Completions wire format Navi reads and writes, in one place
 * for the server, the tests and anyone scripting against Navi (docs/openai-api.md).
 *
 * Each agent profile is a model named `navi:<profile id>`. Fields a stock client sends that Navi
 * has no use for (`temperature`, `tools`, `n`…) are accepted and ignored, so no client breaks on
 * them; docs/openai-api.md lists which.
 */

/** The prefix that turns a profile id into a model name. */
export const NAVI_MODEL_PREFIX = 'navi:';

/** The response header naming the Navi session a request ran in. */
export const SESSION_HEADER = 'x-navi-session-id';

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } };

export interface ChatRequestMessage {
  role: ChatRole;
  /** A string, parts (text and `data:` images), or null for an assistant message of tool calls. */
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: unknown[];
  tool_call_id?: string;
}

export interface ChatCompletionRequest {
  /** `navi:<profile id>`. */
  model: string;
  messages: ChatRequestMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  /**
   * A conversation key: requests with the same `user` (and no `metadata.session_id`) continue
   * one Navi session.
   */
  user?: string;
  /** `session_id`: the Navi session (or conversation key) to continue; wins over `user`. */
  metadata?: Record<string, string> | null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type FinishReason = 'stop' | 'length';

/** A non-streaming answer. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: 0;
    message: { role: 'assistant'; content: string; reasoning_content?: string };
    finish_reason: FinishReason;
  }[];
  usage: Usage;
}

/** One SSE `data:` line of a streaming answer; the stream ends with `data: [DONE]`. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** Empty in the last chunk, which carries `usage` when `stream_options.include_usage` asked for it. */
  choices: {
    index: 0;
    delta: { role?: 'assistant'; content?: string; reasoning_content?: string };
    finish_reason: FinishReason | null;
  }[];
  usage?: Usage | null;
}

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: 'navi';
  /** The profile's display name, for clients that show one. */
  name?: string;
}

export interface ModelList {
  object: 'list';
  data: ModelEntry[];
}

/** OpenAI's error classes, by HTTP status. */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'server_error';

/** Every error of `/v1/*`, and an `error` line inside a stream that already began. */
export interface OpenAiErrorBody {
  error: {
    message: string;
    type: OpenAiErrorType;
    /** Navi's stable error code, lower-cased (`model_not_found`, `run_active`…). */
    code: string;
    param: string | null;
  };
}
