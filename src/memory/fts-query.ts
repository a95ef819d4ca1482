/**
 * Turns any user text into safe FTS5 queries for memory facts: the words of `ftsWords` (see
 * there why only they survive), once all required (`all`) and once any of them (`any`).
 * Search ranks the facts holding every word first and fills up with the others: ranking every
 * fact that holds any one common word is what made a search of 100 000 facts take 100 ms, while
 * the facts holding them all are few and still the best answers (docs/memory.md#full-text-search).
 */
import { ftsTerm, ftsWords } from '../util/fts-words.js';

/** Longer queries add little to the ranking and only cost time. */
export const MAX_QUERY_TERMS = 24;
/** Shorter terms as prefixes would match nearly everything. */
const MIN_PREFIX_LENGTH = 4;

export interface FtsQueries {
  /** Every word required. */
  all: string;
  /** Any word suffices; the same as `all` for one word. */
  any: string;
}

/** One searchable word of a memory query, and whether it also matches as the start of a longer one. */
export interface QueryTerm {
  word: string;
  prefix: boolean;
}

/**
 * The words of `text` memory search looks for, or null when it holds none: the one sanitising
 * step both engines share (SQLite quotes them for FTS5, PostgreSQL for `to_tsquery`).
 */
export function memoryQueryTerms(text: string): QueryTerm[] | null {
  const words = ftsWords(text, MAX_QUERY_TERMS);
  if (words.length === 0) return null;
  // Prefix matching lets "python" find "python3" and "deploy" find "deployment".
  return words.map((word) => ({ word, prefix: word.length >= MIN_PREFIX_LENGTH }));
}

/** The FTS5 MATCH expressions for `text`, or null when it holds no searchable word. */
export function toFtsQueries(text: string): FtsQueries | null {
  const terms = memoryQueryTerms(text)?.map(({ word, prefix }) => ftsTerm(word, prefix));
  if (!terms) return null;
  return { all: terms.join(' AND '), any: terms.join(' OR ') };
}
