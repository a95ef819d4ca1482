/**
 * A push-pull queue that is an async iterable: producers `push` and `close`, one consumer
 * iterates. The single stream primitive shared by the agent run fan-out, subagent event
 * forwarding and tests.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private failure: unknown;

  push(item: T): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w({ value: item, done: false });
    } else this.items.push(item);
  }

  /** Ends iteration after the queued items; with `error`, the consumer's next read throws it. */
  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    const w = this.waiter;
    if (w && this.items.length === 0) {
      this.waiter = undefined;
      if (error === undefined) w({ value: undefined, done: true });
      else w(Promise.reject(error) as never);
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get size(): number {
    return this.items.length;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.closed) {
          return this.failure === undefined
            ? Promise.resolve({ value: undefined, done: true })
            : Promise.reject(this.failure);
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiter = (r) => (r instanceof Promise ? r.then(resolve, reject) : resolve(r));
        });
      },
      return: () => {
        this.closed = true;
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
