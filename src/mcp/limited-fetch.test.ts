/**
 * limitedFetch for a body that is neither JSON nor an event stream: an error page of any
 * size, which the SDK's transport reads whole, is cut after the message limit.
 */
import { describe, expect, it } from 'vitest';
import { limitedFetch } from './limited-fetch.js';

describe('limitedFetch with another content type', () => {
  it('cuts an endless error page after the limit and stops reading it', async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const base = async () =>
      new Response(endless, {
        status: 500,
        statusText: 'Internal Server Error',
        headers: { 'content-type': 'text/html' },
      });
    const response = await limitedFetch(2500, undefined, base)('http://h/mcp', { method: 'POST' });
    expect(response.status).toBe(500);
    expect(response.statusText).toBe('Internal Server Error');
    const text = await response.text();
    expect(text).toBe('x'.repeat(2500));
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });

  it('passes a short body on whole', async () => {
    const base = async () =>
      new Response('Bad Gateway', { status: 502, headers: { 'content-type': 'text/plain' } });
    const response = await limitedFetch(2500, undefined, base)('http://h/mcp', { method: 'POST' });
    expect(await response.text()).toBe('Bad Gateway');
  });
});
