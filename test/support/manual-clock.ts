/**
 * A recall clock the test moves by hand: `advance` jumps forward, firing every timer that comes
 * due on the way in order, and lets the scheduler's asynchronous work settle after each.
 */
import type { RecallClock } from '../../src/recall/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  seq: number;
}

/** Lets pending promise chains and I/O callbacks (SQLite, HTTP, WebSocket) run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

export class ManualClock implements RecallClock {
  private time: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start: Date | string) {
    this.time = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.time);
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.time + Math.max(0, ms), fn, seq: this.seq++ };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers waiting, for assertions such as "nothing is armed". */
  get pending(): number {
    return this.timers.length;
  }

  /** When the soonest timer fires, or undefined. */
  nextTimerAt(): Date | undefined {
    const next = this.soonest();
    return next ? new Date(next.at) : undefined;
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(new Date(this.time + ms));
  }

  async advanceTo(target: Date | string): Promise<void> {
    const end = new Date(target).getTime();
    await settle();
    for (;;) {
      const next = this.soonest();
      if (!next || next.at > end) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
    this.time = Math.max(this.time, end);
    await settle();
  }

  private soonest(): Timer | undefined {
    return [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
  }
}
