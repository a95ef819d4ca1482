/**
 * The WebSocket of one session (docs/protocol.md#websocket), reconnecting by itself with exponential back-off.
 * It never interprets events: it hands every parsed `ServerEvent` to `onEvent` and reports
 * its state, so the chat can reload and catch up after each (re)connection.
 */
import type { ClientCommand } from '@protocol/commands.js';
import type { ServerEvent } from '@protocol/events.js';

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface SessionSocketHandlers {
  onEvent(event: ServerEvent): void;
  onOpen(): void;
  onState(state: ConnectionState, detail?: string): void;
  /** The server refused the session for good (4004 unknown session, 4401, 4403). */
  onRefused(code: number, reason: string): void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

export class SessionSocket {
  private socket: WebSocket | null = null;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closedByUs = false;

  constructor(
    private readonly sessionId: string,
    private readonly handlers: SessionSocketHandlers,
  ) {}

  connect(): void {
    this.closedByUs = false;
    this.open();
  }

  /** Sends a command; false when the socket is not open (the caller tells the user). */
  send(command: ClientCommand): boolean {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(command));
    return true;
  }

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close(): void {
    this.closedByUs = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.socket?.close(1000, 'client left the session');
    this.socket = null;
    this.handlers.onState('closed');
  }

  /** Reconnect now instead of waiting for the back-off (e.g. when the network comes back). */
  retryNow(): void {
    if (this.closedByUs || this.isOpen) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.open();
  }

  private open(): void {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const url = `${scheme}://${window.location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}`;
    this.handlers.onState(this.attempts === 0 ? 'connecting' : 'reconnecting');
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener('open', () => {
      if (this.socket !== socket) return;
      this.attempts = 0;
      this.handlers.onState('open');
      this.handlers.onOpen();
    });
    socket.addEventListener('message', (message: MessageEvent) => {
      if (this.socket !== socket || typeof message.data !== 'string') return;
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (event && typeof event === 'object' && typeof (event as { type?: unknown }).type === 'string') {
        this.handlers.onEvent(event as ServerEvent);
      }
    });
    socket.addEventListener('close', (event: CloseEvent) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closedByUs) return;
      if (event.code === 4004 || event.code === 4401 || event.code === 4403) {
        this.handlers.onState('closed', event.reason);
        this.handlers.onRefused(event.code, event.reason);
        return;
      }
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    this.attempts += 1;
    const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (this.attempts - 1));
    const delay = base / 2 + Math.random() * (base / 2);
    this.handlers.onState('reconnecting', `retrying in ${Math.round(delay / 1000)} s`);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.open();
    }, delay);
  }
}
