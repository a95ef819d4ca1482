/**
 * Counts wrong pairing codes. A code has 60 bits and lives minutes, so guessing is already
 * hopeless; the limit also keeps a flood of guesses from costing database work. While it is
 * reached, every attempt is refused, the right code too: otherwise guessing could go on.
 */
export class PairingLimiter {
  private failures: number[] = [];

  constructor(
    private readonly maxFailures = 20,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while too many wrong codes were tried within the window. */
  blocked(): boolean {
    const since = this.now() - this.windowMs;
    this.failures = this.failures.filter((at) => at > since);
    return this.failures.length >= this.maxFailures;
  }

  recordFailure(): void {
    this.failures.push(this.now());
  }
}
