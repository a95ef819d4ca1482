/**
 * `http_request`: one HTTP exchange with any public URL (APIs, webhooks, raw files), made by the
 * SSRF-guarded client so that a model cannot aim it at the machine or its network. The answer
 * shows the status, the redirects followed, the headers and the body — text decoded by its
 * charset, binary as base64 — all of it marked as untrusted web content.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
/** Maps a host name to addresses; tests point names at local servers here. */
import {
  type GuardedResponse,
  guardedRequest,
  RequestRefusedError,
  RequestTimeoutError,
  type ResolverFn,
} from '../../machine/net/guarded-request.js';
import { type ShippedTool, toolError } from '../common/tool.js';
import { untrusted } from '../common/untrusted.js';
import { charsetOf, isHtmlType, isTextType, mediaType } from './media-type.js';

export type { ResolverFn };

export interface HttpRequestDeps {
  settings: Pick<Settings, 'HTTP_ALLOW_PRIVATE' | 'WEB_MAX_RESPONSE_BYTES'>;
  resolve?: ResolverFn;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const MAX_REQUEST_BODY_BYTES = 1_000_000;
const MAX_HEADERS = 100;
const MAX_HEADER_BYTES = 32_768;
/** Larger JSON stays as sent: re-indenting it would only add characters the model must read. */
const PRETTY_JSON_MAX_BYTES = 65_536;

/**
 * Headers that describe the connection or the framing of the body: the client sets them from
 * the URL and the body, and a value from the model would desynchronise the exchange.
 */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const inputSchema = {
  method: z.enum(METHODS).default('GET').describe('HTTP method (default GET).'),
  url: z.string().max(8192).describe('Full http:// or https:// URL.'),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Request headers, e.g. {"Authorization": "Bearer …", "Content-Type": "application/json"}. Host, Content-Length, Transfer-Encoding and Connection are set by the client and cannot be given.',
    ),
  body: z
    .string()
    .optional()
    .describe(
      `Request body as text, at most ${MAX_REQUEST_BODY_BYTES} bytes. Without a Content-Type header, a body that is valid JSON is sent as application/json, anything else as text/plain.`,
    ),
  timeout_ms: z
    .number()
    .int()
    .min(1000)
    .max(120_000)
    .default(30_000)
    .describe(
      'Limit on the whole exchange, redirects included, in milliseconds (1000–120000, default 30000).',
    ),
};

type Args = z.infer<z.ZodObject<typeof inputSchema>>;

/** Why the request headers cannot be sent, or undefined when they can. */
function headerProblem(headers: Record<string, string>): string | undefined {
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS)
    return `${entries.length} headers given; at most ${MAX_HEADERS} are sent.`;
  let size = 0;
  for (const [name, value] of entries) {
    if (!TOKEN.test(name))
      return `The header name ${JSON.stringify(name)} is not valid: use letters, digits and - only.`;
    if (FORBIDDEN_HEADERS.has(name.toLowerCase()))
      return `The ${name} header cannot be set: the HTTP client sets it itself from the URL and the body. Leave it out.`;
    if (/[\r\n\0]/.test(value))
      return `The value of the ${name} header contains a line break or NUL character; headers are one line of text.`;
    size += name.length + value.length;
  }
  if (size > MAX_HEADER_BYTES)
    return `The headers are ${size} bytes long; at most ${MAX_HEADER_BYTES} bytes of headers are sent.`;
  return undefined;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((h) => h.toLowerCase() === name);
}

function guessContentType(body: string): string {
  try {
    JSON.parse(body);
    return 'application/json';
  } catch {
    return 'text/plain; charset=utf-8';
  }
}

const isJsonType = (type: string) => type === 'application/json' || type.endsWith('+json');

/** An answer without a Content-Type is text when its start is valid UTF-8 without NUL bytes. */
function looksLikeText(body: Buffer): boolean {
  const head = body.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

interface DecodedBody {
  label: string;
  text: string;
  notes: string[];
}

function decodeBody(response: GuardedResponse): DecodedBody {
  const { body } = response;
  const { type, charset } = mediaType(response.headers['content-type']);
  const shownType = type || 'no Content-Type';
  const notes: string[] = [];
  if (!(type ? isTextType(type) : looksLikeText(body))) {
    return { label: `${shownType}, ${body.length} bytes, base64`, text: body.toString('base64'), notes };
  }
  let encoding = charsetOf(body, charset, isHtmlType(type));
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding);
  } catch {
    notes.push(`The charset "${encoding}" is unknown; the body was decoded as UTF-8.`);
    encoding = 'utf-8';
    decoder = new TextDecoder(encoding);
  }
  // Streaming mode drops a character cut in half by the size limit instead of garbling it.
  let text = decoder.decode(body, { stream: response.truncated });
  if (isJsonType(type) && !response.truncated && body.length <= PRETTY_JSON_MAX_BYTES) {
    try {
      text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not valid JSON after all: shown as sent.
    }
  }
  return { label: `${shownType}, ${body.length} bytes, ${decoder.encoding}`, text, notes };
}

function formatHeaders(headers: IncomingHttpHeaders): string[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`),
  );
}

function truncationNote(response: GuardedResponse, limit: number): string {
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  const left =
    Number.isFinite(declared) && declared > response.body.length
      ? `${declared - response.body.length} more bytes (of ${declared})`
      : 'the rest';
  return `The body was cut at ${limit} bytes (WEB_MAX_RESPONSE_BYTES): ${left} left out. Ask for a smaller resource (a range, a page, a filter) to see it.`;
}

function formatResponse(method: string, url: string, response: GuardedResponse, limit: number): string {
  const summary = `${method} ${url} → HTTP ${response.status}${
    response.redirects.length > 0 ? ` after ${response.redirects.length} redirect(s)` : ''
  }`;
  const inner = [`Status: ${response.status} ${response.statusText}`.trimEnd()];
  if (response.redirects.length > 0) {
    inner.push('Redirects followed (each hop checked):');
    for (const hop of response.redirects) inner.push(`  ${hop}`);
    inner.push(`Final URL: ${response.finalUrl}`);
  }
  inner.push('', 'Headers:', ...formatHeaders(response.headers).map((h) => `  ${h}`), '');
  const notes: string[] = [];
  if (method === 'HEAD' || response.body.length === 0) inner.push('Body: empty');
  else {
    const decoded = decodeBody(response);
    inner.push(`Body (${decoded.label}):`, decoded.text);
    notes.push(...decoded.notes);
  }
  if (response.truncated) notes.push(truncationNote(response, limit));
  return [summary, untrusted(response.finalUrl, inner.join('\n')), ...notes].join('\n');
}

function failure(err: unknown, args: Args, signal: AbortSignal): string {
  if (err instanceof RequestRefusedError) return err.message;
  const message = err instanceof Error ? err.message : String(err);
  if (signal.aborted) return `The request to ${args.url} was cancelled.`;
  if (err instanceof RequestTimeoutError)
    return `${message} Try again with a larger timeout_ms (at most 120000), or a smaller request.`;
  const code = (err as NodeJS.ErrnoException).code;
  return `The request to ${args.url} failed: ${message}${code && !message.includes(code) ? ` (${code})` : ''}. Check the URL, and that the server is up and reachable from this machine.`;
}

/** The `http_request` tool; `resolve` replaces DNS (tests). */
export function httpRequestTool(deps: HttpRequestDeps): ShippedTool<typeof inputSchema> {
  const limit = deps.settings.WEB_MAX_RESPONSE_BYTES;
  return {
    name: 'http_request',
    description:
      'Sends one HTTP request (GET, POST, PUT, PATCH, DELETE or HEAD) to a public http(s) URL and returns the status, the redirects followed, the response headers and the body (text, or base64 for binary content). Use it for APIs and raw files; use web_view to read a web page. Private and local addresses are refused unless HTTP_ALLOW_PRIVATE admits them.',
    inputSchema,
    annotations: {
      title: 'HTTP request',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    async handler(args, signal) {
      const headers = { ...(args.headers ?? {}) };
      const problem = headerProblem(headers);
      if (problem) return toolError(problem);
      if (args.body !== undefined) {
        if (args.method === 'HEAD')
          return toolError('A HEAD request has no body. Leave body out, or use GET or POST.');
        const size = Buffer.byteLength(args.body);
        if (size > MAX_REQUEST_BODY_BYTES)
          return toolError(
            `The body is ${size} bytes; at most ${MAX_REQUEST_BODY_BYTES} bytes are sent. Send a smaller body, or split it into several requests.`,
          );
        if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = guessContentType(args.body);
      }
      try {
        const response = await guardedRequest(args.url, {
          method: args.method,
          headers,
          body: args.body,
          policy: deps.settings.HTTP_ALLOW_PRIVATE,
          resolve: deps.resolve,
          maxBytes: limit,
          onOversize: 'truncate',
          timeoutMs: args.timeout_ms,
          signal,
        });
        return { content: [{ type: 'text', text: formatResponse(args.method, args.url, response, limit) }] };
      } catch (err) {
        return toolError(failure(err, args, signal));
      }
    },
  };
}
