/**
 * A time limit for the requests the SDK's Streamable HTTP transport makes beside the MCP
 * endpoint: OAuth discovery, registration and the token refresh it does on its own when the
 * server answers 401. Nothing else bounds those, so an authorisation server that never answers
 * would hold the transport, and every call waiting on it, for ever.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { endpointMatcher } from './http-failure.js';

/**
 * Wraps `base` so each request that is not to `endpoint` ends after `timeoutMs`, on top of its
 * own signal. Requests to the MCP endpoint keep only their own signal: its GET is a long-lived
 * SSE stream, and its POSTs are bounded by the request's own timeout.
 */
export function sideRequestLimit(base: FetchLike, endpoint: string, timeoutMs: number): FetchLike {
  const isEndpoint = endpointMatcher(endpoint);
  return (url, init) => {
    if (isEndpoint(url)) return base(url, init);
    const limit = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, limit]) : limit;
    return base(url, { ...init, signal }).catch((err: unknown) => {
      if (!limit.aborted || init?.signal?.aborted) throw err;
      throw new Error(`${new URL(url).origin} did not answer within ${timeoutMs} ms`, { cause: err });
    });
  };
}
