/**
 * Turns any user text into a safe FTS5 query for memory facts: the words of `ftsWords` (see
 * there why only they survive), joined by OR, so a fact matching more of the words ranks higher
 * under bm25 instead of every word being required.
 */
import { ftsTerm, ftsWords } from '../util/fts-words.js';

/** Longer queries add little to the ranking and only cost time. */
export const MAX_QUERY_TERMS = 24;
/** Shorter terms as prefixes would match nearly everything. */
const MIN_PREFIX_LENGTH = 4;

/** The FTS5 MATCH expression for `text`, or null when it holds no searchable word. */
export function toFtsQuery(text: string): string | null {
  const terms = ftsWords(text, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  // Prefix matching lets "python" find "python3" and "deploy" find "deployment".
  return terms.map((t) => ftsTerm(t, t.length >= MIN_PREFIX_LENGTH)).join(' OR ');
}
