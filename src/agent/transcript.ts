/**
 * Where a run's conversation lives. A persisted run writes to the session store as it goes, so
 * a crash loses nothing already said; a subagent's run lives in memory only.
 */
import type { Logger } from 'pino';
import { type AnswerMarks, StreamingSaver } from '../store/streaming-saver.js';
import type { BufferedMessage, SessionPatch, SessionStore, StoredMessage } from '../store/types.js';

/** How an answer ended: finished (no marks), interrupted, or interrupted because stopped. */
export interface AnswerEnd {
  interrupted?: true;
  stopped?: true;
  /** Actions the answer claims that no tool call of its run backs (stored with it). */
  unverifiedClaims?: string[];
  /**
   * The session's token count after the call that gave the answer: stored with the answer, in
   * the same write when there is one, as `setTokenCount` would store it.
   */
  tokens?: number;
}

/** Persists an answer while it streams: at most about once a second, never per delta. */
export interface AnswerWriter {
  progress(content: string, thinking: string): void;
  finish(content: string, thinking: string, end: AnswerEnd): Promise<void>;
}

export interface Transcript {
  /** Session id for per-session state (scratchpad, todo) and tool contexts. */
  readonly sessionId: string;
  readonly persisted: boolean;
  loadContext(): Promise<StoredMessage[]>;
  /** Appends `entries`; `session` changes the session row in the same write. */
  append(entries: BufferedMessage[], session?: SessionPatch): Promise<void>;
  /**
   * Starts `message` and returns its writer. A persisted answer reaches the store, marked
   * interrupted, at most one save interval after its first progress, or whole when it finishes
   * sooner; either way it is stored when `finish` resolves.
   */
  beginAnswer(message: StoredMessage): AnswerWriter;
  setTokenCount(tokens: number): Promise<void>;
}

export class SessionTranscript implements Transcript {
  readonly persisted = true;

  constructor(
    readonly sessionId: string,
    private readonly store: SessionStore,
    private readonly logger: Logger,
    private readonly saveIntervalMs = 1000,
  ) {}

  loadContext(): Promise<StoredMessage[]> {
    return this.store.getContext(this.sessionId);
  }

  append(entries: BufferedMessage[], session?: SessionPatch): Promise<void> {
    return this.store.append(this.sessionId, entries, session);
  }

  beginAnswer(message: StoredMessage): AnswerWriter {
    return new StoredAnswer(message, this.sessionId, this.store, this.logger, this.saveIntervalMs);
  }

  async setTokenCount(tokens: number): Promise<void> {
    await this.store.update(this.sessionId, tokenPatch(tokens));
  }
}

/** The session row after an LLM call: its token count, and that it was active just now. */
function tokenPatch(tokens: number): SessionPatch {
  return { context_token_count: tokens, last_active: new Date().toISOString() };
}

/**
 * A streamed answer on its way to the store. Most answers finish within the save interval, so
 * the first write waits that long: an answer that is done by then is appended once, whole, where
 * appending it at its first text and then rewriting it would cost a second transaction and a
 * second indexing of its text. A longer answer is appended, marked interrupted, when the interval
 * is up, and from then on a `StreamingSaver` keeps it current; so a crash loses at most about one
 * interval of text either way.
 */
class StoredAnswer implements AnswerWriter {
  private content = '';
  private thinking = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The first write, once started; then the saver that keeps the row current. */
  private appended: Promise<StreamingSaver> | undefined;
  /** The saver, once the first write is done: each delta then goes to it directly. */
  private saver: StreamingSaver | undefined;
  private finished = false;

  constructor(
    private readonly message: StoredMessage,
    private readonly sessionId: string,
    private readonly store: SessionStore,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  progress(content: string, thinking: string): void {
    if (this.finished) return;
    this.content = content;
    this.thinking = thinking;
    // While the first write is under way, `appendPartial` sends what arrived meanwhile after it.
    if (this.saver) this.saver.update(content, thinking);
    if (this.appended) return;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.appended = this.appendPartial();
      // Reported here; `finish` meets the same failure again and throws it.
      this.appended.catch((err: unknown) => this.logger.error({ err }, 'saving the streamed answer failed'));
    }, this.intervalMs);
  }

  async finish(content: string, thinking: string, end: AnswerEnd): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const claims = end.unverifiedClaims && end.unverifiedClaims.length > 0 ? end.unverifiedClaims : undefined;
    const session = end.tokens === undefined ? undefined : tokenPatch(end.tokens);
    if (!this.appended) {
      // Done within the interval: one write of the finished answer, marks, claims and token count.
      await this.store.append(
        this.sessionId,
        [
          {
            message: {
              ...this.message,
              content,
              ...(thinking ? { thinking } : {}),
              ...(end.interrupted ? { interrupted: true } : {}),
              ...(end.stopped ? { stopped: true } : {}),
              ...(claims ? { unverified_claims: claims } : {}),
            },
            display: true,
            context: true,
          },
        ],
        session,
      );
      return;
    }
    const saver = await this.appended;
    const marks: AnswerMarks = { interrupted: end.interrupted === true, stopped: end.stopped === true };
    const saved = await saver.finish(content, marks, thinking);
    if (session) await this.store.update(this.sessionId, session);
    if (!saved || !claims) return;
    try {
      await this.store.updateMessage(this.sessionId, this.message.id, { unverified_claims: claims });
    } catch (err) {
      this.logger.error({ err }, 'saving the unverified claims of the answer failed');
    }
  }

  /** Appends the answer so far, marked interrupted, and hands the row to a saver. */
  private async appendPartial(): Promise<StreamingSaver> {
    const written = { content: this.content, thinking: this.thinking };
    await this.store.append(this.sessionId, [
      {
        message: {
          ...this.message,
          content: written.content,
          ...(written.thinking ? { thinking: written.thinking } : {}),
          interrupted: true,
        },
        display: true,
        context: true,
      },
    ]);
    const saver = new StreamingSaver({
      store: this.store,
      sessionId: this.sessionId,
      messageId: this.message.id,
      intervalMs: this.intervalMs,
      onError: (err: unknown) => this.logger.error({ err }, 'saving the streamed answer failed'),
    });
    // Text that arrived while the append was under way goes out with the saver's next write.
    if (this.content !== written.content || this.thinking !== written.thinking)
      saver.update(this.content, this.thinking);
    this.saver = saver;
    return saver;
  }
}

/**
 * A subagent's conversation: nothing is kept here. The run's own `context` array is the one copy
 * the loop reads, and it is gone when the subagent returns.
 */
export class MemoryTranscript implements Transcript {
  readonly persisted = false;

  constructor(readonly sessionId: string) {}

  async loadContext(): Promise<StoredMessage[]> {
    return [];
  }

  async append(): Promise<void> {}

  beginAnswer(): AnswerWriter {
    return { progress: () => {}, finish: async () => {} };
  }

  async setTokenCount(): Promise<void> {}
}
