/** What the recall scheduler asks of the server, and what tools and routes ask of it. */
import type { RecallOutcome, RecallSummary } from '../protocol/rest.js';
import type { RecallOrigin } from '../tools/types.js';

/** One occurrence of a recall, handed to the runner to start a headless run. */
export interface RecallFire {
  recall_id: string;
  session_id: string;
  prompt: string;
  chain: number;
  /** When this occurrence was due (ISO). */
  scheduled_for: string;
  /** How late it starts, when more than a few seconds. */
  late_ms?: number;
}

export type RecallStart =
  /** The run started; `done` resolves with how it ended. */
  | { kind: 'started'; done: Promise<RecallOutcome> }
  /** The session is in a run; `idle` resolves when that run has ended. */
  | { kind: 'busy'; idle: Promise<void> }
  /**
   * No run can start any more (the server is shutting down): the recall stays due, and the
   * scheduler stops until it is started again.
   */
  | { kind: 'closed' };

/** Starts recall runs: the server's run registry, seen from the scheduler. */
export interface RecallRunner {
  /** Async: with several processes, whether the session is free is asked of the database. */
  start(fire: RecallFire): Promise<RecallStart>;
}

export interface ScheduleRequest {
  sessionId: string;
  prompt: string;
  when: Record<string, unknown>;
  /** Set when a recall run schedules this one: the new recall continues its chain. */
  origin?: RecallOrigin;
}

export type RecallChange =
  | { ok: true; recall: RecallSummary }
  | { ok: false; code: 'RECALL_NOT_FOUND' | 'RECALL_FINISHED'; message: string };

/** The recall operations tools and REST routes use; the scheduler implements them. */
export interface RecallService {
  /** The zone times are read and shown in when a recall names none. */
  readonly timeZone: string;
  /** The scheduler's time (a test's clock in tests), for "in 2 hours". */
  now(): Date;
  schedule(
    request: ScheduleRequest,
  ): Promise<{ ok: true; recall: RecallSummary } | { ok: false; error: string }>;
  list(sessionId: string): Promise<RecallSummary[]>;
  /** `id` may be a unique prefix of at least 6 characters (small models shorten UUIDs). */
  cancel(sessionId: string, id: string): Promise<RecallChange>;
  /** Skips the next occurrence only; a one-shot recall is thereby finished. */
  skip(sessionId: string, id: string): Promise<RecallChange>;
}
