/**
 * Full-text search pieces both PostgreSQL searches share (chat search and memory facts).
 *
 * Text is folded before `to_tsvector` by `navi_fts_fold` (migration 002): compatibility
 * decomposition (NFKD), the combining accents U+0300…U+036F removed, and every run of ASCII
 * characters other than letters and digits made one space. So "Café" matches "cafe", as SQLite's
 * `remove_diacritics` does, and "navi.db", "a_b" or "1.2.3" are separate words, as SQLite's
 * unicode61 and the query side (`ftsWords`) split them; PostgreSQL's own parser would keep
 * "navi.db" as one host name that neither word finds. Only ASCII is split here because a
 * character class such as `[:alnum:]` follows the database's locale and, under the C locale,
 * knows no letter outside ASCII; beyond ASCII the text search parser splits as it does.
 *
 * Queries are built from words `ftsWords` already reduced to letters and digits: each one
 * quoted as a `to_tsquery` operand (`'word'`, or `'word':*` as a prefix), joined by `&` or `|`,
 * then accent-folded by `navi_fts_unaccent`. No character of the person's text is ever read as
 * tsquery syntax: a quote, `&`, `|`, `!`, `(`, `:` or `*` cannot be part of a word.
 */

export interface TsTerm {
  word: string;
  prefix: boolean;
}

/** The `to_tsquery` text for `terms` (words of `ftsWords` only), every one required or any one. */
export function tsqueryText(terms: readonly TsTerm[], join: 'all' | 'any'): string {
  return terms
    .map(({ word, prefix }) => `'${word}'${prefix ? ':*' : ''}`)
    .join(join === 'all' ? ' & ' : ' | ');
}

/** `text` as the index sees it, in JavaScript: for finding the words to mark in a snippet. */
export function foldWord(word: string): string {
  return word
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

const UNACCENT = String.raw`regexp_replace(normalize(t, NFKD), '[\u0300-\u036f]', '', 'g')`;

/**
 * SQL of the two fold functions (created by migration 002, used by 002 and 004). Bodies in the
 * SQL-standard form (PostgreSQL 14+) are bound when created, so they work whatever the caller's
 * search_path; IMMUTABLE lets a generated column and an index use them.
 */
export const FOLD_FUNCTIONS_SQL = String.raw`
  CREATE FUNCTION navi_fts_unaccent(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ${UNACCENT};
  CREATE FUNCTION navi_fts_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace(${UNACCENT}, '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+', ' ', 'g');
`;
