/**
 * Search across chats in the sidebar (`GET /search`): running it as the person types, and
 * turning a hit's plain snippet and highlight offsets into parts to draw. Nothing here builds
 * HTML: the parts are rendered as text, the matched ones inside `<mark>`.
 */

import { reactive } from 'vue';
import type { SearchHit, SearchResults } from '../../../src/protocol/rest.js';
import { sessionHref } from './route.js';

/** The server refuses longer queries. */
export const MAX_QUERY_LENGTH = 500;
/** A pause in typing this long starts a search. */
export const SEARCH_DELAY_MS = 180;

export interface SnippetPart {
  text: string;
  mark: boolean;
}

/**
 * `snippet` cut into plain and marked parts by `highlights` (`[start, end)` offsets). Offsets
 * outside the text are clamped and overlapping ones merged, so whatever the server sends, every
 * character appears exactly once and in order.
 */
export function snippetParts(
  snippet: string,
  highlights: readonly (readonly [number, number])[],
): SnippetPart[] {
  const ranges = highlights
    .map(
      ([a, b]) =>
        [Math.max(0, Math.min(a, snippet.length)), Math.max(0, Math.min(b, snippet.length))] as const,
    )
    .filter(([a, b]) => Number.isInteger(a) && Number.isInteger(b) && b > a)
    .sort((x, y) => x[0] - y[0]);
  const parts: SnippetPart[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (end <= at) continue;
    const from = Math.max(start, at);
    if (from > at) parts.push({ text: snippet.slice(at, from), mark: false });
    parts.push({ text: snippet.slice(from, end), mark: true });
    at = end;
  }
  if (at < snippet.length) parts.push({ text: snippet.slice(at), mark: false });
  return parts;
}

/** Where a hit opens: its chat, at its message when it is one. */
export function hitHref(hit: SearchHit): string {
  return sessionHref(hit.session_id, hit.message_id ?? undefined);
}

/** Who said the hit's text, in a word. */
export function hitLabel(hit: SearchHit): string {
  if (hit.message_id === null) return 'Title';
  return hit.role === 'user' ? 'You' : 'Navi';
}

export type SearchStatus = 'idle' | 'waiting' | 'searching' | 'done' | 'error';

export interface SearchState {
  /** The text in the box. */
  query: string;
  status: SearchStatus;
  /** Hits of the last query answered (kept while the next one runs, so the list does not flash). */
  results: SearchHit[];
  error: string | null;
}

/** Runs `fn` after `ms`; the returned function cancels it. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const timer: Schedule = (fn, ms) => {
  const id = setTimeout(fn, ms);
  return () => clearTimeout(id);
};

/**
 * The search box's behaviour: a search starts once typing pauses, an answer to an older query
 * than the newest one is dropped, and an empty box is no search at all.
 */
export class SessionSearch {
  readonly state: SearchState = reactive({ query: '', status: 'idle', results: [], error: null });
  private cancelTimer: (() => void) | null = null;
  private generation = 0;

  constructor(
    private readonly fetchResults: (query: string) => Promise<SearchResults>,
    private readonly describe: (error: unknown) => string,
    private readonly schedule: Schedule = timer,
    private readonly delayMs = SEARCH_DELAY_MS,
  ) {}

  /** Whether the sidebar shows search results instead of the list of sessions. */
  get active(): boolean {
    return this.state.query.trim() !== '';
  }

  input(text: string): void {
    this.state.query = text.slice(0, MAX_QUERY_LENGTH);
    this.cancelTimer?.();
    this.cancelTimer = null;
    const generation = ++this.generation;
    if (!this.active) {
      Object.assign(this.state, { status: 'idle', results: [], error: null });
      return;
    }
    this.state.status = 'waiting';
    this.cancelTimer = this.schedule(() => void this.run(generation), this.delayMs);
  }

  clear(): void {
    this.input('');
  }

  dispose(): void {
    this.cancelTimer?.();
    this.generation++;
  }

  private async run(generation: number): Promise<void> {
    this.cancelTimer = null;
    this.state.status = 'searching';
    try {
      const answer = await this.fetchResults(this.state.query);
      if (generation !== this.generation) return;
      Object.assign(this.state, { status: 'done', results: answer.results, error: null });
    } catch (err) {
      if (generation !== this.generation) return;
      Object.assign(this.state, { status: 'error', results: [], error: this.describe(err) });
    }
  }
}
