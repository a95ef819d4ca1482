/** The scripting and recording vocabulary of the fake LLM server. */

export type WireFormat = 'ollama' | 'openai';

/** What the fake does for one chat request. */
export interface ReplyScript {
  thinking?: string;
  text?: string;
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[];
  /** Characters per streamed delta (default 8; 1 = one character per chunk). */
  chunkSize?: number;
  /** Pause between chunks. */
  delayMs?: number;
  /** Reported token usage; by default estimated from the request and the reply (4 characters a token). */
  usage?: { prompt: number; completion: number };
  /** Answer with this HTTP status and body instead of a completion. */
  httpError?: { status: number; body: string };
  /** Destroy the socket after this many chunks: a stream cut half-way. */
  cutAfterChunks?: number;
  /** Send this many chunks, then nothing more, keeping the connection open (an idle stream). */
  stallAfterChunks?: number;
  /** Accept the request and never answer, until the client goes away. */
  hang?: boolean;
  /** Send a line of invalid JSON in the middle of the stream. */
  malformed?: boolean;
  /** Finish reason to report (default stop, or tool_calls when there are tool calls on OpenAI). */
  finishReason?: 'stop' | 'length';
  /** OpenAI delta field carrying reasoning (default reasoning_content). */
  reasoningField?: 'reasoning_content' | 'reasoning';
}

export type ScriptedReply = ReplyScript | ((request: RecordedRequest) => ReplyScript);

export interface RecordedMessage {
  role: string;
  /** A string, or OpenAI content parts (`{type:'text'|'image_url', …}`). */
  content?: unknown;
  images?: string[];
  tool_calls?: unknown[];
  tool_call_id?: string;
  tool_name?: string;
  [key: string]: unknown;
}

/** The parsed JSON body; fields of both formats, present as the client sent them. */
export interface RecordedBody {
  model?: string;
  messages?: RecordedMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  think?: boolean;
  options?: { num_ctx?: number; temperature?: number; num_predict?: number; [key: string]: unknown };
  temperature?: number;
  max_tokens?: number;
  input?: string | string[];
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  format: WireFormat;
  kind: 'chat' | 'embed' | 'models' | 'unknown';
  body: RecordedBody;
  headers: Record<string, string | undefined>;
  /** The client closed the connection before the answer was complete. */
  aborted: boolean;
}

export interface FakeLlmOptions {
  /** Models listed by /api/tags and /v1/models (default ['test-model']). */
  models?: string[];
  /** Length of the embedding vectors (default 64). */
  embeddingDimension?: number;
  /** When set, /v1 routes answer 401 unless `Authorization: Bearer <apiKey>` is sent. */
  apiKey?: string;
  /** Reply used when the queue is empty. */
  defaultReply?: ScriptedReply;
}

export interface FakeLlm {
  /** http://127.0.0.1:<port> — also the Ollama base URL. */
  readonly url: string;
  readonly ollamaUrl: string;
  /** url + '/v1', the OpenAI base URL. */
  readonly openaiUrl: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Queues replies for the next chat requests (either format), first in first out. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Reply for chat requests once the queue is empty; undefined restores the HTTP 500. */
  setDefault(reply: ScriptedReply | undefined): void;
  /** Makes the models (/api/tags, /v1/models) or embeddings routes answer an HTTP error. */
  setEndpointError(kind: 'models' | 'embed', error: { status: number; body: string } | undefined): void;
  /** Clears queue, default reply, endpoint errors and recorded requests. */
  reset(): void;
  close(): Promise<void>;
  /** Resolves once `n` requests have arrived (rejects after `timeoutMs`, default 10 s, naming what came). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once `n` requests have been aborted by their client. */
  waitForAborted(n: number, timeoutMs?: number): Promise<void>;
  /** Open TCP connections right now. */
  activeConnections(): number;
  /** How many requests the client aborted. */
  readonly abortedRequests: number;
}
