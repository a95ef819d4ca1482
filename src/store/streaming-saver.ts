/**
 * Keeps a growing assistant answer on disk while it streams, so a crash or restart loses at most
 * about one interval of text, without a write per token: deltas arrive hundreds of times a second
 * and each write is a transaction.
 *
 * Writes are serialised (a new one starts only after the previous settled), because an
 * asynchronous store such as PostgreSQL could otherwise apply an older snapshot last.
 */
import type { MessagePatch, SessionStore } from './types.js';

/** How a streamed answer ended: each mark is set (true) or removed (false). */
export type AnswerMarks = Pick<MessagePatch, 'interrupted' | 'stopped'>;

/** The timer functions the saver uses; tests pass fake ones. */
export interface SaverClock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: SaverClock = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface StreamingSaverOptions {
  store: Pick<SessionStore, 'updateMessage'>;
  sessionId: string;
  /** The message, already appended, whose content grows. */
  messageId: string;
  /** Longest time between a change and its write. Default 1000. */
  intervalMs?: number;
  clock?: SaverClock;
  /** Told about every failed write; the saver itself never throws them. Default: a process warning. */
  onError?: (err: unknown) => void;
}

function warn(err: unknown): void {
  process.emitWarning(`StreamingSaver: saving a streamed answer failed: ${String(err)}`);
}

export class StreamingSaver {
  private readonly intervalMs: number;
  private readonly clock: SaverClock;
  private readonly onError: (err: unknown) => void;
  private content: string | null = null;
  private thinking: string | undefined;
  private marks: AnswerMarks | undefined;
  private dirty = false;
  private finished = false;
  private timer: unknown;
  private inFlight: Promise<boolean> | undefined;

  constructor(private readonly options: StreamingSaverOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.clock = options.clock ?? realClock;
    this.onError = options.onError ?? warn;
  }

  /**
   * Records the answer so far (the whole text, not a delta). Cheap: at most starts a timer.
   * An empty `thinking` counts as none, so no empty reasoning block is stored.
   */
  update(content: string, thinking?: string): void {
    if (this.finished) return;
    this.content = content;
    if (thinking) this.thinking = thinking;
    this.dirty = true;
    if (this.timer === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.intervalMs);
    }
  }

  /** Writes what is pending now. Resolves false when the write failed (already reported). */
  async flush(): Promise<boolean> {
    this.cancelTimer();
    // Wait for any earlier write, then write only if something changed meanwhile.
    while (this.inFlight) await this.inFlight;
    if (!this.dirty) return true;
    this.dirty = false;
    const patch: MessagePatch = { content: this.content };
    if (this.thinking !== undefined) patch.thinking = this.thinking;
    if (this.marks !== undefined) Object.assign(patch, this.marks);
    // Cleared as the write settles, before anyone waiting on it resumes.
    const write = this.write(patch).then((ok) => {
      this.inFlight = undefined;
      return ok;
    });
    this.inFlight = write;
    return write;
  }

  /**
   * Writes the final answer and its `marks` (e.g. dropping the `interrupted` mark of a streamed
   * answer that finished), and stops: later updates are ignored. Resolves false when that write
   * failed (reported through `onError`, never thrown).
   */
  async finish(finalContent: string | null, marks?: AnswerMarks, thinking?: string): Promise<boolean> {
    this.finished = true;
    this.cancelTimer();
    this.content = finalContent;
    if (thinking) this.thinking = thinking;
    if (marks !== undefined) this.marks = marks;
    this.dirty = true;
    return this.flush();
  }

  private async write(patch: MessagePatch): Promise<boolean> {
    try {
      await this.options.store.updateMessage(this.options.sessionId, this.options.messageId, patch);
      return true;
    } catch (err) {
      try {
        this.onError(err);
      } catch {
        // A failing reporter must not turn into a failure of the stream it reports on.
      }
      return false;
    }
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
