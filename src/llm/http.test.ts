/**
 * The HTTP exchange against a raw TCP server that misbehaves the way real servers do: closing
 * a connection the client still holds as kept-alive.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerInfo } from './failures.js';
import { openHttp } from './http.js';
import { LlmError } from './types.js';

const hints = {
  unreachable: 'Start it.',
  auth: 'Check the key.',
  modelNotFound: (m: string) => `Pull ${m}.`,
  notFound: 'Check the URL.',
  contextOverflow: 'Shorten it.',
} as unknown as ServerInfo['hints'];

let server: Server | undefined;
afterEach(() => server?.close());

/** Resets the first `resets` connections as soon as a request arrives, then answers `{"ok":true}`. */
function startServer(resets: number): Promise<{ url: string; connections: () => number }> {
  let seen = 0;
  server = createServer((socket: Socket) => {
    seen += 1;
    const reset = seen <= resets;
    socket.once('data', () => {
      if (reset) {
        socket.resetAndDestroy();
        return;
      }
      const body = '{"ok":true}';
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
  return new Promise((resolve) =>
    server!.listen(0, '127.0.0.1', () => {
      const { port } = server!.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, connections: () => seen });
    }),
  );
}

const call = (url: string) => ({
  fetch: (input: string, init: RequestInit) => fetch(input, init),
  server: { label: 'Test server', baseUrl: url, hints },
  model: 'm',
  path: '/api/chat',
  method: 'POST' as const,
  body: { hello: 1 },
  headersTimeout: { ms: 5_000, setting: 'LLM_CONNECT_TIMEOUT_MS' },
  idleTimeout: { ms: 5_000, setting: 'LLM_IDLE_TIMEOUT_MS' },
});

describe('openHttp', () => {
  it('retries once when the connection is reset before any answer', async () => {
    const s = await startServer(1);
    const res = await openHttp(call(s.url));
    expect(JSON.parse(await res.text())).toEqual({ ok: true });
    expect(s.connections()).toBe(2);
  });

  it('gives up with an actionable error when the reset happens again', async () => {
    const s = await startServer(5);
    const failure = await openHttp(call(s.url)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LlmError);
    expect((failure as Error).message).toContain('connection closed before an answer');
    expect(s.connections()).toBe(2);
  });
});
