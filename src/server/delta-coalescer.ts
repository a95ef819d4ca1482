/**
 * Merges bursts of `stream_delta` / `thinking_delta` events so a model that streams one token
 * per chunk does not cost one WebSocket frame per token. The first delta of a burst goes out at
 * once (the user sees the answer start without delay); later ones are merged and flushed when
 * the window closes. Any other event flushes the pending text first, so order is kept.
 *
 * Windows are closed by one `FlushClock` shared by every run of the server rather than a timer
 * per run: with hundreds of sessions streaming, one timer wakes once per window and flushes them
 * all in the same turn of the event loop, instead of hundreds of timers each waking it on its own.
 */
import type { AgentEvent } from '../protocol/events.js';

type DeltaEvent = Extract<AgentEvent, { type: 'stream_delta' | 'thinking_delta' }>;

/**
 * How long a burst merges before its text goes out. At reading speed (tens of tokens a second)
 * a frame carries a few tokens: each frame is a write system call per client, which costs more
 * than the few bytes it carries, while text that moves ten times a second still reads as a flow.
 */
export const DEFAULT_COALESCE_WINDOW_MS = 100;

export interface CoalescerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: CoalescerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * One timer for many coalescers: `join` asks to be called at the next tick, which comes at most
 * `windowMs` later. The timer runs only while someone waits for it.
 */
export class FlushClock {
  private readonly waiting = new Set<() => void>();
  private timer: unknown;

  constructor(
    readonly windowMs = DEFAULT_COALESCE_WINDOW_MS,
    private readonly timers: CoalescerTimers = realTimers,
  ) {}

  join(onTick: () => void): void {
    this.waiting.add(onTick);
    if (this.timer === undefined) this.timer = this.timers.setTimeout(() => this.tick(), this.windowMs);
  }

  leave(onTick: () => void): void {
    this.waiting.delete(onTick);
    if (this.waiting.size === 0 && this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Coalescers waiting for the next tick. */
  get size(): number {
    return this.waiting.size;
  }

  private tick(): void {
    this.timer = undefined;
    const due = [...this.waiting];
    this.waiting.clear();
    // A callback that joins again (text kept arriving) restarts the timer for the next window.
    // One that throws (a subscriber failing) must not leave the others' text waiting unsent:
    // they have left `waiting`, so nothing would flush them until their run's next event.
    let failure: { error: unknown } | undefined;
    for (const onTick of due) {
      try {
        onTick();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

function isDelta(event: AgentEvent): event is DeltaEvent {
  return event.type === 'stream_delta' || event.type === 'thinking_delta';
}

export class DeltaCoalescer {
  private pending: DeltaEvent | undefined;
  /** Deltas of the pending event, joined only when it goes out (one string per frame, not per token). */
  private parts: string[] = [];
  /** True while a burst is open: deltas arriving now wait for the clock. */
  private open = false;
  private disposed = false;
  private readonly onTick = () => this.onTimer();

  /** `clock` is shared by the coalescers of a server; a coalescer on its own gets its own. */
  constructor(
    private readonly emit: (event: AgentEvent) => void,
    private readonly clock: FlushClock = new FlushClock(),
  ) {}

  push(event: AgentEvent): void {
    if (this.disposed) return;
    if (!isDelta(event)) {
      this.flush();
      this.emit(event);
      return;
    }
    if (event.delta === '') return;
    if (!this.open) {
      this.emit(event);
      this.openWindow();
      return;
    }
    if (this.pending && this.pending.type !== event.type) this.emitPending();
    // The first delta of a frame keeps its other fields (a thinking delta's `turn`).
    if (!this.pending) this.pending = event;
    this.parts.push(event.delta);
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
    this.open = true;
    this.clock.join(this.onTick);
  }

  private closeWindow(): void {
    if (this.open) this.clock.leave(this.onTick);
    this.open = false;
  }

  private onTimer(): void {
    this.open = false;
    if (!this.pending) return; // quiet window: the burst is over
    this.emitPending();
    // Text kept arriving during the window: keep merging for one more window.
    this.openWindow();
  }

  private emitPending(): void {
    const pending = this.pending;
    if (!pending) return;
    const delta = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.pending = undefined;
    this.parts = [];
    this.emit({ ...pending, delta });
  }
}
