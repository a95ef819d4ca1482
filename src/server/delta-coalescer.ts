/**
 * Merges bursts of `stream_delta` / `thinking_delta` events so a model that streams one token
 * per chunk does not cost one WebSocket frame per token. The first delta of a burst goes out at
 * once (the user sees the answer start without delay); later ones are merged and flushed when
 * the window timer fires. Any other event flushes the pending text first, so order is kept.
 */
import type { AgentEvent } from '../protocol/events.js';

type DeltaEvent = Extract<AgentEvent, { type: 'stream_delta' | 'thinking_delta' }>;

export interface CoalescerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: CoalescerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function isDelta(event: AgentEvent): event is DeltaEvent {
  return event.type === 'stream_delta' || event.type === 'thinking_delta';
}

export class DeltaCoalescer {
  private pending: DeltaEvent | undefined;
  /** Set while a burst is open: deltas arriving now wait for the timer. */
  private timer: unknown;
  private disposed = false;

  constructor(
    private readonly emit: (event: AgentEvent) => void,
    private readonly windowMs = 30,
    private readonly timers: CoalescerTimers = realTimers,
  ) {}

  push(event: AgentEvent): void {
    if (this.disposed) return;
    if (!isDelta(event)) {
      this.flush();
      this.emit(event);
      return;
    }
    if (event.delta === '') return;
    if (this.timer === undefined) {
      this.emit(event);
      this.openWindow();
      return;
    }
    if (this.pending && this.pending.type !== event.type) this.emitPending();
    // Spreading keeps the delta's other fields (a thinking delta's `turn`).
    this.pending = this.pending ? { ...this.pending, delta: this.pending.delta + event.delta } : { ...event };
  }

  /** Emits pending text now and closes the burst, so the next delta goes out at once. */
  flush(): void {
    this.closeWindow();
    this.emitPending();
  }

  /** Flushes and ignores everything afterwards. */
  dispose(): void {
    this.flush();
    this.disposed = true;
  }

  private openWindow(): void {
    this.timer = this.timers.setTimeout(() => this.onTimer(), this.windowMs);
  }

  private closeWindow(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private onTimer(): void {
    this.timer = undefined;
    if (!this.pending) return; // quiet window: the burst is over
    this.emitPending();
    // Text kept arriving during the window: keep merging for one more window.
    this.openWindow();
  }

  private emitPending(): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) this.emit(pending);
  }
}
