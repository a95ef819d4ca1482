/**
 * The HTTP exchange against a raw TCP server that misbehaves the way real servers do: closing
 * a connection the client still holds as kept-alive.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
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

describe('openHttp idle limit on the body', () => {
  let http: HttpServer | undefined;
  afterEach(() => http?.close());

  /** Answers with `chunks` lines, `gapMs` apart, then stays silent if `stall`. */
  function streamingServer(chunks: number, gapMs: number, stall = false): Promise<string> {
    http = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      let sent = 0;
      const next = () => {
        res.write(`{"n":${sent}}\n`);
        sent += 1;
        if (sent < chunks) setTimeout(next, gapMs);
        else if (!stall) res.end();
      };
      next();
    });
    return new Promise((resolve) =>
      http!.listen(0, '127.0.0.1', () => {
        const { port } = http!.address() as { port: number };
        resolve(`http://127.0.0.1:${port}`);
      }),
    );
  }

  const limited = (url: string, idleMs: number) => ({
    ...call(url),
    idleTimeout: { ms: idleMs, setting: 'LLM_IDLE_TIMEOUT_MS' },
  });

  async function drain(body: AsyncIterable<Uint8Array>, holdMs = 0): Promise<string> {
    const decoder = new TextDecoder();
    let text = '';
    for await (const bytes of body) {
      text += decoder.decode(bytes, { stream: true });
      if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
    }
    return text;
  }

  it('lets a stream that never pauses long run longer than the limit', async () => {
    // 20 chunks 50 ms apart: a second in all, five times the limit, no gap near it.
    const url = await streamingServer(20, 50);
    const res = await openHttp(limited(url, 250));
    expect((await drain(res.body)).trim().split('\n')).toHaveLength(20);
  });

  it('does not count the time the consumer holds a chunk as silence', async () => {
    const url = await streamingServer(3, 0);
    const res = await openHttp(limited(url, 100));
    expect((await drain(res.body, 300)).trim().split('\n')).toHaveLength(3);
  });

  it('does not take a wall clock stepped forward for silence', async () => {
    // Chunks at 0, 250 and 500 ms; the wall clock jumps an hour at 300 ms, while the client waits
    // for the second gap and before the idle check at 400 ms.
    let offset = 0;
    const realNow = Date.now;
    const now = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    try {
      http = createHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"n":0}\n');
        setTimeout(() => res.write('{"n":1}\n'), 250);
        setTimeout(() => {
          offset = 3_600_000;
        }, 300);
        setTimeout(() => res.end('{"n":2}\n'), 500);
      });
      const url = await new Promise<string>((resolve) =>
        http!.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(http!.address() as { port: number }).port}`),
        ),
      );
      const res = await openHttp(limited(url, 400));
      expect((await drain(res.body)).trim().split('\n')).toHaveLength(3);
    } finally {
      now.mockRestore();
    }
  });

  it('ends a stream gone silent with an error naming the setting', async () => {
    const url = await streamingServer(2, 0, true);
    const res = await openHttp(limited(url, 200));
    const failure = await drain(res.body).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LlmError);
    expect((failure as Error).message).toContain('LLM_IDLE_TIMEOUT_MS');
  });
});
