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
  let from = 0;
  if (tokens.length > SNIPPET_WORDS) {
    // The window holding the most different query words; among equals, the one whose first
    // match sits a few words in, as snippet() places it, and then the earliest.
    const lead = Math.floor(SNIPPET_WORDS / 4);
    let best = Number.NEGATIVE_INFINITY;
    for (let i = 0; i + SNIPPET_WORDS <= tokens.length; i++) {
      const window = tokens.slice(i, i + SNIPPET_WORDS);
      const distinct = new Set(window.filter((t) => t.term >= 0).map((t) => t.term)).size;
      const first = window.findIndex((t) => t.term >= 0);
      const score = distinct * SNIPPET_WORDS * 2 - (first < 0 ? 0 : Math.abs(first - lead));
      if (score > best) {
        best = score;
        from = i;
      }
    }
  }
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
