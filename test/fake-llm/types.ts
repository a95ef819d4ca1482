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
  /**
   * Reported token usage; by default estimated from the request and the reply (4 characters a
   * token). `none`: no usage at all in the stream, as some servers send.
   */
  usage?: { prompt: number; completion: number } | 'none';
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
  kind: 'chat' | 'embed' | 'models' | 'show' | 'unknown';
  body: RecordedBody;
  headers: Record<string, string | undefined>;
  /** The client closed the connection before the answer was complete. */
  aborted: boolean;
  /**
   * `performance.now()` of this process when the request's head arrived, before its body was
   * read: a bench in the same process measures from its own send to here.
   */
  receivedAt: number;
}

/**
 * What the fake says about one model beyond its name: Ollama's `/api/show` answer (replacing the
 * default, which claims every capability the fake has and no context length) and extra fields
 * of its `/v1/models` entry (say `max_model_len`, or OpenRouter's `supported_parameters`).
 */
export interface FakeModelInfo {
  show?: Record<string, unknown>;
  openai?: Record<string, unknown>;
}

/** An endpoint made to misbehave: an HTTP answer of the test's choosing, or none at all. */
export type EndpointFault = { status: number; body: string } | { hang: true };

export interface FakeLlmOptions {
  /** Models listed by /api/tags and /v1/models, and known to /api/show (default ['test-model']). */
  models?: string[];
  /** Per model: its /api/show answer and /v1/models fields. */
  modelInfo?: Record<string, FakeModelInfo>;
  /**
   * Answer chat requests as strict chat templates do: HTTP 400 when two user or two assistant
   * messages follow each other, or a system message is not the first.
   */
  strictRoles?: boolean;
  /** Length of the embedding vectors (default 64). */
  embeddingDimension?: number;
  /** When set, /v1 routes answer 401 unless `Authorization: Bearer <apiKey>` is sent. */
  apiKey?: string;
  /** Reply used when the queue is empty. */
  defaultReply?: ScriptedReply;
  /**
   * Port to listen on (default: any free one). A test that points Navi at a server that is not
   * there yet starts the fake later on the port it named.
   */
  port?: number;
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
  /**
   * Makes the models (/api/tags, /v1/models), show (/api/show) or embeddings routes answer an
   * HTTP error, or never answer (`{hang: true}`); undefined restores them.
   */
  setEndpointError(kind: 'models' | 'show' | 'embed', error: EndpointFault | undefined): void;
  /** Sets (or with undefined, removes) what the fake says about `model`. */
  setModelInfo(model: string, info: FakeModelInfo | undefined): void;
  /** Clears queue, default reply, endpoint errors, model info set later and recorded requests. */
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
