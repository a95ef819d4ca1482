/**
 * One request to a search provider through the guarded HTTP client, with every way it can go
 * wrong turned into a `ProviderFailure` whose message a person can act on. A provider's
 * endpoint is the user's own configuration, so its host is trusted; redirects elsewhere are
 * still checked against HTTP_ALLOW_PRIVATE.
 */
import {
  type GuardedResponse,
  guardedRequest,
  type HttpMethod,
  RequestRefusedError,
  RequestTimeoutError,
  ResponseTooLargeError,
} from '../../../machine/net/guarded-request.js';
import { collapseWhitespace } from './clean-text.js';
import { ProviderFailure, type SearchContext } from './types.js';

export interface ProviderRequest {
  url: string;
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string;
  /** Names the setting behind the URL in messages ("SEARXNG_URL"). */
  setting: string;
}

/** Scheme, host and port only: paths and queries (which may carry the search) stay out of messages. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function networkFailure(err: unknown, request: ProviderRequest, context: SearchContext): ProviderFailure {
  const where = `${origin(request.url)} (${request.setting})`;
  if (err instanceof RequestRefusedError) {
    if (err instanceof ResponseTooLargeError)
      return new ProviderFailure(
        'refused',
        `its answer is larger than WEB_MAX_RESPONSE_BYTES (${context.maxBytes} bytes)`,
      );
    return new ProviderFailure('refused', `the request was refused: ${err.message}`);
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RequestTimeoutError)
    return new ProviderFailure(
      'timeout',
      `no answer within ${Math.round(context.timeoutMs / 100) / 10} s from ${where}`,
    );
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const detail = code ?? collapseWhitespace(message).slice(0, 200);
  return new ProviderFailure('unreachable', `unreachable at ${where}: ${detail}`);
}

/**
 * Sends the request. Throws ProviderFailure for network trouble, time-outs, refusals, HTTP 429
 * and other non-2xx statuses; `describeError` may name what the provider said in its error body.
 * Rethrows the caller's abort as it is, so a cancelled search stops instead of falling back.
 */
export async function providerRequest(
  request: ProviderRequest,
  context: SearchContext,
  describeError?: (response: GuardedResponse) => string | undefined,
): Promise<GuardedResponse> {
  let response: GuardedResponse;
  try {
    response = await guardedRequest(request.url, {
      method: request.method ?? 'GET',
      headers: request.headers,
      body: request.body,
      policy: context.policy,
      trusted: true,
      resolve: context.resolve,
      maxBytes: context.maxBytes,
      onOversize: 'error',
      timeoutMs: context.timeoutMs,
      signal: context.signal,
    });
  } catch (err) {
    if (context.signal.aborted) throw err;
    throw networkFailure(err, request, context);
  }
  if (response.status >= 200 && response.status < 300) return response;
  const said = describeError?.(response);
  const suffix = said ? ` (${said})` : '';
  if (response.status === 429)
    throw new ProviderFailure(
      'rate-limited',
      `rate-limited (HTTP 429)${suffix}: it refuses more searches for now; wait a few minutes or configure another provider`,
    );
  const statusText = response.statusText ? ` ${collapseWhitespace(response.statusText).slice(0, 60)}` : '';
  throw new ProviderFailure('http-error', `HTTP ${response.status}${statusText}${suffix}`);
}

/** The media type the answer declares, reduced to its token characters (it comes from a remote server). */
export function mediaType(response: GuardedResponse): string | undefined {
  const raw = response.headers['content-type'];
  const type = raw
    ?.split(';')[0]
    ?.trim()
    .toLowerCase()
    .replace(/[^\w/.+-]/g, '')
    .slice(0, 60);
  return type || undefined;
}

/** The body as JSON, or a ProviderFailure saying it is not JSON. */
export function jsonBody(response: GuardedResponse): unknown {
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    const type = mediaType(response) ?? 'no content type';
    throw new ProviderFailure(
      'bad-answer',
      `its answer is not JSON (${response.body.length} bytes of ${type}); is the URL right?`,
    );
  }
}
