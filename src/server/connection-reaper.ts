/**
 * Shutdown must not wait on an idle keep-alive connection. Node's `server.close()` closes only
 * the connections idle at that instant; one still finishing its response then turns idle and
 * stays open for the whole keep-alive timeout (72 s under Fastify), and the close waits with it.
 * Once closing starts, idle connections are reaped as they appear, and whatever is still open
 * after `deadlineMs` is cut.
 */
import type { Server } from 'node:http';

export function reapConnectionsOnClose(server: Server, deadlineMs: number, intervalMs = 50): void {
  const reap = setInterval(() => server.closeIdleConnections(), intervalMs);
  const cut = setTimeout(() => server.closeAllConnections(), deadlineMs);
  reap.unref();
  cut.unref();
  server.once('close', () => {
    clearInterval(reap);
    clearTimeout(cut);
  });
}
