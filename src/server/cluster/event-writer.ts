/**
 * Writes a run's stamped events to `run_events` for the other processes, as an internal
 * subscriber of the run. Events delivered in the same turn of the event loop (a flush of the
 * delta coalescer and whatever came with it) go in one INSERT; while one is on its way, the next
 * events wait and go in the next one, so writes never overtake each other and the table always
 * holds a run's events from seq 1 without a gap. Each INSERT sends its notice in the same
 * transaction: ids and seqs only, sealed; the others read the events from the table.
 */
import type { Logger } from 'pino';
import { isTerminalEvent, type ServerEvent } from '../../protocol/events.js';
import type { PgRunTables } from '../../store/postgres/run-tables.js';
import type { RunSubscriber } from '../run-subscriber.js';
import { encodeNotice } from './notices.js';

export interface EventWriterOptions {
  tables: PgRunTables;
  channel: string;
  member: string;
  sessionId: string;
  runId: string;
  /** Seals a notice for the other members. */
  seal(body: string): string;
  log: Logger;
  /** Attempts of a write that fails (the database restarting) before its events are given up. */
  attempts?: number;
  retryMs?: number;
}

export class EventWriter implements RunSubscriber {
  readonly kind = 'internal' as const;
  private pending: string[] = [];
  /** Seq of `pending[0]`. */
  private nextSeq = 1;
  private ended = false;
  private scheduled = false;
  private writing: Promise<void> | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly options: EventWriterOptions) {}

  deliver(event: ServerEvent, json: string): boolean {
    const expected = this.nextSeq + this.pending.length;
    // The terminal event comes twice: from the claim's end, first, then as the run delivers it.
    if (event.seq !== undefined && event.seq < expected) return true;
    if (event.seq !== expected) {
      // The run stamps seqs 1, 2, 3…; anything else would leave a gap the readers wait on forever.
      this.options.log.error({ seq: event.seq }, 'run event out of order; not shared with other processes');
      return true;
    }
    this.pending.push(json);
    if (isTerminalEvent(event)) this.ended = true;
    if (!this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.startWriting();
      });
    }
    return true;
  }

  /** Resolves once every event delivered so far is written (or given up). Never rejects. */
  async drained(): Promise<void> {
    while (this.scheduled || this.writing) {
      if (this.writing) await this.writing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await this.tail;
  }

  /** Writes an event sent after the end of the run (it carries the run's next seq). */
  after(event: ServerEvent, json: string): void {
    const { tables, channel, member, sessionId, runId, seal } = this.options;
    const seq = event.seq ?? 0;
    this.tail = this.drained()
      .then(() =>
        this.withRetry(() =>
          tables.appendEvents({
            runId,
            sessionId,
            firstSeq: seq,
            events: [json],
            ended: false,
            channel,
            notice: seal(encodeNotice({ k: 'after', p: member, s: sessionId, r: runId, q: seq })),
          }),
        ),
      )
      .catch((err: unknown) => this.options.log.warn({ err }, 'event after the run not shared'));
  }

  private startWriting(): void {
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
    });
  }

  private async writeAll(): Promise<void> {
    const { tables, channel, member, sessionId, runId, seal } = this.options;
    while (this.pending.length > 0) {
      const events = this.pending;
      const firstSeq = this.nextSeq;
      this.pending = [];
      this.nextSeq += events.length;
      // The terminal event is the last a run delivers: the batch that holds it is the last one.
      const ended = this.ended;
      const notice = seal(
        encodeNotice({
          k: 'ev',
          p: member,
          s: sessionId,
          r: runId,
          f: firstSeq,
          l: firstSeq + events.length - 1,
          ...(ended ? { end: 1 as const } : {}),
        }),
      );
      try {
        await this.withRetry(() =>
          tables.appendEvents({ runId, sessionId, firstSeq, events, ended, channel, notice }),
        );
      } catch (err) {
        // Local clients have them; other processes' clients see the run end without them (their
        // process gives the run up once it notices the owner no longer runs it).
        this.options.log.error({ err, first_seq: firstSeq, count: events.length }, 'run events not shared');
      }
    }
  }

  private async withRetry(write: () => Promise<void>): Promise<void> {
    const attempts = this.options.attempts ?? 8;
    let delay = this.options.retryMs ?? 100;
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        // A write whose commit was not acknowledged (the connection dropped) may have landed.
        if ((err as { code?: string }).code === '23505') return;
        if (attempt >= attempts) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }
}
