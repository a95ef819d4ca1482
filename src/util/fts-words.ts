/**
 * The searchable words of user text, for building FTS5 queries. FTS5 gives meaning to quotes,
 * `*`, `^`, `:`, `-`, parentheses and the words AND/OR/NOT/NEAR; passing user text straight
 * through either fails with a syntax error or searches for something else. Only runs of letters
 * and digits survive (the same split the `unicode61` tokenizer makes), and each becomes a
 * double-quoted string, so a keyword is a plain word and no character can close the quote.
 * Memory search and chat search both build their queries from these.
 */

/** A term longer than this is cut: no real word is, and a huge one only costs time. */
export const MAX_TERM_LENGTH = 64;

/** The distinct words of `text`, lower-cased, in order of first appearance, at most `maxTerms`. */
export function ftsWords(text: string, maxTerms: number): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((w) => w.slice(0, MAX_TERM_LENGTH)))].slice(0, maxTerms);
}

/**
 * `word` as an FTS5 string, optionally a prefix query (`"pyth"*`). Safe only for words from
 * `ftsWords`, which hold no quote.
 */
export function ftsTerm(word: string, prefix: boolean): string {
  return prefix ? `"${word}"*` : `"${word}"`;
}
