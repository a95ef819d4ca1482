import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseStream } from './sse.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves one stream, driven by `drive`, and returns its URL. */
async function serve(
  drive: (sse: SseStream) => void,
  keepAliveMs: number,
  onClose?: () => void,
): Promise<string> {
  server = createServer((_req, res) => {
    const sse = new SseStream(res, keepAliveMs);
    sse.open({ 'x-extra': 'yes' });
    res.on('close', () => {
      sse.stop();
      onClose?.();
    });
    drive(sse);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Reads the body until `text` has arrived; returns everything read. */
async function readUntil(body: ReadableStream<Uint8Array>, text: string): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return seen;
}

describe('SseStream', () => {
  it('sends data events and [DONE] with the event-stream headers', async () => {
    const url = await serve((sse) => {
      sse.send({ a: 1 });
      sse.done();
    }, 60_000);
    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(await res.text()).toBe('data: {"a":1}\n\ndata: [DONE]\n\n');
  });

  it('sends a keep-alive comment while nothing else is sent', async () => {
    const url = await serve((sse) => sse.send({ first: true }), 5);
    const res = await fetch(url);
    const body = await readUntil(res.body as ReadableStream<Uint8Array>, ': keep-alive\n\n');
    expect(body.startsWith('data: {"first":true}\n\n')).toBe(true);
    expect(body).toContain(': keep-alive\n\n');
  });

  it('writes nothing once the client has gone', async () => {
    let stream: SseStream | undefined;
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const url = await serve(
      (sse) => {
        stream = sse;
        sse.send({ hello: 1 });
      },
      60_000,
      () => closed(),
    );
    const controller = new AbortController();
    const res = await fetch(url, { signal: controller.signal });
    await readUntil(res.body as ReadableStream<Uint8Array>, 'hello');
    controller.abort();
    await gone;
    expect(stream?.closed).toBe(true);
    expect(() => {
      stream?.send({ late: true });
      stream?.done();
    }).not.toThrow();
  });
});
