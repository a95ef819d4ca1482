/**
 * A WebSocket client as a run subscriber. `ws` queues outgoing frames per socket, which is the
 * subscriber's own send queue: sending never waits, so a slow client cannot hold up the run or
 * the other clients. A client whose queue grows past `maxBufferedBytes` is disconnected
 * (close code 1013, "try again later"); it can reconnect and be replayed the run.
 */
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { ErrorCode } from '../../protocol/error-codes.js';
import type { ServerEvent } from '../../protocol/events.js';
import type { RunSubscriber } from '../run-subscriber.js';

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export class SocketSubscriber implements RunSubscriber {
  readonly kind = 'socket' as const;

  constructor(
    private readonly socket: WebSocket,
    private readonly logger: Logger,
    private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  ) {}

  deliver(_event: ServerEvent, json: string): boolean {
    if (this.socket.readyState !== this.socket.OPEN) return false;
    if (this.socket.bufferedAmount > this.maxBufferedBytes) {
      this.logger.warn(
        { buffered: this.socket.bufferedAmount },
        'websocket client too slow; disconnecting it',
      );
      this.socket.close(1013, 'too slow');
      return false;
    }
    this.socket.send(json);
    return true;
  }

  /** An event outside any run (a refused client message): no run_id, no seq. */
  sendError(message: string, code: ErrorCode): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify({ type: 'error', message, recoverable: true, code }));
  }
}
