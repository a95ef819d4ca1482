/**
 * Search across chats (docs/architecture.md#search): one FTS5 index over session titles and the
 * display messages people read, the user's words and the answers (plans and step-limit answers
 * included). Tool calls, tool results, reasoning and the model's context are left out: tool
 * output (file listings, JSON, logs) would drown the conversation in noise, and what the model
 * read but nobody saw is not what a person remembers.
 *
 * `search_docs` maps each indexed row to a stable integer `docid`, the FTS rowid: the message
 * tables have no integer key of their own, and their implicit rowids may change on VACUUM.
 * Docids grow with every insert, so their order is the order of writing, newest last.
 * The index keeps its own copy of the text (a regular FTS5 table), so `snippet()` works without
 * reading the message tables. Triggers keep both in step with every insert, change of text and
 * delete, session renames and deletes included; this migration fills them for existing rows.
 *
 * The characters U+E000 and U+E001 are removed from the indexed text: the search marks matches
 * with them in snippets, so they must not occur in the text itself.
 */
import type { Migration } from './types.js';

/** The indexed form of a text column: the snippet markers removed. */
const clean = (column: string): string => `replace(replace(${column}, char(57344), ''), char(57345), '')`;

/** Whether the message row `m` (a table alias, `new` or `old`) is indexed. */
const indexed = (m: string): string =>
  `${m}.role IN ('user', 'assistant') AND ${m}.content IS NOT NULL AND trim(${m}.content) <> ''`;

/** Removes the index rows of the documents `where` selects from search_docs. */
const unindex = (where: string): string => `
  DELETE FROM search_fts WHERE rowid IN (SELECT docid FROM search_docs WHERE ${where});
  DELETE FROM search_docs WHERE ${where};`;

/** Indexes message `new` (in a trigger), when it is indexed at all. */
const indexMessage = `
  INSERT INTO search_docs (session_id, message_id, role, created_at)
    SELECT new.session_id, new.id, new.role, new.created_at WHERE ${indexed('new')};
  INSERT INTO search_fts (rowid, title, body)
    SELECT docid, '', ${clean('new.content')} FROM search_docs
    WHERE session_id = new.session_id AND message_id = new.id;`;

/** Indexes the title of session `new` (in a trigger), unless it is empty. */
const indexTitle = `
  INSERT INTO search_docs (session_id, message_id, role, created_at)
    SELECT new.id, NULL, NULL, new.created_at WHERE new.title <> '';
  INSERT INTO search_fts (rowid, title, body)
    SELECT docid, ${clean('new.title')}, '' FROM search_docs
    WHERE session_id = new.id AND message_id IS NULL;`;

export const searchMigration: Migration = {
  version: 7,
  name: 'search',
  up(db) {
    db.exec(`
      CREATE TABLE search_docs (
        docid INTEGER PRIMARY KEY,
        -- No foreign key: the triggers remove a session's documents when it goes.
        session_id TEXT NOT NULL,
        -- NULL for the document of the session's title.
        message_id TEXT,
        role TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX search_docs_by_message ON search_docs (session_id, message_id);

      -- unicode61 without stemming: a stemmed index would not find "runn" (typed so far) in
      -- "running" (stored as "run"), and search finds partial words as they are typed.
      -- The prefix indexes keep those partial-word queries fast.
      CREATE VIRTUAL TABLE search_fts USING fts5(
        title, body,
        tokenize = 'unicode61 remove_diacritics 2',
        prefix = '2 3'
      );

      -- Oldest first, as the triggers would have numbered them: search ranks the newest matches.
      INSERT INTO search_docs (session_id, message_id, role, created_at)
        SELECT session_id, message_id, role, created_at FROM (
          SELECT id AS session_id, NULL AS message_id, NULL AS role, created_at, 0 AS seq
          FROM sessions WHERE title <> ''
          UNION ALL
          SELECT m.session_id, m.id, m.role, m.created_at, m.seq FROM messages m WHERE ${indexed('m')}
        ) ORDER BY created_at, session_id, seq;
      INSERT INTO search_fts (rowid, title, body)
        SELECT d.docid, ${clean('s.title')}, '' FROM search_docs d
        JOIN sessions s ON s.id = d.session_id WHERE d.message_id IS NULL;
      INSERT INTO search_fts (rowid, title, body)
        SELECT d.docid, '', ${clean('m.content')} FROM search_docs d
        JOIN messages m ON m.session_id = d.session_id AND m.id = d.message_id;

      CREATE TRIGGER search_message_ai AFTER INSERT ON messages WHEN ${indexed('new')} BEGIN
        ${indexMessage}
      END;
      -- The streaming save sets content on every write; only a real change re-indexes.
      CREATE TRIGGER search_message_au AFTER UPDATE OF content ON messages
      WHEN old.content IS NOT new.content BEGIN
        ${unindex('session_id = old.session_id AND message_id = old.id')}
        ${indexMessage}
      END;
      CREATE TRIGGER search_message_ad AFTER DELETE ON messages WHEN ${indexed('old')} BEGIN
        ${unindex('session_id = old.session_id AND message_id = old.id')}
      END;

      CREATE TRIGGER search_session_ai AFTER INSERT ON sessions WHEN new.title <> '' BEGIN
        ${indexTitle}
      END;
      -- Every session update sets title (to itself when unchanged): only a rename re-indexes.
      CREATE TRIGGER search_session_au AFTER UPDATE OF title ON sessions
      WHEN old.title IS NOT new.title BEGIN
        ${unindex('session_id = old.id AND message_id IS NULL')}
        ${indexTitle}
      END;
      -- Its messages go through the cascade (and search_message_ad); this catches the rest.
      CREATE TRIGGER search_session_ad AFTER DELETE ON sessions BEGIN
        ${unindex('session_id = old.id')}
      END;
    `);
  },
};
