/**
 * SearchStore on PostgreSQL: the `search_docs` index of migration 004 (session titles and display
 * messages, kept current by triggers). Every word is required, the last one also as a prefix
 * while it is being typed, built from the same words as on SQLite (`searchTerms`). Ranked by
 * `ts_rank` with a title match (weight A) above a message match (B), among the newest
 * `RANK_WINDOW` matches, as on SQLite; snippets are cut from the stored text (pg-snippet.ts).
 */
import type { SearchHit, SessionMessage } from '../../protocol/rest.js';
import { parseSnippet, RANK_WINDOW, searchTerms } from '../sqlite/search-store.js';
import { MAX_SEARCH_LIMIT, type SearchStore } from '../types.js';
import type { PgDatabase } from './database.js';
import { markSnippet } from './pg-snippet.js';
import { tsqueryText } from './pg-text-search.js';

/** ts_rank weights {D, C, B, A}: a title word (A) counts four times a message word (B), as on SQLite. */
const RANK_WEIGHTS = '{0.1, 0.2, 0.25, 1.0}';

interface HitRow {
  docid: number;
  session_id: string;
  session_title: string;
  message_id: string | null;
  role: SessionMessage['role'] | null;
  created_at: string;
  text: string | null;
}

export class PgSearchStore implements SearchStore {
  constructor(readonly db: PgDatabase) {}

  async search(text: string, limit: number): Promise<SearchHit[]> {
    const terms = searchTerms(String(text));
    if (terms === null) return [];
    const capped = Math.min(MAX_SEARCH_LIMIT, Math.max(1, Math.floor(limit) || 1));
    // The newest matches first (docids grow with every insert), then the best of them by rank;
    // among equals the newer comes first. The text comes from the message or the title itself.
    const rows = await this.db.rows<HitRow>(
      `WITH q AS (SELECT to_tsquery('simple', navi_fts_unaccent($1)) AS q),
       newest AS (
         SELECT d.docid, d.session_id, d.message_id, d.role, d.created_at, d.doc
         FROM search_docs d, q WHERE d.doc @@ q.q ORDER BY d.docid DESC LIMIT $2),
       best AS (
         SELECT n.*, ts_rank('${RANK_WEIGHTS}', n.doc, q.q) AS rank FROM newest n, q
         ORDER BY rank DESC, n.docid DESC LIMIT $3)
       SELECT b.docid, b.session_id, s.title AS session_title, b.message_id, b.role, b.created_at,
              CASE WHEN b.message_id IS NULL THEN s.title ELSE m.content END AS text
       FROM best b
       JOIN sessions s ON s.id = b.session_id
       LEFT JOIN messages m ON m.session_id = b.session_id AND m.id = b.message_id
       ORDER BY b.rank DESC, b.docid DESC`,
      [tsqueryText(terms, 'all'), RANK_WINDOW, capped],
    );
    const hits: SearchHit[] = [];
    for (const { docid: _docid, text: body, ...doc } of rows) {
      // The triggers keep both in step; a row without its text is skipped, not shown.
      if (body === null) continue;
      hits.push({ ...doc, ...parseSnippet(markSnippet(body, terms)) });
    }
    return hits;
  }
}
