/**
 * Requests this process sent to the one running a session's run (stop it, take a confirmation
 * answer), each waiting for its reply notice by id, for a bounded time. A reply that never
 * comes resolves as `'timeout'`, so no caller hangs on a process that went quiet.
 */
import { randomUUID } from 'node:crypto';

export class PendingReplies {
  private readonly waiting = new Map<string, (ok: boolean) => void>();

  /** A new request id and its reply: the other process's `ok`, or `'timeout'` after `timeoutMs`. */
  open(timeoutMs: number): { id: string; reply: Promise<boolean | 'timeout'> } {
    const id = randomUUID();
    const reply = new Promise<boolean | 'timeout'>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve('timeout');
      }, timeoutMs);
      timer.unref();
      this.waiting.set(id, (ok) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(ok);
      });
    });
    return { id, reply };
  }

  /** The reply to request `id` came; an unknown or already settled id is ignored. */
  settle(id: string, ok: boolean): void {
    this.waiting.get(id)?.(ok);
  }

  /** Closing: every request still waiting is answered "not done". */
  refuseAll(): void {
    for (const resolve of [...this.waiting.values()]) resolve(false);
  }
}
