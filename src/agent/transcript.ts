/**
 * Where a run's conversation lives. A persisted run writes to the session store as it goes, so
 * a crash loses nothing already said; a subagent's run lives in memory only.
 */
import type { Logger } from 'pino';
import { type AnswerMarks, StreamingSaver } from '../store/streaming-saver.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../store/types.js';

/** How an answer ended: finished (no marks), interrupted, or interrupted because stopped. */
export interface AnswerEnd {
  interrupted?: true;
  stopped?: true;
  /** Actions the answer claims that no tool call of its run backs (stored with it). */
  unverifiedClaims?: string[];
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
  append(entries: BufferedMessage[]): Promise<void>;
  /** Appends `message` (marked interrupted until finished) and returns its writer. */
  beginAnswer(message: StoredMessage): Promise<AnswerWriter>;
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

  append(entries: BufferedMessage[]): Promise<void> {
    return this.store.append(this.sessionId, entries);
  }

  async beginAnswer(message: StoredMessage): Promise<AnswerWriter> {
    await this.store.append(this.sessionId, [
      { message: { ...message, interrupted: true }, display: true, context: true },
    ]);
    const saver = new StreamingSaver({
      store: this.store,
      sessionId: this.sessionId,
      messageId: message.id,
      intervalMs: this.saveIntervalMs,
      onError: (err: unknown) => this.logger.error({ err }, 'saving the streamed answer failed'),
    });
    return {
      progress: (content, thinking) => saver.update(content, thinking),
      finish: async (content, thinking, end) => {
        const marks: AnswerMarks = { interrupted: end.interrupted === true, stopped: end.stopped === true };
        const saved = await saver.finish(content, marks, thinking);
        if (!saved || !end.unverifiedClaims || end.unverifiedClaims.length === 0) return;
        try {
          await this.store.updateMessage(this.sessionId, message.id, {
            unverified_claims: end.unverifiedClaims,
          });
        } catch (err) {
          this.logger.error({ err }, 'saving the unverified claims of the answer failed');
        }
      },
    };
  }

  async setTokenCount(tokens: number): Promise<void> {
    await this.store.update(this.sessionId, {
      context_token_count: tokens,
      last_active: new Date().toISOString(),
    });
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

  async beginAnswer(): Promise<AnswerWriter> {
    return { progress: () => {}, finish: async () => {} };
  }

  async setTokenCount(): Promise<void> {}
}
