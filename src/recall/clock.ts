/**
 * Time for the recall scheduler: the real clock in Navi, a clock the tests move by hand so that
 * a recall due next week fires without anyone waiting for it.
 */
export interface RecallClock {
  now(): Date;
  /** Calls `fn` after `ms`; returns the function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** setTimeout's largest delay; longer waits are taken in steps. */
export const MAX_TIMER_MS = 2_147_483_647;

export const systemClock: RecallClock = {
  now: () => new Date(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    // A pending recall never keeps a process alive that has nothing else to do.
    timer.unref();
    return () => clearTimeout(timer);
  },
};
