/**
 * Removes expired session files at start-up and then every `intervalMs`. The timer is unref'd
 * so it never keeps the process alive; a failing sweep is logged and retried next time.
 */
import type { Logger } from 'pino';
import type { SessionFiles } from './session-files.js';

export class FileSweeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly files: SessionFiles,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    void this.sweepNow();
    this.timer = setInterval(() => void this.sweepNow(), this.intervalMs);
    this.timer.unref();
  }

  /** Runs one sweep (or joins the one in progress); resolves to the number of files removed. */
  sweepNow(): Promise<number> {
    this.running ??= this.files
      .sweep()
      .catch((err: unknown) => {
        this.logger.error({ err }, 'session file sweep failed');
        return 0;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
