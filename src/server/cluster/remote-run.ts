/**
 * A run another process executes, seen from this one: its events, in seq order from 1, for
 * the sockets watching its session here. A notice says up to which seq the run's events are
 * written; they are read from `run_events`, one read for all the notices heard while the one
 * before was on its way, and pass one gate that takes only the next seq, so a watcher gets each
 * event once and none is skipped. Like `AgentRun`, it keeps what it delivered, so a socket that
 * joins later is replayed the run from its start.
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
  /** Reads the run's events after a seq, in order, at most `limit`. */
  read(runId: string, afterSeq: number, limit: number): Promise<StoredRunEvent[]>;
  /** Called once, when its terminal event was delivered. */
  onFinish(run: RemoteRun): void;
  log: Logger;
}

/** What watchers see of a run whose process stopped before it finished. */
export const OWNER_GONE =
  'The Navi process that was running this answer stopped before it finished; what it had said is saved. Send the message again to continue.';

/** Rows per read; a read that fills it is followed by the next at once. */
const READ_LIMIT = 500;

export class RemoteRun {
  readonly sessionId: string;
  readonly runId: string;
  readonly owner: string;
  private delivered = 0;
  private readonly replay: { event: ServerEvent; json: string }[] = [];
  private readonly subscribers = new Set<RunSubscriber>();
  private finished = false;
  private reading: Promise<void> | undefined;
  /** The highest seq a notice said is written. */
  private wanted = 0;
  /** Asked to read while a read was on its way (reconnected, swept): read once more. */
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

  /** A notice said the run's events up to `last` are written. */
  offer(last: number): void {
    if (this.finished) return;
    this.wanted = Math.max(this.wanted, last);
    // A read on its way reads again if it comes back short of `wanted`.
    if (last > this.delivered && !this.reading) void this.catchUp();
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
    for (;;) {
      if (this.finished) return;
      this.again = false;
      const wantedBefore = this.wanted;
      const rows = await this.options.read(this.runId, this.delivered, READ_LIMIT);
      let progressed = false;
      for (const row of rows) {
        if (this.finished || row.seq !== this.delivered + 1) continue;
        this.accept(JSON.parse(row.json) as ServerEvent, row.json);
        progressed = true;
      }
      if (this.finished) return;
      if (this.again) continue;
      // Short of what the notices said: read again if this read got somewhere, or a notice came
      // while it was on its way (its rows may have committed after the read looked). A seq never
      // written (its batch was given up) leaves a gap no read fills; the run then ends when its
      // owner is found gone.
      if (this.delivered < this.wanted && (progressed || this.wanted > wantedBefore)) continue;
      if (progressed && rows.length >= READ_LIMIT) continue;
      return;
    }
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
