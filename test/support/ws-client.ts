/** A WebSocket test client that records every event and waits for the ones a test expects. */
import WebSocket from 'ws';
import { isTerminalEvent, type ServerEvent } from '../../src/protocol/events.js';

export class EventClient {
  readonly events: ServerEvent[] = [];
  readonly frames: string[] = [];
  private waiters: { test: (e: ServerEvent) => boolean; resolve: (e: ServerEvent) => void }[] = [];
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const text = data.toString();
      this.frames.push(text);
      const event = JSON.parse(text) as ServerEvent;
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(event)) return true;
        w.resolve(event);
        return false;
      });
    });
    socket.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static connect(url: string, options: WebSocket.ClientOptions = {}): Promise<EventClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, options);
      const client = new EventClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
      socket.once('close', (code) => resolve(Object.assign(client, { closeCode: code })));
    });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Resolves with the first event (already received or coming) that matches. */
  waitFor(test: (e: ServerEvent) => boolean, timeoutMs = 15_000, from = 0): Promise<ServerEvent> {
    const seen = this.events.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`timed out waiting for an event; got ${this.events.map((e) => e.type).join(', ')}`),
          ),
        timeoutMs,
      );
      this.waiters.push({
        test,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  /** Sends `command` and resolves with the events of the run it starts. */
  turn(command: unknown, timeoutMs = 20_000): Promise<ServerEvent[]> {
    const mark = this.events.length;
    this.send(command);
    return this.waitForRunEnd(mark, timeoutMs);
  }

  /** Waits for the first terminal event at or after index `from`; returns that run's events. */
  async waitForRunEnd(from = 0, timeoutMs = 20_000): Promise<ServerEvent[]> {
    const last = await this.waitFor(isTerminalEvent, timeoutMs, from);
    return this.events.filter((e) => e.run_id === last.run_id);
  }

  ofType<T extends ServerEvent['type']>(type: T): Extract<ServerEvent, { type: T }>[] {
    return this.events.filter((e) => e.type === type) as Extract<ServerEvent, { type: T }>[];
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
