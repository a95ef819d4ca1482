/**
 * One WebSocket client of a session, as the web client is: it checks every run it sees (seq 1,
 * 2, 3… with no gap or repeat, the deltas adding up to the final answer, tool calls that
 * succeeded, no `error` event) and reports what is wrong to the tally. It keeps state only for
 * runs in progress, so it can stay open for the whole hour.
 */
import WebSocket from 'ws';
import { isAfterRunEvent, isTerminalEvent, type ServerEvent } from '../src/protocol/events.js';
import type { Tally } from './tally.js';

interface RunState {
  next: number;
  deltas: string;
}

type Waiter = (event: ServerEvent) => void;

export interface WatcherHooks {
  /** A run a recall started, by id; every watcher of the session calls it, the session counts once. */
  onRecallStart(runId: string): void;
}

export class Watcher {
  private readonly socket: WebSocket;
  private readonly runs = new Map<string, RunState>();
  private readonly waiters = new Set<Waiter>();
  private closing = false;
  readonly opened: Promise<void>;

  constructor(
    url: string,
    private readonly label: string,
    private readonly tally: Tally,
    private readonly hooks: WatcherHooks,
  ) {
    this.socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('message', (data: Buffer) => this.receive(data));
    this.socket.on('error', (err) => {
      if (!this.closing) tally.error(`${label}: socket error ${err.message}`);
    });
    this.socket.on('close', (code) => {
      if (!this.closing) tally.error(`${label}: the server closed the socket (${code})`);
      this.closing = true;
    });
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The first event (from now) matching `test`; rejects after `timeoutMs` naming `what`. */
  waitFor(test: (event: ServerEvent) => boolean, timeoutMs: number, what: string): Promise<ServerEvent> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = (event) => {
        if (!test(event)) return;
        this.waiters.delete(waiter);
        clearTimeout(timer);
        resolve(event);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.label}: no ${what} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Closes the socket and resolves once it is closed; the server seeing it go is part of the test. */
  close(): Promise<void> {
    this.closing = true;
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
      else this.socket.close();
    });
  }

  private receive(data: Buffer): void {
    let event: ServerEvent;
    try {
      event = JSON.parse(data.toString()) as ServerEvent;
    } catch {
      this.tally.error(`${this.label}: a frame that is not JSON`);
      return;
    }
    this.check(event);
    for (const waiter of [...this.waiters]) waiter(event);
  }

  private check(event: ServerEvent): void {
    const runId = event.run_id;
    if (runId === undefined || event.seq === undefined) {
      // RUN_ACTIVE answers a message sent while a recall's run holds the session: the sender
      // counts it as busy. Any other error outside a run is a refused frame the driver never sends.
      if (event.type === 'error' && event.code !== 'RUN_ACTIVE')
        this.tally.error(`${this.label}: error event ${event.code}: ${event.message}`);
      return;
    }
    let run = this.runs.get(runId);
    if (!run) {
      if (isAfterRunEvent(event)) return; // a run that ended before this socket joined
      if (event.seq !== 1) this.tally.error(`${this.label}: run ${runId} first seen at seq ${event.seq}`);
      run = { next: event.seq, deltas: '' };
      this.runs.set(runId, run);
    }
    if (event.seq !== run.next) {
      this.tally.error(`${this.label}: run ${runId} seq ${event.seq} where ${run.next} was due`);
    }
    run.next = event.seq + 1;
    switch (event.type) {
      case 'stream_start':
        if (event.trigger === 'recall') this.hooks.onRecallStart(runId);
        break;
      case 'stream_delta':
        run.deltas += event.delta;
        break;
      case 'tool_call':
        if (!event.success) this.tally.error(`${this.label}: tool ${event.tool} failed: ${event.result}`);
        break;
      case 'stream_end':
        if (run.deltas !== event.content)
          this.tally.error(
            `${this.label}: run ${runId} deltas (${run.deltas.length} chars) differ from its answer (${event.content.length} chars)`,
          );
        break;
      case 'error':
        this.tally.error(`${this.label}: run ${runId} error ${event.code}: ${event.message}`);
        break;
      default:
        break;
    }
    if (isTerminalEvent(event)) this.runs.delete(runId);
  }
}
