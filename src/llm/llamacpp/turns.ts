/**
 * One generation at a time: the backend has one context sequence, so calls take turns in the
 * order they came. Waiting for a turn ends early when the caller's signal fires.
 */

/** Thrown to a caller that gave up (its signal fired) while waiting for its turn. */
export class TurnAbandoned extends Error {
  constructor() {
    super('the call was cancelled while it waited for its turn');
    this.name = 'TurnAbandoned';
  }
}

export class Turns {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  /** Calls waiting or running now. */
  get pending(): number {
    return this.waiting;
  }

  /** Resolves with `release` once every earlier caller released its turn. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => mine);
    this.waiting++;
    let released = false;
    const releaseOnce = () => {
      if (released) return;
      released = true;
      this.waiting--;
      release();
    };
    return new Promise((resolve, reject) => {
      // The place in line is given up once the callers before it are done.
      const onAbort = () => {
        void previous.then(releaseOnce);
        reject(new TurnAbandoned());
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      void previous.then(() => {
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) return;
        resolve(releaseOnce);
      });
    });
  }
}
