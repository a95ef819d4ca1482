/**
 * Options of the WebSocket server, chosen so that a frame over the hard size limit always ends
 * in a proper close: code 1009 with a reason the client can show.
 *
 * The `ws` library refuses such a frame as soon as it has read the frame's header: it writes a
 * close frame (1009, without a reason), half-closes the TCP connection once that frame is out,
 * and keeps reading and discarding whatever the client still sends until the client closes too
 * or `closeTimeout` runs out. Two things would spoil that:
 * - @fastify/websocket's default error handler terminates the socket on that error. A socket
 *   destroyed while the client is still writing the huge frame answers with a TCP reset, and a
 *   client that sees the reset before it has read the close frame reports 1006 (no close frame).
 *   Our handler leaves the protocol errors of `ws` to `ws`.
 * - The missing reason: `ws` closes through the socket's own `close()`, so a subclass adds it.
 */
import type { WebsocketPluginOptions } from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import { WebSocket } from 'ws';

type ServerOptions = NonNullable<WebsocketPluginOptions['options']>;

/** Close code of a frame over the hard limit ("message too big"). */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

/** How long a closing socket may take to finish the handshake before it is destroyed (ms). */
export const CLOSE_TIMEOUT_MS = 10_000;

/** The close reason of an oversized frame; the protocol caps reasons at 123 bytes. */
export function tooBigReason(maxPayloadBytes: number): string {
  return `Message too big (limit ${maxPayloadBytes} bytes); reconnect and send a smaller one.`;
}

/**
 * Settings of the `ws` server that closes frames over `maxPayloadBytes` with 1009 and a reason.
 * `closeTimeout` is read by `ws` but missing from its type declarations, hence the widened type.
 */
export function websocketPluginOptions(maxPayloadBytes: number): WebsocketPluginOptions {
  const reason = tooBigReason(maxPayloadBytes);
  class SizeExplainingSocket extends WebSocket {
    override close(code?: number, data?: string | Buffer): void {
      // Our own code always gives a reason; a bare 1009 comes from `ws` refusing a frame.
      super.close(code, code === CLOSE_MESSAGE_TOO_BIG && data === undefined ? reason : data);
    }
  }
  const options: ServerOptions & { closeTimeout: number } = {
    maxPayload: maxPayloadBytes,
    closeTimeout: CLOSE_TIMEOUT_MS,
    // Off (the `ws` default, said here so it stays so): deflate keeps zlib contexts of about
    // 64-300 KB per socket, 1 000 idle sockets would hold 100+ MB, and Navi's frames go over
    // loopback or a LAN where the bytes saved cost more CPU than they are worth.
    perMessageDeflate: false,
    // The plugin's declarations want the class together with the module's statics (Server…);
    // `ws` only makes instances of it.
    WebSocket: SizeExplainingSocket as unknown as ServerOptions['WebSocket'],
  };
  return { options, errorHandler: handleSocketError };
}

/** Error codes of `ws` for what the peer sent; `ws` itself closes the socket with a close code. */
function isProtocolError(error: Error): boolean {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}

function handleSocketError(error: Error, socket: WebSocket, request: FastifyRequest): void {
  if (isProtocolError(error)) {
    request.log.debug({ err: error }, 'websocket client broke the protocol; closing');
    return;
  }
  request.log.error({ err: error }, 'websocket failed');
  socket.terminate();
}
