/**
 * The recalls of one session, as the recalls panel shows them. The list is fetched again
 * whenever an event says it may have changed: a run ended (a recall run's outcome is known), a
 * recall run started (its next time moved on), or the agent scheduled, cancelled or skipped one.
 */
import { isTerminalEvent, type ServerEvent } from '@protocol/events.js';
import type { RecallSummary } from '@protocol/rest.js';
import { reactive } from 'vue';
import { ApiError, api, describeError } from './api.js';

export type RecallAction = 'cancel' | 'skip';

export interface RecallsState {
  /** Active recalls first (soonest first), then finished ones: the server's order. */
  recalls: RecallSummary[];
  /** The list was fetched at least once. */
  loaded: boolean;
  /** Why the list could not be fetched, for the person to read. */
  error: string | null;
  /** Recalls with a cancel or skip on its way, by id. */
  busy: Record<string, RecallAction>;
  /** Why the last cancel or skip of a recall failed, by id. */
  failures: Record<string, string>;
}

/** The built-in tools whose calls change the session's recalls (the event names only the tool). */
const recallTools: ReadonlySet<string> = new Set(['schedule_recall', 'manage_recall']);

/** Whether `event` may have changed the recalls of its session. */
export function changesRecalls(event: ServerEvent): boolean {
  if (isTerminalEvent(event)) return true;
  if (event.type === 'stream_start') return event.trigger === 'recall';
  return event.type === 'tool_call' && !event.is_subagent && recallTools.has(event.tool);
}

export class SessionRecalls {
  readonly state = reactive<RecallsState>({
    recalls: [],
    loaded: false,
    error: null,
    busy: {},
    failures: {},
  });

  private loading: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly sessionId: string) {}

  /**
   * Fetches the list. Calls while a fetch is on its way lead to one more fetch after it, so the
   * list ends up as fresh as the latest call asked; the promise resolves after that one.
   */
  refresh(): Promise<void> {
    this.again = true;
    this.loading ??= this.loadUntilFresh().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Refreshes when `event` may have changed the list. */
  observe(event: ServerEvent): void {
    if (changesRecalls(event)) void this.refresh();
  }

  /** Cancels a recall for good; a failure is kept in `failures` under its id. */
  cancel(recallId: string): Promise<void> {
    return this.change(recallId, 'cancel');
  }

  /** Skips only the next run of a recall (a one-shot recall is then done). */
  skip(recallId: string): Promise<void> {
    return this.change(recallId, 'skip');
  }

  /** Stops refreshing (the session is closed). */
  dispose(): void {
    this.closed = true;
  }

  private async loadUntilFresh(): Promise<void> {
    while (this.again && !this.closed) {
      this.again = false;
      try {
        const { recalls } = await api.listRecalls(this.sessionId);
        if (this.closed) return;
        this.state.recalls = recalls;
        this.state.error = null;
        this.state.loaded = true;
      } catch (err) {
        if (this.closed) return;
        this.state.error = `The recalls could not be loaded: ${describeError(err)}`;
      }
    }
  }

  private async change(recallId: string, action: RecallAction): Promise<void> {
    if (this.state.busy[recallId]) return;
    this.state.busy[recallId] = action;
    delete this.state.failures[recallId];
    try {
      const { recall } =
        action === 'cancel'
          ? await api.cancelRecall(this.sessionId, recallId)
          : await api.skipRecall(this.sessionId, recallId);
      const at = this.state.recalls.findIndex((r) => r.id === recall.id);
      if (at >= 0) this.state.recalls[at] = recall;
    } catch (err) {
      const what = action === 'cancel' ? 'cancelled' : 'skipped';
      const gone = err instanceof ApiError && (err.status === 404 || err.status === 409);
      this.state.failures[recallId] =
        `It could not be ${what}: ${describeError(err)}${gone ? ' The list now shows it as it is.' : ''}`;
    } finally {
      delete this.state.busy[recallId];
    }
    // The server's order (active first, soonest first) may have changed with it.
    await this.refresh();
  }
}
