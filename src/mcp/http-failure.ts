/**
 * The real reason an HTTP MCP server failed. The SDK's transport turns a refused request into
 * "connection closed" or a bare status; a `fetch` wrapped here remembers the last failed
 * answer of the MCP endpoint itself (status, a short body summary, what WWW-Authenticate
 * asked for) or the network error under it (ECONNREFUSED, ENOTFOUND…), so `last_error` can say
 * `HTTP 401 Unauthorized: {"error":"invalid_token"…}`. Nothing credential-like is kept: no
 * request header is read, and token-like text in a body is replaced before it is stored.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export interface HttpFailure {
  /** Absent for a request that got no answer at all. */
  status?: number;
  statusText?: string;
  /** At most SUMMARY_CHARS characters of the body, whitespace collapsed, credentials removed. */
  body?: string;
  /** The network error's code (ECONNREFUSED, ENOTFOUND, …) or message, when there was no answer. */
  network?: string;
  /** What the server's WWW-Authenticate named. */
  challenge?: { error?: string; scope?: string; resourceMetadata?: string };
}

const SUMMARY_CHARS = 300;
const CHALLENGE_CHARS = 2048;
/** Read at most this much of a failed answer's body: enough for the summary, never a whole page. */
const BODY_READ_BYTES = 4096;

// A summary is shown in the status, the log and the page: token-like values never are.
const CREDENTIAL_PATTERNS: [RegExp, string][] = [
  [/(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [hidden]'],
  [
    /("?(?:access_token|refresh_token|id_token|client_secret|code|code_verifier|token)"?\s*[:=]\s*"?)[^"\s,&}]+/gi,
    '$1[hidden]',
  ],
  // A JWT (most access tokens) quoted bare, as in "token eyJhbGci… has expired".
  [/\beyJ[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*){1,2}/g, '[hidden]'],
];

/** `text` with whitespace collapsed, credentials hidden, cut to SUMMARY_CHARS. */
export function summariseBody(text: string): string {
  let out = text.replace(/\s+/g, ' ').trim();
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) out = out.replace(pattern, replacement);
  return out.length > SUMMARY_CHARS ? `${out.slice(0, SUMMARY_CHARS)}…` : out;
}

/** One line for `last_error`: `HTTP 401 Unauthorized: <body>` or `could not reach <url>: <code>`. */
export function describeFailure(failure: HttpFailure, url: string): string {
  if (failure.status === undefined) return `could not reach ${url}: ${failure.network ?? 'no answer'}`;
  const head = `HTTP ${failure.status}${failure.statusText ? ` ${failure.statusText}` : ''}`;
  return failure.body ? `${head}: ${failure.body}` : head;
}

/** Whether the failure asks for (new) authorisation: 401, or 403 for a scope not granted. */
export function isAuthFailure(failure: HttpFailure | undefined): boolean {
  if (!failure) return false;
  return (
    failure.status === 401 || (failure.status === 403 && failure.challenge?.error === 'insufficient_scope')
  );
}

function challengeOf(header: string | null): HttpFailure['challenge'] {
  if (!header || !/^bearer\s/i.test(header)) return undefined;
  // The auth-params, read in order: a quoted value is consumed whole, so `scope=` inside a
  // quoted resource_metadata URL is no scope, and `xscope=` is no scope either. A challenge is
  // short: only its first CHALLENGE_CHARS are read.
  const params = new Map<string, string>();
  for (const m of header
    .slice(7, CHALLENGE_CHARS)
    .matchAll(/([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))/g)) {
    const name = (m[1] as string).toLowerCase();
    if (!params.has(name)) params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? ''));
  }
  const value = (name: string) => params.get(name);
  const error = value('error');
  const scope = value('scope');
  const resourceMetadata = value('resource_metadata');
  return {
    ...(error !== undefined && { error }),
    ...(scope !== undefined && { scope }),
    ...(resourceMetadata !== undefined && { resourceMetadata }),
  };
}

async function readSome(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < BODY_READ_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).toString('utf8').slice(0, BODY_READ_BYTES);
}

function networkReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message;
  }
  return err.message;
}

/**
 * Whether a request's URL is the MCP endpoint itself (same origin and path; query aside), as
 * opposed to the discovery and token requests the transport makes beside it.
 */
export function endpointMatcher(endpoint: string): (url: string | URL) => boolean {
  const target = new URL(endpoint);
  return (url) => {
    try {
      const u = new URL(url);
      return u.origin === target.origin && u.pathname === target.pathname;
    } catch {
      return false;
    }
  };
}

/**
 * Wraps `base` so each request to `endpoint` (the MCP URL; discovery and token requests are
 * not its business) reports its outcome: the failure, or undefined after a success. An
 * aborted request reports nothing.
 */
export function failureWatchingFetch(
  base: FetchLike,
  endpoint: string,
  report: (failure: HttpFailure | undefined) => void,
): FetchLike {
  const concerns = endpointMatcher(endpoint);
  return async (url, init) => {
    if (!concerns(url)) return base(url, init);
    let response: Response;
    try {
      response = await base(url, init);
    } catch (err) {
      if (!init?.signal?.aborted) report({ network: networkReason(err) });
      throw err;
    }
    if (response.ok) {
      report(undefined);
      return response;
    }
    // A server without a GET stream (or session deletion) answers 405: that is no failure.
    if (response.status === 405 && (init?.method ?? 'GET') !== 'POST') return response;
    // The transport reads the body too: it gets the original, the summary comes from a copy.
    const copy = response.clone();
    const challenge = challengeOf(response.headers.get('www-authenticate'));
    const body = summariseBody(await readSome(copy).catch(() => ''));
    report({
      status: response.status,
      ...(response.statusText && { statusText: response.statusText }),
      ...(body && { body }),
      ...(challenge && { challenge }),
    });
    return response;
  };
}
