/**
 * One run of the agent in one session, seen from the server: it consumes `agent.runStream`,
 * stamps each event with `run_id` and a per-run `seq` (from 1), keeps every event for clients
 * that join late, fans events out to its subscribers, and brokers tool confirmations and MCP
 * servers' forms. The questions themselves (`tool_confirm_request`, `elicitation_request`) come
 * through the agent's stream like every other event, so they are ordered with the call's other
 * events by construction.
 *
 * Every stamped event is delivered synchronously to all subscribers at once and appended to
 * the replay buffer in the same step, so a subscriber added between two events receives the
 * buffer and then the live events with no gap and no duplicate.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AgentApi, ConfirmTicket, ElicitTicket, RunInput, RunSource } from '../agent/types.js';
import { checkElicitationAnswer } from '../mcp/elicitation-form.js';
import type { ErrorCode } from '../protocol/error-codes.js';
import {
  type AgentEvent,
  type ElicitationAction,
  isAfterRunEvent,
  isTerminalEvent,
  MCP_SAMPLING_TOOL,
  type ServerEvent,
} from '../protocol/events.js';
import type { ConfirmAnswer, ConfirmRequest, ElicitAnswer, ElicitRequest } from '../tools/types.js';
import { DeltaCoalescer, FlushClock } from './delta-coalescer.js';
import type { RunSubscriber } from './run-subscriber.js';

export interface AgentRunOptions {
  sessionId: string;
  agent: AgentApi;
  logger: Logger;
  /** How long a tool confirmation waits for an answer before it counts as refused. */
  confirmTimeoutMs: number;
  /** Window of the delta coalescer; 0 sends every delta as it comes. Ignored with `flushClock`. */
  coalesceWindowMs?: number;
  /** The clock that closes coalescing windows, shared by the runs of a registry. */
  flushClock?: FlushClock;
  runId?: string;
  /**
   * Whether a socket watches the session on another process (a cluster on one database): a
   * person there can answer a confirmation as well as one here.
   */
  watchedElsewhere?: () => boolean;
  /**
   * Awaited before the terminal event goes out (a cluster: the other processes must find the
   * session free by the time anyone sees the run end). Without it the end goes out at once.
   */
  beforeEnd?: (terminal: ServerEvent, json: string) => Promise<void>;
  /** Called once, right after the terminal event went out. */
  onEnd?: (run: AgentRun) => void;
  /**
   * Receives the events allowed after the end (`isAfterRunEvent`), stamped with this run's id
   * and the next seq; the registry hands them to whoever watches the session by then.
   */
  onAfterEnd?: (event: ServerEvent, json: string) => void;
}

interface PendingConfirmation {
  settle: (answer: ConfirmAnswer) => void;
}

interface PendingElicitation {
  request: ElicitRequest;
  settle: (answer: ElicitAnswer) => void;
}

export const NOBODY_TO_CONFIRM = 'nobody is connected to approve it';
export const STOPPED_BEFORE_CONFIRM = 'the run was stopped before anyone answered';
/** The clients whose runs nobody can answer a question for, as a reason names them. */
const CLIENT_NAMES: Record<RunSource, string> = {
  openai: 'the OpenAI-compatible API',
  mcp: "Navi's MCP server",
};
/** One reason per client: `it came through <client>, where <rest>`. */
const byClient = (rest: string): Record<RunSource, string> => ({
  openai: `it came through ${CLIENT_NAMES.openai}, where ${rest}`,
  mcp: `it came through ${CLIENT_NAMES.mcp}, where ${rest}`,
});
/** Why a run started by a client that cannot answer confirmations is refused one, by client. */
export const CLIENT_CANNOT_CONFIRM = byClient(
  "nobody can approve a tool (an autonomous profile, or the tool in the profile's trusted_tools, lets such a run use it)",
);
export const RECALL_CANNOT_CONFIRM =
  "a recall runs on its own with nobody to approve it (an autonomous profile, or the tool in the profile's trusted_tools, lets a recall use it)";

/**
 * Why a server's use of Navi's model (`mcp_sampling`) was refused without the person. Unlike a
 * tool's confirmation, no policy, profile or trusted_tools applies to it: only the person can allow
 * it, so nothing lets a run that cannot ask them allow it.
 */
export const RECALL_CANNOT_CONFIRM_SAMPLING =
  "a recall runs on its own with nobody to approve a server's use of Navi's model, and nothing lets a recall allow it";
export const CLIENT_CANNOT_CONFIRM_SAMPLING = byClient(
  "nobody can approve a server's use of Navi's model, and nothing lets such a run allow it",
);

/** Why an MCP server's form was declined without the person (docs/mcp.md#elicitation). */
export const NOBODY_TO_ELICIT = 'nobody is connected to answer it';
export const RECALL_CANNOT_ELICIT = "a recall runs on its own with nobody to fill in a server's form";
export const CLIENT_CANNOT_ELICIT = byClient("nobody can fill in a server's form");

const abortReason = (signal: AbortSignal | undefined): string => {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string' && reason !== '') return reason;
  return 'the server withdrew its request';
};

/**
 * Waits for the answer to one question kept in `waiting` under `key` (a question asked again
 * under the same key ends the earlier one). It ends on the first of: an answer through the
 * entry's `settle`, the time limit, or the request's signal (its call ended, the server took the
 * request back). Either way the entry goes, so a late answer finds nothing waiting.
 */
function waitForAnswer<A, W extends { settle: (answer: A) => void }>(
  waiting: Map<string, W>,
  key: string,
  question: {
    timeoutMs: number;
    signal: AbortSignal | undefined;
    entry: (settle: (answer: A) => void) => W;
    /** The answer when it ends without the person, for `reason`. */
    end: (reason: string) => A;
    withdrawnReason: () => string;
  },
): Promise<A> {
  const { signal, end } = question;
  waiting.get(key)?.settle(end('asked again'));
  return new Promise<A>((resolve) => {
    const seconds = Math.round(question.timeoutMs / 1000);
    const timer = setTimeout(
      () => settle(end(`nobody answered within ${seconds} seconds`)),
      question.timeoutMs,
    );
    timer.unref();
    const withdrawn = () => settle(end(question.withdrawnReason()));
    signal?.addEventListener('abort', withdrawn, { once: true });
    const settle = (answer: A) => {
      if (waiting.get(key)?.settle !== settle) return;
      clearTimeout(timer);
      signal?.removeEventListener('abort', withdrawn);
      waiting.delete(key);
      resolve(answer);
    };
    waiting.set(key, question.entry(settle));
  });
}

export class AgentRun {
  readonly runId: string;
  readonly sessionId: string;
  /** Resolves with the terminal event once the run has ended. Never rejects. */
  readonly done: Promise<ServerEvent>;

  private readonly log: Logger;
  private readonly replay: { event: ServerEvent; json: string }[] = [];
  private readonly subscribers = new Set<RunSubscriber>();
  private readonly pending = new Map<string, PendingConfirmation>();
  private readonly elicitations = new Map<string, PendingElicitation>();
  private readonly controller = new AbortController();
  private readonly coalescer: DeltaCoalescer;
  private seq = 0;
  private started = false;
  private trigger: RunInput['trigger'] = 'user';
  private source: RunSource | undefined;
  private terminal: ServerEvent | undefined;
  /** The terminal event went out: nobody subscribes any more; after-run events may follow. */
  private endDelivered = false;
  /** After-run events that came before the end went out (see `beforeEnd`). */
  private afterQueue: { event: ServerEvent; json: string }[] = [];
  private resolveDone!: (event: ServerEvent) => void;

  constructor(private readonly options: AgentRunOptions) {
    this.runId = options.runId ?? randomUUID();
    this.sessionId = options.sessionId;
    this.log = options.logger.child({ session_id: this.sessionId, run_id: this.runId });
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    const clock = options.flushClock ?? new FlushClock(options.coalesceWindowMs);
    this.coalescer = new DeltaCoalescer((event) => this.publish(event), clock);
  }

  get finished(): boolean {
    return this.terminal !== undefined;
  }

  /** The events sent so far, in order. */
  history(): readonly ServerEvent[] {
    return this.replay.map((entry) => entry.event);
  }

  /**
   * Sends the events so far to `subscriber`, then every later one. Subscribing to a finished
   * run only replays it.
   */
  subscribe(subscriber: RunSubscriber): void {
    for (const { event, json } of this.replay) {
      if (!subscriber.deliver(event, json)) return;
    }
    if (!this.endDelivered) this.subscribers.add(subscriber);
  }

  unsubscribe(subscriber: RunSubscriber): void {
    this.subscribers.delete(subscriber);
  }

  /** Starts consuming the agent's stream. Subscribers added before this miss nothing. */
  start(input: RunInput): void {
    if (this.started) throw new Error('run already started');
    this.started = true;
    this.trigger = input.trigger;
    this.source = input.source;
    void this.consume(input);
  }

  /** Asks the run to stop (cooperatively). False when it had already ended. */
  stop(): boolean {
    if (this.terminal) return false;
    if (!this.controller.signal.aborted) {
      this.log.info('stop requested');
      this.controller.abort();
    }
    this.refuseAllPending(STOPPED_BEFORE_CONFIRM);
    return true;
  }

  /**
   * Hands the person's answer to a form this run shows. `accept` values are checked against the
   * server's schema (defaults filled in, strings turned into its types); what does not fit is
   * refused with every problem by field, and the form stays open.
   */
  answerElicitation(
    elicitationId: string,
    action: ElicitationAction,
    values: Record<string, unknown> | undefined,
  ): true | { message: string; code: ErrorCode } {
    const pending = this.elicitations.get(elicitationId);
    if (!pending)
      return {
        message:
          'No form of this session waits for that elicitation_id: it was answered, declined or cancelled already. Answer only a form the chat shows as open.',
        code: 'NOT_FOUND',
      };
    if (action !== 'accept') {
      if (values !== undefined)
        return {
          message: `values go only with "accept"; send "${action}" without values.`,
          code: 'BAD_REQUEST',
        };
      pending.settle({ action });
      return true;
    }
    const check = checkElicitationAnswer(pending.request.schema, values ?? {});
    if (!check.ok)
      return {
        message: `The answer does not fit the form of ${pending.request.server}: ${check.problems.join('; ')}. Correct it and send it again; the form is still open.`,
        code: 'BAD_REQUEST',
      };
    pending.settle({ action: 'accept', content: check.content });
    return true;
  }

  /** Answers a confirmation this run is waiting for. False when no such call id is pending. */
  answer(callId: string, approved: boolean): boolean {
    const pending = this.pending.get(callId);
    if (!pending) return false;
    pending.settle(
      approved ? { approved: true } : { approved: false, reason: 'the user declined', declined: true },
    );
    return true;
  }

  /** Registers a question; the agent announces it in its stream when `asked` is true. */
  private readonly confirm = (request: ConfirmRequest): ConfirmTicket => {
    const refused = (reason: string): ConfirmTicket => ({
      asked: false,
      answer: Promise.resolve({ approved: false, reason }),
    });
    if (this.terminal || this.controller.signal.aborted) return refused(STOPPED_BEFORE_CONFIRM);
    const sampling = request.tool === MCP_SAMPLING_TOOL;
    // Even with a client watching: the person did not start this run and may be away.
    if (this.trigger === 'recall')
      return refused(sampling ? RECALL_CANNOT_CONFIRM_SAMPLING : RECALL_CANNOT_CONFIRM);
    // Even with a web client watching: the person asking through another client waits there.
    if (this.source)
      return refused((sampling ? CLIENT_CANNOT_CONFIRM_SAMPLING : CLIENT_CANNOT_CONFIRM)[this.source]);
    const someoneCanAnswer =
      [...this.subscribers].some((s) => s.kind === 'socket') || (this.options.watchedElsewhere?.() ?? false);
    if (!someoneCanAnswer) return refused(NOBODY_TO_CONFIRM);
    if (request.signal?.aborted) return refused(abortReason(request.signal));
    const answer = waitForAnswer<ConfirmAnswer, PendingConfirmation>(this.pending, request.callId, {
      timeoutMs: this.options.confirmTimeoutMs,
      signal: request.signal,
      entry: (settle) => ({ settle }),
      end: (reason) => ({ approved: false, reason }),
      withdrawnReason: () => abortReason(request.signal),
    });
    return { asked: true, answer };
  };

  /**
   * Registers a server's form; the agent announces it in its stream when `asked` is true. Only a
   * socket on this process can answer one: the processes of a cluster do not pass forms on yet.
   */
  private readonly elicit = (request: ElicitRequest): ElicitTicket => {
    const ended = (action: 'decline' | 'cancel', reason: string): ElicitTicket => ({
      asked: false,
      answer: Promise.resolve({ action, reason }),
    });
    if (this.terminal || this.controller.signal.aborted) return ended('cancel', STOPPED_BEFORE_CONFIRM);
    if (request.signal?.aborted) return ended('cancel', abortReason(request.signal));
    if (this.trigger === 'recall') return ended('decline', RECALL_CANNOT_ELICIT);
    if (this.source) return ended('decline', CLIENT_CANNOT_ELICIT[this.source]);
    if (![...this.subscribers].some((s) => s.kind === 'socket')) return ended('decline', NOBODY_TO_ELICIT);
    const answer = waitForAnswer<ElicitAnswer, PendingElicitation>(this.elicitations, request.id, {
      timeoutMs: this.options.confirmTimeoutMs,
      signal: request.signal,
      entry: (settle) => ({ request, settle }),
      end: (reason) => ({ action: 'cancel', reason }),
      // A stop ends the call too: the stop is the reason the person is told.
      withdrawnReason: () =>
        this.controller.signal.aborted ? STOPPED_BEFORE_CONFIRM : abortReason(request.signal),
    });
    return { asked: true, answer };
  };

  private async consume(input: RunInput): Promise<void> {
    try {
      const stream = this.options.agent.runStream(this.sessionId, input, {
        runId: this.runId,
        signal: this.controller.signal,
        confirm: this.confirm,
        elicit: this.elicit,
      });
      for await (const event of stream) {
        if (this.terminal) {
          if (isAfterRunEvent(event)) {
            this.seq += 1;
            const stamped: ServerEvent = { ...event, run_id: this.runId, seq: this.seq };
            const json = JSON.stringify(stamped);
            if (this.endDelivered) this.options.onAfterEnd?.(stamped, json);
            else this.afterQueue.push({ event: stamped, json });
            continue;
          }
          // Anything else after the terminal event breaks the agent contract; keep draining so
          // the agent's own clean-up runs, but clients never see it.
          this.log.warn({ type: event.type }, 'event after the end of the run dropped');
          continue;
        }
        this.coalescer.push(event);
      }
      if (!this.terminal) {
        this.log.error('agent stream ended without a terminal event');
        this.coalescer.push({
          type: 'error',
          message: 'The agent stopped without finishing.',
          recoverable: false,
          code: 'INTERNAL',
        });
      }
    } catch (err) {
      this.log.error({ err }, 'agent stream threw');
      if (!this.terminal) {
        this.coalescer.push({
          type: 'error',
          message: 'The agent failed unexpectedly; the server log has the details.',
          recoverable: false,
          code: 'INTERNAL',
        });
      }
    }
  }

  private publish(event: AgentEvent): void {
    if (this.terminal) return;
    this.seq += 1;
    const stamped: ServerEvent = { ...event, run_id: this.runId, seq: this.seq };
    const json = JSON.stringify(stamped);
    if (isTerminalEvent(event)) {
      this.finish(stamped, json);
      return;
    }
    this.replay.push({ event: stamped, json });
    for (const subscriber of this.subscribers) {
      if (!subscriber.deliver(stamped, json)) this.subscribers.delete(subscriber);
    }
  }

  private finish(terminal: ServerEvent, json: string): void {
    this.terminal = terminal;
    this.coalescer.dispose();
    this.refuseAllPending(STOPPED_BEFORE_CONFIRM);
    const beforeEnd = this.options.beforeEnd;
    if (!beforeEnd) {
      this.deliverEnd(terminal, json);
      return;
    }
    beforeEnd(terminal, json)
      .catch((err: unknown) => this.log.error({ err }, 'preparing the end of the run failed'))
      .finally(() => this.deliverEnd(terminal, json));
  }

  private deliverEnd(terminal: ServerEvent, json: string): void {
    this.replay.push({ event: terminal, json });
    for (const subscriber of this.subscribers) subscriber.deliver(terminal, json);
    this.subscribers.clear();
    this.endDelivered = true;
    try {
      this.options.onEnd?.(this);
    } finally {
      this.resolveDone(terminal);
      for (const { event, json: text } of this.afterQueue.splice(0)) this.options.onAfterEnd?.(event, text);
    }
  }

  private refuseAllPending(reason: string): void {
    for (const pending of [...this.pending.values()]) pending.settle({ approved: false, reason });
    for (const form of [...this.elicitations.values()]) form.settle({ action: 'cancel', reason });
  }
}
