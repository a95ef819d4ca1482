/**
 * One HTTP exchange with an LLM server: the caller's abort signal, a limit on waiting for the
 * response headers and a limit on silence between body chunks all abort the same request, so
 * the server sees the connection close and stops generating. Failures come out as `LlmError`
 * (with an actionable message) or `CallerAbort` (the caller's own signal fired).
 */
import {
  cutFailure,
  httpFailure,
  malformedFailure,
  type ServerInfo,
  timeoutFailure,
  unreachableFailure,
} from './failures.js';
import { LlmError } from './types.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** The caller's signal fired; not a failure of the backend. */
export class CallerAbort extends Error {
  constructor() {
    super('aborted by the caller');
    this.name = 'CallerAbort';
  }
}

export interface HttpCall {
  fetch: FetchLike;
  server: ServerInfo;
  /** Model named in model-not-found and context messages. */
  model: string;
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** Longest wait for the response headers, and the setting that sets it. */
  headersTimeout: { ms: number; setting: string };
  /** Longest silence between body chunks, and the setting that sets it. */
  idleTimeout: { ms: number; setting: string };
}

export interface OpenResponse {
  status: number;
  /** The body, guarded by the idle timeout; leaving the iteration early closes the connection. */
  body: AsyncIterable<Uint8Array>;
  /** Reads the whole body as text (for small JSON answers). */
  text(): Promise<string>;
}

type Cause = 'caller' | 'headers' | 'idle';

const maxErrorBody = 64 * 1024;

/**
 * Sends the request and resolves once a 2xx status arrives. A non-2xx answer is read (up to
 * 64 KB) and rejected as the matching `LlmError`: auth, model_not_found, context_overflow or http.
 */
export async function openHttp(call: HttpCall): Promise<OpenResponse> {
  const controller = new AbortController();
  let cause: Cause | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let phase: 'headers' | 'body' = 'headers';

  const stop = (why: Cause) => {
    cause ??= why;
    controller.abort();
  };
  const onCallerAbort = () => stop('caller');
  const arm = (why: 'headers' | 'idle', ms: number) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => stop(why), ms);
  };
  const release = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    call.signal?.removeEventListener('abort', onCallerAbort);
  };

  const translate = (error: unknown): Error => {
    if (cause === 'caller' || (cause === undefined && call.signal?.aborted)) return new CallerAbort();
    if (cause === 'headers') {
      const t = call.headersTimeout;
      return new LlmError(timeoutFailure(call.server, 'did not answer', t.ms, t.setting));
    }
    if (cause === 'idle') {
      const t = call.idleTimeout;
      return new LlmError(timeoutFailure(call.server, 'sent nothing more', t.ms, t.setting));
    }
    if (error instanceof LlmError) return error;
    const code = errorCode(error);
    if (phase === 'body')
      return new LlmError(cutFailure(call.server, `the connection closed: ${code ?? describe(error)}`));
    return new LlmError(unreachableFailure(call.server, reasonFor(code, error)));
  };

  if (call.signal?.aborted) throw new CallerAbort();
  call.signal?.addEventListener('abort', onCallerAbort, { once: true });
  arm('headers', call.headersTimeout.ms);

  let response: Response;
  const headers: Record<string, string> = { accept: '*/*', ...call.headers };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const send = () =>
    call.fetch(`${call.server.baseUrl}${call.path}`, {
      method: call.method,
      headers,
      ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      signal: controller.signal,
    });
  try {
    try {
      response = await send();
    } catch (error) {
      // A kept-alive connection the server closed while idle fails at once with a reset, before
      // the server saw the request; one fresh attempt is safe and spares the user an error.
      if (cause !== undefined || !isStaleConnection(error)) throw error;
      response = await send();
    }
  } catch (error) {
    release();
    throw translate(error);
  }
  phase = 'body';
  if (timer) clearTimeout(timer);
  timer = undefined;

  async function* body(): AsyncGenerator<Uint8Array> {
    const stream = response.body;
    if (!stream) {
      release();
      return;
    }
    const reader = stream.getReader();
    let finished = false;
    // One timer for the whole body rather than one per chunk (a model streams hundreds a
    // second): it checks when it fires whether the server really stayed silent that long.
    // Only time spent waiting on the server counts; a consumer slow to take a chunk is not a
    // silent server. The monotonic clock: a wall clock stepped forward (NTP) is not silence.
    const idleMs = call.idleTimeout.ms;
    let waitingSince: number | undefined;
    const check = () => {
      timer = undefined;
      if (waitingSince === undefined) return; // the consumer holds a chunk; re-armed on the next read
      const silent = performance.now() - waitingSince;
      if (silent >= idleMs) stop('idle');
      else timer = setTimeout(check, idleMs - silent);
    };
    try {
      while (true) {
        waitingSince = performance.now();
        timer ??= setTimeout(check, idleMs);
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          throw translate(error);
        }
        waitingSince = undefined;
        if (next.done) {
          finished = true;
          return;
        }
        yield next.value;
      }
    } finally {
      release();
      // Leaving early (parse error, consumer gone) must close the connection, not leave the model running.
      if (!finished) controller.abort();
      reader.releaseLock();
    }
  }

  const text = async (limit = Number.POSITIVE_INFINITY): Promise<string> => {
    const decoder = new TextDecoder();
    let out = '';
    for await (const bytes of body()) {
      out += decoder.decode(bytes, { stream: true });
      if (out.length > limit) break;
    }
    return out + decoder.decode();
  };

  if (!response.ok) {
    let said = '';
    try {
      said = await text(maxErrorBody);
    } catch (error) {
      if (error instanceof CallerAbort) throw error;
      // The status alone still says enough.
    }
    throw new LlmError(httpFailure(call.server, call.model, response.status, said));
  }
  return { status: response.status, body: body(), text: () => text() };
}

/**
 * Limits for a generating call. Until the headers arrive the longer of the two settings applies:
 * servers such as Ollama answer only once the model is loaded, which can outlast a connect.
 */
export function generationLimits(
  connectMs: number,
  idleMs: number,
): Pick<HttpCall, 'headersTimeout' | 'idleTimeout'> {
  const idle = { ms: idleMs, setting: 'LLM_IDLE_TIMEOUT_MS' };
  return {
    headersTimeout: idleMs >= connectMs ? idle : { ms: connectMs, setting: 'LLM_CONNECT_TIMEOUT_MS' },
    idleTimeout: idle,
  };
}

/** Sends a request and parses its JSON answer; rejects with `LlmError` or `CallerAbort`. */
export async function readJson(call: HttpCall): Promise<unknown> {
  const response = await openHttp(call);
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new LlmError(malformedFailure(call.server, `${call.path} did not answer JSON`));
  }
}

/** For promise APIs: the caller's abort rejects with the signal's reason, as `fetch` does. */
export function rethrowAbort(signal: AbortSignal | undefined): (error: unknown) => never {
  return (error) => {
    if (error instanceof CallerAbort && signal) throw signal.reason;
    throw error;
  };
}

export function isVectorList(value: unknown, count: number): value is number[][] {
  return (
    Array.isArray(value) &&
    value.length === count &&
    value.every((v) => Array.isArray(v) && v.every((x) => typeof x === 'number'))
  );
}

/** The system error code (ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET…) somewhere in the cause chain. */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const c = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof c.code === 'string') return c.code;
    // happy-eyeballs failures arrive as an AggregateError of per-address errors.
    if (Array.isArray(c.errors) && c.errors.length > 0) current = c.errors[0];
    else current = c.cause;
  }
  return undefined;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const inner = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${inner}`;
  }
  return String(error);
}

function isStaleConnection(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

function reasonFor(code: string | undefined, error: unknown): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'host name not found';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to host';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed before an answer';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return `TLS certificate rejected: ${code}`;
    default:
      return code ? `${code}: ${describe(error)}` : describe(error);
  }
}
