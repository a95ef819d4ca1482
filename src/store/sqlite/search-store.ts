/**
 * SearchStore on SQLite: the FTS5 index of migration 007 (session titles and display messages,
 * kept current by triggers). Ranked by bm25 with a title match weighing more than a match in a
 * message, among the newest `RANK_WINDOW` matches; snippets come from FTS5 `snippet()` with
 * private-use marker characters, turned here into plain text and `[start, end)` offsets so
 * nothing downstream ever parses HTML.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { SearchHit, SessionMessage } from '../../protocol/rest.js';
import { ftsTerm, ftsWords } from '../../util/fts-words.js';
import { MAX_SEARCH_LIMIT, type SearchStore } from '../types.js';

/** Words beyond these add nothing a person meant and only cost time. */
export const MAX_SEARCH_TERMS = 16;
/**
 * A one-letter prefix would match a large part of every word in the index; a last word that
 * short matches only as itself.
 */
const MIN_PREFIX_LENGTH = 2;
/** How many words a snippet shows around the matches. */
const SNIPPET_TOKENS = 14;
/** bm25 weights of the columns (title, body): a title hit counts this much more. */
const TITLE_WEIGHT = 4;
/**
 * How many of the newest matches are ranked. Scoring every match of a word found in most
 * conversations (or of a two-letter prefix being typed) costs a few hundred milliseconds over
 * 100 000 messages; the newest matches cost a few (see `npm run bench -- search`). Fewer
 * matches than this are all ranked, so a specific word finds its message however old it is.
 */
export const RANK_WINDOW = 2_000;

/** The marks snippet() puts around a match: char(57344) and char(57345) in the query. */
export const OPEN = '\uE000';
export const CLOSE = '\uE001';

/**
 * The FTS5 query for `text`: every word quoted (so nothing in it is syntax) and required, the
 * last one also as a prefix while it is being typed (the text ends inside it, not with a space
 * or punctuation). Null when `text` holds no word.
 */
export function toSearchQuery(text: string): string | null {
  return (
    searchTerms(text)
      ?.map(({ word, prefix }) => ftsTerm(word, prefix))
      .join(' ') ?? null
  );
}

/**
 * The words of `text` chat search requires, the last one marked as a prefix while it is being
 * typed; null when `text` holds no word. Both engines build their queries from these.
 */
export function searchTerms(text: string): { word: string; prefix: boolean }[] | null {
  const words = ftsWords(text, MAX_SEARCH_TERMS);
  if (words.length === 0) return null;
  const typing = /[\p{L}\p{N}]$/u.test(text);
  return words.map((word, i) => ({
    word,
    prefix: typing && i === words.length - 1 && [...word].length >= MIN_PREFIX_LENGTH,
  }));
}

/**
 * A snippet with FTS5 markers → plain text and the offsets of the marked parts (JavaScript string
 * indices). Runs of white space (line breaks included) become one space, so a snippet reads as
 * one line.
 */
export function parseSnippet(marked: string): { snippet: string; highlights: [number, number][] } {
  let out = '';
  const highlights: [number, number][] = [];
  let start: number | null = null;
  let space = false;
  for (const ch of marked) {
    if (ch === OPEN) {
      if (space && out !== '') out += ' ';
      space = false;
      start = out.length;
    } else if (ch === CLOSE) {
      if (start !== null && out.length > start) highlights.push([start, out.length]);
      start = null;
    } else if (/\s/u.test(ch)) {
      space = true;
    } else {
      if (space && out !== '') out += ' ';
      space = false;
      out += ch;
    }
  }
  return { snippet: out, highlights };
}

interface ScoreRow {
  docid: number;
  score: number;
}

interface DocRow {
  session_id: string;
  session_title: string;
  message_id: string | null;
  role: SessionMessage['role'] | null;
  created_at: string;
}

export class SqliteSearchStore implements SearchStore {
  private readonly scores: Statement<{ query: string; window: number }, ScoreRow>;
  private readonly snippet: Statement<{ query: string; docid: number }, string>;
  private readonly doc: Statement<[number], DocRow>;

  constructor(db: Database) {
    // Newest first (docids grow with every insert), so FTS5 walks the doclists from their end
    // and stops at the window instead of scoring every match.
    this.scores = db.prepare(
      `SELECT rowid AS docid, bm25(search_fts, ${TITLE_WEIGHT}.0, 1.0) AS score
       FROM search_fts WHERE search_fts MATCH @query
       ORDER BY rowid DESC LIMIT @window`,
    );
    // better-sqlite3 binds a JS number as REAL, and FTS5 ignores `rowid = <real>` beside MATCH
    // (every match comes back): the CAST makes it the integer FTS5 filters by.
    this.snippet = db
      .prepare<{ query: string; docid: number }, string>(
        `SELECT snippet(search_fts, -1, char(57344), char(57345), '…', ${SNIPPET_TOKENS})
         FROM search_fts WHERE search_fts MATCH @query AND rowid = CAST(@docid AS INTEGER)`,
      )
      .pluck();
    this.doc = db.prepare(
      `SELECT d.session_id, s.title AS session_title, d.message_id, d.role, d.created_at
       FROM search_docs d JOIN sessions s ON s.id = d.session_id
       WHERE d.docid = ?`,
    );
  }

  async search(text: string, limit: number): Promise<SearchHit[]> {
    const query = toSearchQuery(text);
    if (query === null) return [];
    const capped = Math.min(MAX_SEARCH_LIMIT, Math.max(1, Math.floor(limit) || 1));
    // bm25 is lower for better matches; among equals the newer comes first.
    const best = this.scores
      .all({ query, window: RANK_WINDOW })
      .sort((a, b) => a.score - b.score || b.docid - a.docid)
      .slice(0, capped);
    const hits: SearchHit[] = [];
    for (const { docid } of best) {
      const doc = this.doc.get(docid);
      const marked = this.snippet.get({ query, docid });
      // The triggers keep both tables in step; a row without its document is skipped, not shown.
      if (!doc || marked === undefined) continue;
      hits.push({ ...doc, ...parseSnippet(marked) });
    }
    return hits;
  }
}
