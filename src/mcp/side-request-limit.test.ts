import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describe, expect, it } from 'vitest';
import { sideRequestLimit } from './side-request-limit.js';

const ENDPOINT = 'http://127.0.0.1:9/mcp';

/** A base fetch that records the signal each request got and answers once it is aborted. */
function recording(): { base: FetchLike; signals: (AbortSignal | null | undefined)[] } {
  const signals: (AbortSignal | null | undefined)[] = [];
  const base: FetchLike = (_url, init) => {
    signals.push(init?.signal);
    return new Promise((_resolve, reject) => {
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
    });
  };
  return { base, signals };
}

describe('sideRequestLimit', () => {
  it('leaves requests to the MCP endpoint (its SSE GET) with their own signal only', async () => {
    const { base, signals } = recording();
    const own = new AbortController();
    const stream = sideRequestLimit(base, ENDPOINT, 50)(`${ENDPOINT}`, { method: 'GET', signal: own.signal });
    void sideRequestLimit(base, ENDPOINT, 50)(ENDPOINT, { method: 'GET' });
    expect(signals[0]).toBe(own.signal);
    expect(signals[1]).toBeUndefined();
    own.abort();
    // The stream ends with the caller's abort, as the transport's would.
    await expect(stream).rejects.toThrow(/aborted/);
  });

  it('gives up any other request after the limit, saying which server did not answer', async () => {
    const { base, signals } = recording();
    const token = sideRequestLimit(base, ENDPOINT, 50)('http://127.0.0.1:9/token', { method: 'POST' });
    await expect(token).rejects.toThrow('http://127.0.0.1:9 did not answer within 50 ms');
    expect(signals[0]?.aborted).toBe(true);
  });

  it('passes the caller’s own abort through unchanged', async () => {
    const { base } = recording();
    const own = new AbortController();
    const request = sideRequestLimit(
      base,
      ENDPOINT,
      60_000,
    )('http://127.0.0.1:9/.well-known/x', {
      signal: own.signal,
    });
    own.abort(new Error('stopped by the caller'));
    await expect(request).rejects.toThrow('stopped by the caller');
  });
});
