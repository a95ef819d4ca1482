/**
 * A run another process executes, seen from this one: its events, in seq order from 1, for
 * the sockets watching its session here. Events come two ways, inline in a notice or read from
 * `run_events`, and both pass one gate that takes only the next seq, so a watcher gets each
 * event once and none is skipped: an event already delivered is dropped, and one after a gap
 * waits for the read that fills it. Like `AgentRun`, it keeps what it delivered, so a socket
 * that joins later is replayed the run from its start.
 */
import type { Logger } from 'pino';
import { isTerminalEvent, type ServerEvent } from '../../protocol/events.js';
import type { StoredRunEvent } from '../../store/postgres/run-tables.js';
import type { RunSubscriber } from '../run-subscriber.js';

export interface RemoteRunOptions {
  sessionId: string;
  runId: string;
  /** The member that executes it. */
  owner: string;
  /** Reads the run's events after a seq, in order. */
  read(runId: string, afterSeq: number): Promise<StoredRunEvent[]>;
  /** Called once, when its terminal event was delivered. */
  onFinish(run: RemoteRun): void;
  log: Logger;
}

/** What watchers see of a run whose process stopped before it finished. */
export const OWNER_GONE =
  'The Navi process that was running this answer stopped before it finished; what it had said is saved. Send the message again to continue.';

export class RemoteRun {
  readonly sessionId: string;
  readonly runId: string;
  readonly owner: string;
  private delivered = 0;
  private readonly replay: { event: ServerEvent; json: string }[] = [];
  private readonly subscribers = new Set<RunSubscriber>();
  private finished = false;
  private reading: Promise<void> | undefined;
  /** A notice came while a read was on its way: read once more when it returns. */
  private again = false;

  constructor(private readonly options: RemoteRunOptions) {
    this.sessionId = options.sessionId;
    this.runId = options.runId;
    this.owner = options.owner;
  }

  get done(): boolean {
    return this.finished;
  }

  /** The highest seq delivered. */
  get lastSeq(): number {
    return this.delivered;
  }

  /** Replays the run so far to `subscriber`, then delivers what follows. */
  subscribe(subscriber: RunSubscriber): void {
    for (const { event, json } of this.replay) {
      if (!subscriber.deliver(event, json)) return;
    }
    if (!this.finished) this.subscribers.add(subscriber);
  }

  unsubscribe(subscriber: RunSubscriber): void {
    this.subscribers.delete(subscriber);
  }

  /** A notice said events `first…last` are written; `events` are them when they came inline. */
  offer(first: number, last: number, events?: readonly ServerEvent[]): void {
    if (this.finished) return;
    if (events) {
      for (let i = 0; i < events.length && !this.finished; i++) {
        const event = events[i]!;
        if (first + i === this.delivered + 1 && event.seq === first + i)
          this.accept(event, JSON.stringify(event));
      }
    }
    if (last > this.delivered) void this.catchUp();
  }

  /** Reads what the table holds beyond what was delivered. Never rejects. */
  catchUp(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.readLoop()
      .catch((err: unknown) =>
        this.options.log.warn({ err, run_id: this.runId }, 'reading run events failed'),
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /**
   * Ends the run for its watchers when its process is gone: what the table holds first, then a
   * terminal error in its place.
   */
  async abandon(): Promise<void> {
    await this.catchUp();
    if (this.finished) return;
    const event: ServerEvent = {
      type: 'error',
      message: OWNER_GONE,
      recoverable: false,
      code: 'INTERNAL',
      run_id: this.runId,
      seq: this.delivered + 1,
    };
    this.accept(event, JSON.stringify(event));
  }

  private async readLoop(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.finished) return;
        const rows = await this.options.read(this.runId, this.delivered);
        let progressed = false;
        for (const row of rows) {
          if (this.finished || row.seq !== this.delivered + 1) continue;
          this.accept(JSON.parse(row.json) as ServerEvent, row.json);
          progressed = true;
        }
        if (!progressed) break;
      }
    } while (this.again && !this.finished);
  }

  private accept(event: ServerEvent, json: string): void {
    this.delivered = event.seq ?? this.delivered + 1;
    this.replay.push({ event, json });
    for (const subscriber of this.subscribers) {
      if (!subscriber.deliver(event, json)) this.subscribers.delete(subscriber);
    }
    if (isTerminalEvent(event)) {
      this.finished = true;
      this.subscribers.clear();
      this.options.onFinish(this);
    }
  }
}
