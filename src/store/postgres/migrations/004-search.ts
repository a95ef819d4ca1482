/**
 * Search across chats on PostgreSQL (docs/postgres.md#memory-search-on-postgresql): one row per
 * session title and per display message people read (the user's words and the answers), with
 * its text as a `tsvector` (the title weighted A, a message B) under a GIN index. Tool calls, tool
 * results, reasoning and the model's context are left out, as on SQLite (migration 007 there).
 *
 * `search_docs` is derived: triggers on `messages` and `sessions` keep it in step with every
 * insert, change of text, delete, rename and session delete, and this migration fills it for the
 * rows already there. A copy between databases leaves it out; the triggers rebuild it. The text
 * itself is not copied here: snippets are cut from the message or title when a search shows it.
 * Docids grow with every insert, so their order is the order of writing, newest last.
 *
 * 'simple' (no stemming): a stemmed index would not find "runn", typed so far, in "running"
 * (stored as "run"), and search finds partial words as they are typed.
 */
import type { PgMigration } from './types.js';

/** Whether the message row `m` (`NEW`, `OLD` or a table alias) is indexed. */
const indexed = (m: string): string =>
  `${m}.role IN ('user', 'assistant') AND ${m}.content IS NOT NULL AND btrim(${m}.content) <> ''`;

export const searchMigration: PgMigration = {
  version: 4,
  name: 'search',
  async up(client) {
    await client.query(`
      CREATE FUNCTION navi_search_vector(title text, body text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN setweight(to_tsvector('simple'::regconfig, navi_fts_fold(coalesce(title, ''))), 'A') ||
               setweight(to_tsvector('simple'::regconfig, navi_fts_fold(coalesce(body, ''))), 'B');

      CREATE TABLE search_docs (
        docid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        -- No foreign key: the triggers remove a session's documents when it goes.
        session_id TEXT NOT NULL,
        -- NULL for the document of the session's title.
        message_id TEXT,
        role TEXT,
        created_at TEXT NOT NULL,
        doc TSVECTOR NOT NULL
      );
      CREATE INDEX search_docs_by_message ON search_docs (session_id, message_id);
      CREATE INDEX search_docs_fts ON search_docs USING GIN (doc);

      -- Oldest first, as the triggers would have numbered them: search ranks the newest matches.
      INSERT INTO search_docs (session_id, message_id, role, created_at, doc)
        SELECT session_id, message_id, role, created_at, doc FROM (
          SELECT id AS session_id, NULL AS message_id, NULL AS role, created_at, 0 AS seq,
                 navi_search_vector(title, '') AS doc
          FROM sessions WHERE title <> ''
          UNION ALL
          SELECT m.session_id, m.id, m.role, m.created_at, m.seq, navi_search_vector('', m.content)
          FROM messages m WHERE ${indexed('m')}
        ) AS existing ORDER BY created_at, session_id, seq;

      CREATE FUNCTION search_message_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          DELETE FROM search_docs WHERE session_id = OLD.session_id AND message_id = OLD.id;
        END IF;
        IF TG_OP <> 'DELETE' AND ${indexed('NEW')} THEN
          INSERT INTO search_docs (session_id, message_id, role, created_at, doc)
            VALUES (NEW.session_id, NEW.id, NEW.role, NEW.created_at, navi_search_vector('', NEW.content));
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER search_message_ai AFTER INSERT ON messages
        FOR EACH ROW WHEN (${indexed('NEW')}) EXECUTE FUNCTION search_message_changed();
      -- The streaming save sets content on every write; only a real change re-indexes.
      CREATE TRIGGER search_message_au AFTER UPDATE OF content ON messages
        FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION search_message_changed();
      CREATE TRIGGER search_message_ad AFTER DELETE ON messages
        FOR EACH ROW WHEN (${indexed('OLD')}) EXECUTE FUNCTION search_message_changed();

      CREATE FUNCTION search_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          -- Its messages go through the cascade (and search_message_ad); this catches the rest.
          DELETE FROM search_docs WHERE session_id = OLD.id;
          RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' THEN
          DELETE FROM search_docs WHERE session_id = OLD.id AND message_id IS NULL;
        END IF;
        IF NEW.title <> '' THEN
          INSERT INTO search_docs (session_id, message_id, role, created_at, doc)
            VALUES (NEW.id, NULL, NULL, NEW.created_at, navi_search_vector(NEW.title, ''));
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER search_session_ai AFTER INSERT ON sessions
        FOR EACH ROW WHEN (NEW.title <> '') EXECUTE FUNCTION search_session_changed();
      -- Every session update may set title (to itself when unchanged): only a rename re-indexes.
      CREATE TRIGGER search_session_au AFTER UPDATE OF title ON sessions
        FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title) EXECUTE FUNCTION search_session_changed();
      CREATE TRIGGER search_session_ad AFTER DELETE ON sessions
        FOR EACH ROW EXECUTE FUNCTION search_session_changed();
    `);
  },
};
