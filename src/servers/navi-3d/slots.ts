/**
 * How many OpenSCAD processes may run at once (OPENSCAD_MAX_RUNNING), across every session the
 * server serves: each takes a CPU core and often hundreds of megabytes, so a burst of calls
 * (three views of a render, several sessions compiling) queues instead of starving the machine.
 * Waiting is first come, first served, ends when the caller's time is up or the call is
 * cancelled, and a slot freed goes straight to the next caller in line.
 */

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
}

export class Slots {
  private running = 0;
  private readonly line: Waiter[] = [];

  /** `max`: how many may hold a slot at once, 1 or more. */
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`Slots needs a whole number ≥ 1, not ${max}`);
  }

  /** Slots held now. */
  get active(): number {
    return this.running;
  }

  /** Callers waiting for one. */
  get waiting(): number {
    return this.line.length;
  }

  /**
   * A slot, once one is free: its release, or `aborted` when `signal` fired first, or
   * `timedOut` when `timeoutMs` passed first. Either way nothing is held then.
   */
  take(signal: AbortSignal, timeoutMs: number): Promise<Release | 'aborted' | 'timedOut'> {
    if (signal.aborted) return Promise.resolve('aborted');
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (timeoutMs <= 0) return Promise.resolve('timedOut');
    return new Promise((resolve) => {
      const leave = (why: 'aborted' | 'timedOut') => {
        const at = this.line.indexOf(waiter);
        if (at < 0) return;
        this.line.splice(at, 1);
        settle();
        resolve(why);
      };
      const onAbort = () => leave('aborted');
      const timer = setTimeout(() => leave('timedOut'), timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: (release) => {
          settle();
          resolve(release);
        },
      };
      this.line.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.line.shift();
      // The slot passes on without being counted free, so no newcomer slips in between.
      if (next) next.grant(this.releaser());
      else this.running--;
    };
  }
}
