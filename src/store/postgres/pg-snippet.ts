/**
 * Snippets of chat search on PostgreSQL: a few words of the message or title around its matches,
 * the matches marked with U+E000 … U+E001 as SQLite's `snippet()` marks them, so `parseSnippet`
 * turns both into the same plain text and offsets. Cut here rather than by `ts_headline`, which
 * parses the text as it is stored: it would mark neither "Café" for the folded query "cafe" nor
 * "navi" inside "navi.db", words the index (pg-text-search.ts) does find.
 */
import { CLOSE, OPEN } from '../sqlite/search-store.js';
import { foldWord, type TsTerm } from './pg-text-search.js';

/** Words shown around the matches, as on SQLite. */
export const SNIPPET_WORDS = 14;

interface Token {
  start: number;
  end: number;
  /** Index into the query's terms, or -1. */
  term: number;
}

/** A word, kept whole with its accents (combining marks) so it folds as the index folded it. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

function termOf(word: string, terms: readonly { word: string; prefix: boolean }[]): number {
  const folded = foldWord(word);
  return terms.findIndex((t) => (t.prefix ? folded.startsWith(t.word) : folded === t.word));
}

/**
 * `text` cut to `SNIPPET_WORDS` words around the window holding the most different query
 * words (the first such window), matches marked, `…` where text was left out. The marker
 * characters themselves are removed from `text` first.
 */
export function markSnippet(text: string, terms: readonly TsTerm[]): string {
  const clean = text.replace(/[\uE000\uE001]/g, '');
  const folded = terms.map((t) => ({ word: foldWord(t.word), prefix: t.prefix }));
  const tokens: Token[] = [];
  for (const m of clean.matchAll(WORD)) {
    tokens.push({ start: m.index, end: m.index + m[0].length, term: termOf(m[0], folded) });
  }
  const from = bestWindow(tokens);
  const shown = tokens.slice(from, from + SNIPPET_WORDS);
  if (shown.length === 0) return clean;
  const start = from === 0 ? 0 : shown[0]!.start;
  const end = from + SNIPPET_WORDS >= tokens.length ? clean.length : shown[shown.length - 1]!.end;
  let out = start > 0 ? '…' : '';
  let at = start;
  for (const t of shown) {
    if (t.term < 0) continue;
    out += `${clean.slice(at, t.start)}${OPEN}${clean.slice(t.start, t.end)}${CLOSE}`;
    at = t.end;
  }
  out += clean.slice(at, end);
  return end < clean.length ? `${out}…` : out;
}

/**
 * Where the shown words start: the window holding the most different query words; among equals,
 * the one whose first match sits a few words in, as snippet() places it, and then the earliest.
 * One pass over the words (a search may cut many long messages while a person types).
 */
function bestWindow(tokens: readonly Token[]): number {
  const n = tokens.length;
  if (n <= SNIPPET_WORDS) return 0;
  const lead = Math.floor(SNIPPET_WORDS / 4);
  // nextMatch[i]: the first word at or after i that matches a term (n when none does).
  const nextMatch = new Int32Array(n + 1).fill(n);
  for (let i = n - 1; i >= 0; i--) nextMatch[i] = tokens[i]!.term >= 0 ? i : nextMatch[i + 1]!;
  const counts = new Map<number, number>();
  const count = (term: number, by: number) => {
    if (term < 0) return;
    const c = (counts.get(term) ?? 0) + by;
    if (c === 0) counts.delete(term);
    else counts.set(term, c);
  };
  for (let j = 0; j < SNIPPET_WORDS; j++) count(tokens[j]!.term, 1);
  let best = Number.NEGATIVE_INFINITY;
  let from = 0;
  for (let i = 0; i + SNIPPET_WORDS <= n; i++) {
    if (i > 0) {
      count(tokens[i - 1]!.term, -1);
      count(tokens[i + SNIPPET_WORDS - 1]!.term, 1);
    }
    const first = nextMatch[i]! - i;
    const score = counts.size * SNIPPET_WORDS * 2 - (first < SNIPPET_WORDS ? Math.abs(first - lead) : 0);
    if (score > best) {
      best = score;
      from = i;
    }
  }
  return from;
}
