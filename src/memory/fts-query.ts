/**
 * Turns any user text into a safe FTS5 query. FTS5 gives meaning to quotes, `*`, `^`, `:`,
 * parentheses and the words AND/OR/NOT/NEAR; passing user text straight through either fails
 * with a syntax error or searches for something else. Only runs of letters and digits survive,
 * each wrapped in double quotes (so keywords become plain words) and joined by OR, so a fact
 * matching more of the words ranks higher under bm25 instead of every word being required.
 */

/** Longer queries add little to the ranking and only cost time. */
export const MAX_QUERY_TERMS = 24;
const MAX_TERM_LENGTH = 64;
/** Shorter terms as prefixes would match nearly everything. */
const MIN_PREFIX_LENGTH = 4;

/** The FTS5 MATCH expression for `text`, or null when it holds no searchable word. */
export function toFtsQuery(text: string): string | null {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms = [...new Set(words.map((w) => w.slice(0, MAX_TERM_LENGTH)))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  // Prefix matching lets "python" find "python3" and "deploy" find "deployment".
  return terms.map((t) => (t.length >= MIN_PREFIX_LENGTH ? `"${t}"*` : `"${t}"`)).join(' OR ');
}
