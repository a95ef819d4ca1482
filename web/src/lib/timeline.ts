/**
 * The live chat of one session: history entries plus the events of runs, applied in order.
 *
 * Events are de-duplicated by `run_id` + `seq`, so the replay the server sends on every
 * (re)connection never shows twice. Text deltas are gathered in plain strings and moved into
 * the reactive entries once per animation frame, so a fast stream costs one render per frame.
 *
 * Entries of a run get the ids of the messages they show from its events: `stream_start` names
 * the user message (the bubble this client pushed, an edit's new text, a recall's prompt), and
 * `stream_end` / `stream_stopped` the final answer. What no event names (a plan, text said
 * before tool calls, the partial answer of a failed run) is left for a read of the session.
 */

import { reactive } from 'vue';
import type { EventOf, ServerEvent } from '../../../src/protocol/events.js';
import type { RecallStamp } from '../../../src/protocol/rest.js';
import {
  type AssistantEntry,
  type ChatEntry,
  newKey,
  newToolEntry,
  type ThinkingEntry,
  type ToolEntry,
  type UserEntry,
} from './entries.js';
import { errorHint, failedTurnEntry } from './failed-turn.js';
import { type PendingRewind, rewind } from './rewind.js';
import { applyServerAsk } from './server-asks.js';

/** An entry showing a stored message a search can point at, which has no id yet. */
function shownUnnamed(entry: ChatEntry): boolean {
  if (entry.messageId !== undefined) return false;
  return (
    entry.kind === 'plan' || entry.kind === 'user' || (entry.kind === 'assistant' && entry.text.trim() !== '')
  );
}

/** Whether a saved recall prompt is the one of the run `start` begins (one occurrence each). */
function sameOccurrence(stamp: RecallStamp | undefined, start: EventOf<'stream_start'>): boolean {
  return (
    stamp !== undefined && stamp.recall_id === start.recall_id && stamp.scheduled_for === start.scheduled_for
  );
}

/** The bubble of a recall run's prompt, as the stored message shows it after a reload. */
function recallPrompt(start: EventOf<'stream_start'>): UserEntry {
  const entry: UserEntry = {
    kind: 'user',
    key: newKey('user'),
    text: start.prompt ?? '',
    images: [],
    files: [],
    ...(start.user_message_id !== undefined ? { messageId: start.user_message_id } : {}),
  };
  if (start.recall_id !== undefined && start.scheduled_for !== undefined) {
    entry.recall = {
      recall_id: start.recall_id,
      scheduled_for: start.scheduled_for,
      ...(start.late_ms !== undefined ? { late_ms: start.late_ms } : {}),
    };
  }
  return entry;
}

export interface TimelineState {
  entries: ChatEntry[];
  running: boolean;
  runId: string | null;
  /** The recall that started the run in progress, if a recall did. */
  recallId: string | null;
  contextTokens: number | null;
  maxContextTokens: number | null;
  profileId: string | null;
}

export type FrameScheduler = (callback: () => void) => void;

const defaultScheduler: FrameScheduler = (callback) => {
  // rAF does not run in hidden tabs; the timeout keeps text flowing there too.
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    callback();
  };
  requestAnimationFrame(run);
  setTimeout(run, 250);
};

export class Timeline {
  readonly state: TimelineState = reactive({
    entries: [],
    running: false,
    runId: null,
    recallId: null,
    contextTokens: null,
    maxContextTokens: null,
    profileId: null,
  });

  private seen = new Set<string>();
  private thinking: ThinkingEntry | null = null;
  /** The LLM call (`turn`) the open thinking entry belongs to. */
  private thinkingTurn: number | undefined;
  /** The last thinking entry streamed live in this run, and its turn: `turn_thinking` closes it. */
  private shownThinking: ThinkingEntry | null = null;
  private shownTurn: number | undefined;
  private answer: AssistantEntry | null = null;
  /** The last answer bubble of the run in progress: where a claim flag goes. */
  private runAnswer: AssistantEntry | null = null;
  /** Claims flagged before the answer they belong to was shown (`stream_end` brings its text). */
  private pendingClaims: string[] | null = null;
  private pending = new Map<ThinkingEntry | AssistantEntry, string>();
  private flushScheduled = false;
  /** The regenerate or edit this client sent, until its `history_rewound` (or refusal) comes. */
  private rewindRequest: PendingRewind | null = null;
  /** A rewind made elsewhere left this view unsure of what the session holds: reload it. */
  private stale = false;
  /** The bubble of the message this client sent last, until its run's `stream_start` names it. */
  private sent: UserEntry | null = null;
  /** The id `stream_start` gave an edit's new message, for its bubble once `history_rewound` shows it. */
  private editedId: string | undefined;
  /** Entries the run in progress added, to tell at its end whether all got their ids. */
  private runEntries: ChatEntry[] = [];
  /** The run that just ended showed messages no event named: only a read can. */
  private unnamed = false;

  constructor(private readonly schedule: FrameScheduler = defaultScheduler) {}

  /** Replaces everything with history; forgets seen events (a new connection replays from seq 1). */
  reset(entries: ChatEntry[]): void {
    this.pending.clear();
    this.seen.clear();
    this.thinking = null;
    this.shownThinking = null;
    this.shownTurn = undefined;
    this.answer = null;
    this.runAnswer = null;
    this.pendingClaims = null;
    this.rewindRequest = null;
    this.stale = false;
    this.sent = null;
    this.editedId = undefined;
    this.runEntries = [];
    this.unnamed = false;
    this.state.entries.splice(0, this.state.entries.length, ...entries.map((entry) => reactive(entry)));
    this.state.running = false;
    this.state.runId = null;
    this.state.recallId = null;
  }

  /** This client sent a regenerate or an edit: its `history_rewound` is expected. */
  expectRewind(request: PendingRewind | null): void {
    this.rewindRequest = request;
  }

  /** True once if a rewind made elsewhere means the view should be read again from the server. */
  takeStale(): boolean {
    const stale = this.stale;
    this.stale = false;
    return stale;
  }

  /**
   * True once if the run that just ended showed messages its events could not name (a plan, text
   * said before tool calls, a failed run's partial answer): reading the session names them.
   */
  takeUnnamed(): boolean {
    const unnamed = this.unnamed;
    this.unnamed = false;
    return unnamed;
  }

  /** Adds an entry created by this client, or one of the run in progress. */
  push<T extends ChatEntry>(entry: T): T {
    const live = reactive(entry) as T;
    this.state.entries.push(live);
    if (this.state.running) this.runEntries.push(live);
    return live;
  }

  /** Adds the bubble of a message this client sends: the `stream_start` of its run names it. */
  pushSent(entry: UserEntry): UserEntry {
    const live = this.push(entry);
    this.sent = live;
    return live;
  }

  /**
   * A run this client did not see start is being replayed from its first event, and the
   * history already holds what that run saved so far: drop that part, the replay rebuilds it.
   * A user's run starts after its user message; a recall run at its saved prompt, which the
   * replayed `stream_start` shows again; a form run has no message of its own, so its part is
   * what follows the last finished answer. False when the run's start is not in the view (it is
   * on an older page of the history): all of the view was the run's.
   */
  dropUnfinishedRun(start: EventOf<'stream_start'>): boolean {
    const entries = this.state.entries;
    const trigger = start.trigger;
    if (trigger === 'recall') {
      const prompt = entries.findLastIndex((e) => e.kind === 'user' && sameOccurrence(e.recall, start));
      if (prompt >= 0) {
        entries.splice(prompt);
        return true;
      }
    }
    let i = entries.length - 1;
    for (; i >= 0; i -= 1) {
      const entry = entries[i];
      if (!entry || entry.kind === 'user') break;
      if (trigger !== 'user' && entry.kind === 'assistant' && !entry.interrupted) break;
      if (trigger !== 'user' && entry.kind === 'notice') break;
    }
    entries.splice(i + 1);
    return i >= 0;
  }

  /** Every tool card, nested ones included. */
  cards(): ToolEntry[] {
    return [...this.allCards()];
  }

  /** Applies one event; false when it was a duplicate. */
  apply(event: ServerEvent): boolean {
    if (event.run_id !== undefined && event.seq !== undefined) {
      const id = `${event.run_id}#${event.seq}`;
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    if (applyServerAsk(event, () => this.cards())) return true;
    switch (event.type) {
      case 'stream_start':
        this.flush();
        this.state.running = true;
        this.state.runId = event.run_id ?? null;
        this.state.recallId = event.recall_id ?? null;
        this.thinking = null;
        this.shownThinking = null;
        this.shownTurn = undefined;
        this.answer = null;
        this.runAnswer = null;
        this.pendingClaims = null;
        this.runEntries = [];
        // Nobody sent a recall's prompt from a client: the event brings it, to show as its bubble.
        if (event.trigger === 'recall' && event.prompt !== undefined) this.push(recallPrompt(event));
        else this.nameUserMessage(event);
        break;
      case 'thinking_delta': {
        if (!this.thinking || this.thinking.done) {
          this.thinking = this.push<ThinkingEntry>({
            kind: 'thinking',
            key: newKey('thinking'),
            text: '',
            done: false,
          });
          this.thinkingTurn = event.turn;
        }
        this.append(this.thinking, event.delta);
        break;
      }
      case 'thinking_end':
        this.closeThinking();
        break;
      case 'turn_thinking': {
        if (event.is_subagent) {
          const parent = this.parentCard(event.parent_call_id);
          const entry: ThinkingEntry = {
            kind: 'thinking',
            key: newKey('thinking'),
            text: event.thinking,
            done: true,
          };
          if (parent) parent.children.push(entry);
          else this.push(entry);
          break;
        }
        this.flush();
        if (event.turn !== undefined && this.thinking && this.thinkingTurn === event.turn)
          this.closeThinking();
        // The reasoning of this turn was already streamed as deltas: the block only closes it.
        if (event.turn !== undefined && this.shownTurn === event.turn && this.shownThinking) {
          this.shownThinking.done = true;
          break;
        }
        this.closeThinking();
        this.push<ThinkingEntry>({
          kind: 'thinking',
          key: newKey('thinking'),
          text: event.thinking,
          done: true,
        });
        break;
      }
      case 'plan_ready':
        this.closeThinking();
        this.push({ kind: 'plan', key: newKey('plan'), plan: event.plan });
        break;
      case 'tool_started': {
        const card = this.findCard(event.call_id);
        if (card) {
          card.args = event.args;
          break;
        }
        const entry = newToolEntry(event.call_id, event.tool, event.args, event.is_subagent);
        if (event.is_subagent) {
          const parent = this.parentCard(event.parent_call_id);
          if (parent) {
            parent.children.push(entry);
            break;
          }
        } else {
          // Text after the tools is a new answer bubble, below the cards.
          this.closeThinking();
          this.closeAnswer(false);
        }
        this.push(entry);
        break;
      }
      case 'tool_confirm_request': {
        let card = this.findCard(event.call_id);
        if (!card) {
          const entry = newToolEntry(
            event.call_id,
            event.tool,
            event.args,
            event.parent_call_id !== undefined,
          );
          const parent = this.parentCard(event.parent_call_id);
          if (parent) {
            parent.children.push(entry);
            card = parent.children[parent.children.length - 1] as ToolEntry;
          } else {
            this.closeThinking();
            this.closeAnswer(false);
            card = this.push(entry);
          }
        }
        card.confirm = 'pending';
        break;
      }
      case 'tool_call': {
        let card = this.findCard(event.call_id);
        if (!card) {
          const parent = event.is_subagent ? this.parentCard(event.parent_call_id) : undefined;
          const entry = newToolEntry(event.call_id, event.tool, event.args, event.is_subagent);
          if (parent) {
            parent.children.push(entry);
            card = parent.children[parent.children.length - 1] as ToolEntry;
          } else {
            card = this.push(entry);
          }
        }
        card.args = event.args;
        card.result = event.result;
        card.status = event.success ? 'done' : 'failed';
        card.outcome = event.outcome;
        card.metadata = event.metadata ?? {};
        card.confirm = null;
        break;
      }
      case 'stream_delta': {
        if (!this.answer) {
          this.closeThinking();
          this.answer = this.push<AssistantEntry>({
            kind: 'assistant',
            key: newKey('answer'),
            text: '',
            streaming: true,
            interrupted: false,
          });
        }
        this.append(this.answer, event.delta);
        break;
      }
      case 'stream_end': {
        this.flush();
        this.closeThinking();
        if (this.answer) {
          if (event.content && this.answer.text !== event.content) this.answer.text = event.content;
        } else if (event.content && !this.endsWithAnswer()) {
          this.answer = this.push<AssistantEntry>({
            kind: 'assistant',
            key: newKey('answer'),
            text: event.content,
            streaming: false,
            interrupted: false,
          });
        }
        if (this.pendingClaims) {
          const answer = this.answer ?? this.runAnswer;
          if (answer) answer.unverifiedClaims = this.pendingClaims;
          this.pendingClaims = null;
        }
        this.nameAnswer(event.message_id);
        this.closeAnswer(false);
        this.state.contextTokens = event.context_tokens;
        this.state.maxContextTokens = event.max_context_tokens;
        this.endRun();
        break;
      }
      case 'stream_stopped': {
        this.flush();
        this.closeThinking();
        if (!this.answer && event.content) {
          this.answer = this.push<AssistantEntry>({
            kind: 'assistant',
            key: newKey('answer'),
            text: event.content,
            streaming: true,
            interrupted: false,
          });
        }
        this.nameAnswer(event.message_id);
        this.closeAnswer(true);
        this.push({ kind: 'notice', key: newKey('notice'), text: 'Stopped. The partial answer was saved.' });
        if (event.context_tokens !== undefined) this.state.contextTokens = event.context_tokens;
        if (event.max_context_tokens) this.state.maxContextTokens = event.max_context_tokens;
        this.endRun();
        break;
      }
      case 'history_rewound': {
        this.flush();
        const request = this.rewindRequest;
        this.rewindRequest = null;
        if (rewind(this.state.entries, event, request)) this.stale = true;
        if (request?.kind === 'edit') {
          const replacement = this.push(request.replacement);
          if (this.editedId !== undefined) replacement.messageId = this.editedId;
        }
        this.editedId = undefined;
        break;
      }
      case 'context_compressed':
        // The server's estimate of what was kept (an older server sends none: it counted 0) until
        // the next LLM call reports the real figure; the session holds the same, so a reload agrees.
        this.state.contextTokens = event.context_tokens ?? 0;
        this.push({
          kind: 'notice',
          key: newKey('notice'),
          text: `Context compressed: ${event.messages_before} → ${event.messages_after} messages kept for the model.`,
        });
        break;
      case 'notice':
        this.flush();
        this.push({ kind: 'notice', key: newKey('notice'), text: event.message, code: event.code });
        break;
      case 'claim_unverified': {
        // The flag belongs to the answer just finished: the one streaming, else the run's last.
        const answer = this.answer ?? this.runAnswer;
        if (answer) answer.unverifiedClaims = [...event.claims];
        else this.pendingClaims = [...event.claims];
        break;
      }
      case 'profile_switched':
        this.state.profileId = event.profile_id;
        this.push({
          kind: 'notice',
          key: newKey('notice'),
          text: `Switched to profile “${event.profile_name}”.`,
        });
        break;
      case 'error': {
        this.flush();
        // A run that ended with this error is a failed turn (stored, with Retry); a refusal is not.
        if (!event.recoverable && event.run_id !== undefined) {
          this.push(failedTurnEntry(event.message, event.code));
        } else {
          if (event.run_id === undefined) {
            // A refusal: the command it answers started no run, so no stream_start names its bubble.
            this.rewindRequest = null;
            this.sent = null;
          }
          this.push({
            kind: 'error',
            key: newKey('error'),
            message: event.message,
            hint: errorHint(event.code, event.recoverable),
            ...(event.code !== undefined ? { code: event.code } : {}),
          });
        }
        if (!event.recoverable && (event.run_id === undefined || event.run_id === this.state.runId)) {
          this.closeThinking();
          this.closeAnswer(true);
          this.endRun();
        }
        break;
      }
    }
    return true;
  }

  /** Moves gathered deltas into the entries now (before a terminal event, or on a frame). */
  flush(): void {
    for (const [entry, text] of this.pending) entry.text += text;
    this.pending.clear();
  }

  private append(entry: ThinkingEntry | AssistantEntry, delta: string): void {
    this.pending.set(entry, (this.pending.get(entry) ?? '') + delta);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.schedule(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private closeThinking(): void {
    this.flush();
    if (this.thinking) {
      this.thinking.done = true;
      this.shownThinking = this.thinking;
      this.shownTurn = this.thinkingTurn;
    }
    this.thinking = null;
    this.thinkingTurn = undefined;
  }

  private closeAnswer(interrupted: boolean): void {
    this.flush();
    if (this.answer) {
      this.answer.streaming = false;
      if (interrupted) this.answer.interrupted = true;
      this.runAnswer = this.answer;
    }
    this.answer = null;
  }

  private endRun(): void {
    for (const card of this.allCards()) {
      if (card.status === 'running') card.status = 'cancelled';
      if (card.confirm === 'pending') card.confirm = null;
    }
    this.unnamed = this.runEntries.some(shownUnnamed);
    this.runEntries = [];
    this.state.running = false;
    this.state.recallId = null;
  }

  /**
   * Gives the run's user message its id: the bubble this client sent, or (an edit) the new text's
   * bubble once `history_rewound` shows it. A regenerate answers a message already shown with its
   * id, and a form's submission has no bubble. Any other message is not in this view (another tab
   * or a REST call sent it): the view reads the session again when the run is over.
   */
  private nameUserMessage(start: EventOf<'stream_start'>): void {
    const id = start.user_message_id;
    const sent = this.sent;
    this.sent = null;
    if (id === undefined || start.trigger === 'form') return;
    if (this.state.entries.some((entry) => entry.messageId === id)) return;
    if (this.rewindRequest?.kind === 'edit') this.editedId = id;
    else if (sent && sent.messageId === undefined) sent.messageId = id;
    else this.stale = true;
  }

  /** The answer bubble the run ends with gets the id of the answer the server stored. */
  private nameAnswer(id: string | undefined): void {
    if (id !== undefined && this.answer && this.answer.messageId === undefined) this.answer.messageId = id;
  }

  /** The final answer is already shown when nothing came after the last answer bubble. */
  private endsWithAnswer(): boolean {
    return this.state.entries[this.state.entries.length - 1]?.kind === 'assistant';
  }

  private *allCards(): Generator<ToolEntry> {
    const walk = function* (list: readonly (ChatEntry | ThinkingEntry)[]): Generator<ToolEntry> {
      for (const entry of list) {
        if (entry.kind === 'tool') {
          yield entry;
          yield* walk(entry.children);
        }
      }
    };
    yield* walk(this.state.entries);
  }

  private findCard(callId: string): ToolEntry | undefined {
    for (const card of this.allCards()) if (card.callId === callId) return card;
    return undefined;
  }

  /**
   * The card of the `spawn_agent` call a subagent event belongs to, at any depth. An event
   * without `parent_call_id` (from an older server) falls back to the latest running top-level
   * `spawn_agent` call.
   */
  private parentCard(parentCallId: string | undefined): ToolEntry | undefined {
    if (parentCallId !== undefined) return this.findCard(parentCallId);
    const entries = this.state.entries;
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const entry = entries[i];
      if (entry?.kind === 'tool' && entry.tool === 'spawn_agent' && entry.status === 'running') return entry;
    }
    return undefined;
  }
}
