/**
 * Paged history in the chat (docs/protocol.md#paged-history). A chat opens on the newest page of
 * its session (`GET /sessions/{id}`, DEFAULT_PAGE_LIMIT messages) and reads the pages before it
 * (`GET /sessions/{id}/messages?before=`) as the person scrolls up, or, to open at a message
 * further back, MAX_PAGE_LIMIT at a time until that message is there. A session of any length
 * costs the browser the pages the person looked at, not the session.
 *
 * Older entries go in above what is shown without moving it: the entry at the top of the view is
 * measured before and after the insertion and the scroller moved by the difference. The browser's
 * own scroll anchoring cannot be relied on for this: it does nothing at the very top, where a
 * person who scrolls up ends, and not every browser has it.
 *
 * A page boundary may fall between a tool call and its result, or between a form and the message
 * that submitted it. The card the newer page built from the result alone takes the call's name
 * and arguments when the older page comes, and a form of an older page shows the submission a
 * newer page held, so the joined pages look as one read of the whole session would.
 */
import { nextTick, type Ref, reactive, ref } from 'vue';
import type { EventOf } from '../../../src/protocol/events.js';
import {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  type MessagePage,
  type SessionMessage,
} from '../../../src/protocol/rest.js';
import type { ChatEntry, ToolEntry } from './entries.js';
import { entriesFromMessages, formIdOf, submissionsFromContext } from './history.js';
import type { Timeline } from './timeline.js';

/** How close to the top, in heights of the view, the next older page is read. */
const PREFETCH_VIEWS = 1;

/** Form values by form id, from the `form_submit` messages of the pages read so far. */
type Submissions = Map<string, Record<string, unknown>>;

/**
 * The entries of an older page, ready to go in above `view` (what the chat shows): a call whose
 * result opens `view` is not shown twice, its card there takes the call's tool and arguments
 * (in place), and the forms take the submissions newer pages held.
 */
export function joinOlder(
  older: ChatEntry[],
  view: readonly ChatEntry[],
  submitted: Submissions,
): ChatEntry[] {
  // A result without its call only opens a page: what follows a call in the buffer is its results.
  const results = new Map<string, ToolEntry>();
  for (const entry of view) {
    if (entry.kind !== 'tool') break;
    results.set(entry.callId, entry);
  }
  const joined: ChatEntry[] = [];
  for (const entry of older) {
    if (entry.kind === 'tool') {
      const result = results.get(entry.callId);
      if (result && entry.result === null) {
        result.tool = entry.tool;
        result.args = entry.args;
        continue;
      }
      if (entry.formSubmitted === null) {
        const values = submitted.get(formIdOf(entry) ?? '');
        if (values) entry.formSubmitted = values;
      }
    }
    joined.push(entry);
  }
  return joined;
}

/** What reading up to a message found. */
export type LoadUntil = 'found' | 'absent' | 'failed';

export interface HistoryPagesOptions {
  timeline: Timeline;
  /** Reads the `limit` display messages just before the message `before`. */
  fetchPage(before: string, limit: number): Promise<MessagePage>;
  /** The element that scrolls the chat. */
  scroller: Ref<HTMLElement | null>;
  /** The element whose children are the chat's entries. */
  container: Ref<HTMLElement | null>;
  /** The cursor's message is gone (a rewind removed it): the chat reads its newest page again. */
  reload(): void;
  /** The view was moved to keep its place: the chat's stick-to-bottom reads where it is now. */
  onMoved(): void;
}

export interface HistoryPages {
  /** The id to read older messages before; null once the session's first message is shown. */
  readonly nextBefore: Ref<string | null>;
  /** An older page is being read. */
  readonly loading: Ref<boolean>;
  /** Why the last older page could not be read (the chat offers to retry); null otherwise. */
  readonly error: Ref<string | null>;
  /** Shows `page`, the newest page of the session, instead of everything shown so far. */
  reset(page: MessagePage): void;
  /** Reads the page before the oldest shown (one read at a time; a retry after a failure). */
  loadOlder(): Promise<void>;
  /** Reads older pages until the message `id` is shown or the session's start is reached. */
  loadUntil(id: string): Promise<LoadUntil>;
  /** The scroller moved: near the top, the page above is read before the person gets there. */
  onScroll(): void;
  /**
   * The run being replayed (`start`) began before the newest page, and its replay rebuilds all of
   * it: older pages show what came before it (a person's run, its message too) and nothing after.
   */
  skipRun(start: EventOf<'stream_start'>): void;
}

export function createHistoryPages(options: HistoryPagesOptions): HistoryPages {
  const nextBefore = ref<string | null>(null);
  const loading = ref(false);
  const error = ref<string | null>(null);
  let submitted: Submissions = new Map();
  /** Messages of the pages read since the last reset, by id, to tell whether one is loaded. */
  let loadedIds = new Set<string>();
  /** Bumped by every reset, so a page read for an earlier view is dropped. */
  let generation = 0;
  let current: Promise<SessionMessage[] | null> | null = null;
  /** The replayed run older pages must stop before: its first message, and whether to show it. */
  let runStart: { id: string; keep: boolean } | null = null;

  function reset(page: MessagePage): void {
    generation += 1;
    current = null;
    loading.value = false;
    error.value = null;
    nextBefore.value = page.next_before;
    runStart = null;
    submitted = submissionsFromContext(page.messages);
    loadedIds = new Set(page.messages.map((message) => message.id));
    options.timeline.reset(entriesFromMessages(page.messages));
  }

  /** The first entry element at least partly in view, and where its top is now. */
  function anchor(): { element: Element; top: number } | null {
    const scroller = options.scroller.value;
    const container = options.container.value;
    if (!scroller || !container) return null;
    const edge = scroller.getBoundingClientRect().top;
    for (const element of container.children) {
      if (element.hasAttribute('data-history-top')) continue;
      const rect = element.getBoundingClientRect();
      if (rect.height > 0 && rect.bottom > edge) return { element, top: rect.top };
    }
    return null;
  }

  async function insertAbove(entries: ChatEntry[], cursor: string | null): Promise<void> {
    const scroller = options.scroller.value;
    const kept = anchor();
    const height = scroller?.scrollHeight ?? 0;
    // The indicator changes with the same render as the entries, so the one measure covers both.
    loading.value = false;
    nextBefore.value = cursor;
    options.timeline.state.entries.unshift(...entries.map((entry) => reactive(entry)));
    await nextTick();
    if (!scroller) return;
    if (kept?.element.isConnected) scroller.scrollTop += kept.element.getBoundingClientRect().top - kept.top;
    else scroller.scrollTop += scroller.scrollHeight - height;
    options.onMoved();
  }

  async function read(limit: number): Promise<SessionMessage[] | null> {
    const before = nextBefore.value;
    if (before === null) return null;
    const own = generation;
    loading.value = true;
    error.value = null;
    try {
      const page = await options.fetchPage(before, limit);
      if (own !== generation) return null;
      for (const [formId, values] of submissionsFromContext(page.messages)) submitted.set(formId, values);
      for (const message of page.messages) loadedIds.add(message.id);
      const view = options.timeline.state.entries;
      const shown = entriesFromMessages(beforeRun(page.messages));
      await insertAbove(joinOlder(shown, view, submitted), page.next_before);
      return page.messages;
    } catch (err) {
      if (own !== generation) return null;
      loading.value = false;
      if ((err as { code?: unknown } | null)?.code === 'MESSAGE_NOT_FOUND') {
        options.reload();
        return null;
      }
      error.value = err instanceof Error ? err.message : String(err);
      return null;
    }
  }

  /** The part of an older page the replay of a run in progress does not show. */
  function beforeRun(messages: SessionMessage[]): SessionMessage[] {
    if (runStart === null) return messages;
    const start = runStart;
    const at = messages.findIndex((message) => message.id === start.id);
    if (at < 0) return [];
    runStart = null;
    return messages.slice(0, start.keep ? at + 1 : at);
  }

  function skipRun(start: EventOf<'stream_start'>): void {
    // The replay shows a recall's prompt itself; a person's message only the history shows.
    if (start.user_message_id !== undefined)
      runStart = { id: start.user_message_id, keep: start.trigger !== 'recall' };
  }

  /** One read at a time: a second caller shares the read in progress. */
  function older(limit: number): Promise<SessionMessage[] | null> {
    if (current) return current;
    const reading = read(limit).finally(() => {
      if (current === reading) current = null;
    });
    current = reading;
    // A page that left the view still near the top (a short one, or one the replay shows) reads on.
    void reading.then(onScroll);
    return reading;
  }

  async function loadOlder(): Promise<void> {
    await older(DEFAULT_PAGE_LIMIT);
  }

  /**
   * Whether the session holds the message `id`, asked with the one message before it: the server
   * answers MESSAGE_NOT_FOUND for an id its display history lacks. Any other failure is no answer,
   * and the pages read next report it.
   */
  async function holds(id: string): Promise<boolean> {
    try {
      await options.fetchPage(id, 1);
      return true;
    } catch (err) {
      return (err as { code?: unknown } | null)?.code !== 'MESSAGE_NOT_FOUND';
    }
  }

  async function loadUntil(id: string): Promise<LoadUntil> {
    const own = generation;
    // A link to a message the session no longer has would read every page to find that out: all
    // of a long session into the page. One small read says so first.
    if (!loadedIds.has(id) && nextBefore.value !== null && !(await holds(id)))
      return own === generation ? 'absent' : 'failed';
    while (!loadedIds.has(id)) {
      if (nextBefore.value === null) return 'absent';
      await older(MAX_PAGE_LIMIT);
      if (own !== generation || error.value !== null) return 'failed';
    }
    return 'found';
  }

  function onScroll(): void {
    const scroller = options.scroller.value;
    if (!scroller || nextBefore.value === null || loading.value || error.value !== null) return;
    if (scroller.scrollTop < scroller.clientHeight * PREFETCH_VIEWS) void loadOlder();
  }

  return { nextBefore, loading, error, reset, loadOlder, loadUntil, onScroll, skipRun };
}
