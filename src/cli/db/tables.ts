/**
 * What `navi db copy` copies: one description per table, the same on both engines, with each
 * column's kind so the one place that converts values between SQLite and PostgreSQL knows what
 * a value is (SQLite keeps booleans as 0/1, JSON as text and bytes as BLOB; PostgreSQL as
 * boolean, jsonb and bytea). The order is the order of copying: a table comes after the tables
 * its foreign keys point at.
 */

/** How a column's value is kept: the copy converts by kind, never by guessing from the value. */
export type ColumnKind = 'text' | 'int' | 'bool' | 'json' | 'blob';

export interface TableSpec {
  name: string;
  /** Every column, in the order rows are read and written. */
  columns: readonly { name: string; kind: ColumnKind }[];
  /** The primary key (or a unique key): rows are read in its order, and a row whose key the target holds is skipped. */
  key: readonly string[];
  /**
   * A table of one row that every new database already holds with defaults: the copied row
   * replaces the target's only while the target's is still untouched (this SQL condition).
   */
  singletonDefault?: string;
  /**
   * Identity columns whose sequence PostgreSQL must move past the copied ids. With --merge the
   * target numbers copied rows itself, so the table needs another unique key to skip rows it holds.
   */
  identity?: string;
  /**
   * Text columns besides the key that hold ids or names rows are found by (a message's id, the
   * session a recall belongs to): like the key, they are copied exactly or not at all.
   */
  ids?: readonly string[];
}

const col = (name: string, kind: ColumnKind = 'text') => ({ name, kind });

const messageColumns = [
  col('session_id'),
  col('seq', 'int'),
  col('id'),
  col('role'),
  col('content'),
  col('payload', 'json'),
  col('created_at'),
];

export const COPIED_TABLES: readonly TableSpec[] = [
  {
    name: 'sessions',
    columns: [
      col('id'),
      col('profile_id'),
      col('title'),
      col('pinned', 'bool'),
      col('created_at'),
      col('last_active'),
      col('context_token_count', 'int'),
      col('model_override', 'json'),
    ],
    key: ['id'],
    ids: ['profile_id'],
  },
  { name: 'messages', columns: messageColumns, key: ['session_id', 'seq'], ids: ['id'] },
  { name: 'context_messages', columns: messageColumns, key: ['session_id', 'seq'], ids: ['id'] },
  {
    name: 'session_kv',
    columns: [col('session_id'), col('key'), col('value', 'json'), col('updated_at')],
    key: ['session_id', 'key'],
  },
  {
    name: 'session_files',
    columns: [
      col('session_id'),
      col('name'),
      col('path'),
      col('size', 'int'),
      col('mime_type'),
      col('created_at'),
      col('expires_at'),
    ],
    key: ['session_id', 'name'],
  },
  {
    name: 'pairing_codes',
    columns: [col('code_hash'), col('created_at'), col('expires_at'), col('used_at')],
    key: ['code_hash'],
  },
  {
    name: 'paired_clients',
    columns: [
      col('id', 'int'),
      col('secret_hash'),
      col('user_agent'),
      col('created_at'),
      col('last_used_at'),
    ],
    key: ['id'],
    identity: 'id',
    ids: ['secret_hash'],
  },
  {
    name: 'memory_facts',
    columns: [
      col('id', 'int'),
      col('category'),
      col('key'),
      col('value'),
      col('source_session_id'),
      col('created_at'),
      col('updated_at'),
      col('embedding', 'blob'),
      col('embedding_model'),
    ],
    key: ['id'],
    identity: 'id',
    ids: ['category', 'key', 'source_session_id'],
  },
  {
    name: 'memory_summary',
    columns: [
      col('id', 'int'),
      col('text'),
      col('updated_at'),
      col('facts_revision', 'int'),
      col('summary_revision', 'int'),
    ],
    key: ['id'],
    singletonDefault: "memory_summary.text = '' AND memory_summary.updated_at IS NULL",
  },
  {
    name: 'session_memory_state',
    columns: [
      col('session_id'),
      col('extracted_at'),
      col('status'),
      col('attempts', 'int'),
      col('last_error'),
      col('attempted_at'),
    ],
    key: ['session_id'],
  },
  {
    name: 'recalls',
    columns: [
      col('id'),
      col('session_id'),
      col('prompt'),
      col('schedule', 'json'),
      col('status'),
      col('next_run_at'),
      col('last_run_at'),
      col('last_outcome', 'json'),
      col('run_count', 'int'),
      col('chain', 'int'),
      col('created_at'),
    ],
    key: ['id'],
    ids: ['session_id'],
  },
];

/**
 * Tables the copy leaves alone, and why: each target builds its own derived data (search
 * indexes, vector codes) from the copied rows, and its own migration record. A table in neither
 * list makes the copy refuse, so a new table is never left behind without anyone deciding.
 */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  schema_migrations: 'each database records its own migrations',
  // SQLite: full-text indexes (FTS5 shadow tables included) and the vector codes, rebuilt by the target.
  memory_facts_fts: 'derived: the full-text index of memory facts',
  search_docs: 'derived: the search index of chats',
  search_fts: 'derived: the search index of chats',
  memory_fact_codes: 'derived: the binary codes of memory vectors',
  memory_codes_revision: 'derived: the revision of the vector codes',
  memory_fact_vectors: "derived: pgvector's copy of the memory vectors",
  active_runs: 'transient: the runs in progress, which end with their processes',
  run_events: 'transient: the events of runs in progress',
  cluster_secret: "each database's processes make their own key for their notices",
  sqlite_sequence: "SQLite's own bookkeeping",
  sqlite_stat1: "SQLite's own statistics",
  sqlite_stat4: "SQLite's own statistics",
};

/** FTS5 keeps each index in shadow tables named after it (`search_fts_data`, …). */
const FTS_SHADOW = /^(memory_facts_fts|search_fts)_(data|idx|content|docsize|config)$/;

/**
 * Why the table `name` is not copied, or undefined when it is unknown to the copy.
 */
export function notCopiedBecause(name: string): string | undefined {
  if (NOT_COPIED[name]) return NOT_COPIED[name];
  if (FTS_SHADOW.test(name)) return 'derived: part of a full-text index';
  return undefined;
}
