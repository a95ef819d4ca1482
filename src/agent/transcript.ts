/**
 * Where a run's conversation lives. A persisted run writes to the session store as it goes, so
 * a crash loses nothing already said; a subagent's run lives in memory only (DESIGN §3).
 */
import type { Logger } from 'pino';
import { StreamingSaver } from '../store/streaming-saver.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../store/types.js';

/** Persists an answer while it streams: at most about once a second, never per delta. */
export interface AnswerWriter {
  progress(content: string, thinking: string): void;
  finish(content: string, thinking: string, metadata: Record<string, unknown>): Promise<void>;
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
    const metadata = { ...message.metadata, interrupted: true };
    await this.store.append(this.sessionId, [
      { message: { ...message, metadata }, display: true, context: true },
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
      finish: async (content, thinking, finalMetadata) => {
        await saver.finish(content, { ...message.metadata, ...finalMetadata }, thinking);
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

/** A subagent's conversation: memory only, gone when the subagent returns. */
export class MemoryTranscript implements Transcript {
  readonly persisted = false;
  private readonly context: StoredMessage[] = [];
  tokens = 0;

  constructor(readonly sessionId: string) {}

  async loadContext(): Promise<StoredMessage[]> {
    return [...this.context];
  }

  async append(entries: BufferedMessage[]): Promise<void> {
    for (const e of entries) if (e.context) this.context.push(e.message);
  }

  async beginAnswer(message: StoredMessage): Promise<AnswerWriter> {
    return {
      progress: () => {},
      finish: async (content, thinking, metadata) => {
        this.context.push({
          ...message,
          content,
          ...(thinking ? { thinking } : {}),
          metadata: { ...message.metadata, ...metadata },
        });
      },
    };
  }

  async setTokenCount(tokens: number): Promise<void> {
    this.tokens = tokens;
  }
}
