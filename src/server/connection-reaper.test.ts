/**
 * A keep-alive connection that turns idle just after `server.close()` must not hold the close
 * for the keep-alive timeout (set to 10 minutes here, so without the reaper these tests hang
 * past their own time limit), and a request that never ends is cut at the deadline.
 */
import { createServer, type RequestListener, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { reapConnectionsOnClose } from './connection-reaper.js';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server = undefined;
});

function listen(handler: RequestListener): Promise<number> {
  server = createServer({ keepAliveTimeout: 600_000 }, handler);
  const s = server;
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
}

/** Sends a keep-alive GET; resolves with the body once the answer is complete. */
function get(port: number, onSent: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', path: '/', headers: { connection: 'keep-alive' } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
    req.end(onSent);
  });
}

const closed = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));

describe('reapConnectionsOnClose', () => {
  it('closes a connection that finishes its answer after the close began', async () => {
    let answer: (() => void) | undefined;
    const arrived = new Promise<void>((resolve) => {
      void listen((_req, res) => {
        answer = () => res.end('done');
        resolve();
      }).then((port) => get(port, () => undefined).then((body) => expect(body).toBe('done')));
    });
    await arrived;
    const s = server as Server;
    reapConnectionsOnClose(s, 600_000);
    const closing = closed(s);
    answer?.();
    await closing;
    expect(s.listening).toBe(false);
  });

  it('cuts a request that never ends at the deadline', async () => {
    let arrived: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const port = await listen(() => arrived());
    const pending = get(port, () => undefined).catch((err: Error) => err.message);
    await seen;
    const s = server as Server;
    reapConnectionsOnClose(s, 200);
    await closed(s);
    expect(await pending).toMatch(/socket hang up|ECONNRESET/);
  });
});
