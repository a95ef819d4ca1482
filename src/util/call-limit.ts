/**
 * The signal of one call with a time limit: aborted when the caller's signal is (a stop) or when
 * the call has run for `ms`, whichever comes first.
 *
 * The limit counts the call's own time, not a person's: while a question to the person is open
 * during the call (`hold`: a confirmation, an MCP server's form), it waits, and once the last
 * open question is answered it goes on with the time that was left. The wait for the person is
 * bounded by whoever asks (the run's confirmation timeout), so a held call cannot hang.
 *
 * One object is the controller, the stop listener and the timer's state: the executor makes one
 * per tool call, where AbortSignal.any or a few closures more show in `npm run bench`.
 */

/** The largest delay a Node timer takes. */
export const MAX_TIMER_MS = 2_147_483_647;

const timedOutAfter = (ms: number): Error => new Error(`timed out after ${ms} ms`);

export class CallLimit extends AbortController {
  /** Whether the time limit, not the caller's stop, ended the call. */
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  /** The time left when the timer last started, and when that was (performance.now()). */
  private left: number;
  private since: number;
  /** Questions open now; the timer runs only while there are none. */
  private asking = 0;
  private ended = false;

  /**
   * @param stop the caller's signal; its abort is forwarded with its reason.
   * @param ms the time limit.
   * @param reason what the signal is aborted with when the limit passes (by default an Error
   *   "timed out after <ms> ms").
   */
  constructor(
    private readonly stop: AbortSignal,
    readonly ms: number,
    private readonly reason: (ms: number) => unknown = timedOutAfter,
  ) {
    super();
    this.left = ms;
    this.since = performance.now();
    if (stop.aborted) this.abort(stop.reason);
    else stop.addEventListener('abort', this, { once: true });
    // Node fires a longer timer at once.
    this.timer = setTimeout(CallLimit.expire, Math.min(ms, MAX_TIMER_MS), this);
  }

  /** The stop signal's listener (this object is its own EventListenerObject); not for callers. */
  handleEvent(): void {
    this.abort(this.stop.reason);
  }

  /**
   * `asked` (a question to the person, already put), with the limit waiting until it settles.
   * Several may be open at once; the limit goes on when the last one settles.
   */
  hold<T>(asked: Promise<T>): Promise<T> {
    if (this.asking++ === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.left -= performance.now() - this.since;
    }
    return asked.finally(() => this.release());
  }

  /** The call is over, however it ended: no timer or listener is left behind, and no hold restarts the timer. */
  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stop.removeEventListener('abort', this);
  }

  private release(): void {
    if (--this.asking > 0 || this.ended || this.signal.aborted) return;
    this.since = performance.now();
    this.timer = setTimeout(CallLimit.expire, Math.min(Math.max(0, this.left), MAX_TIMER_MS), this);
  }

  /** The timer's callback: static, so that no closure is made per call. */
  private static expire(limit: CallLimit): void {
    limit.timer = undefined;
    limit.timedOut = true;
    limit.abort(limit.reason(limit.ms));
  }
}
