/**
 * SessionStore on PostgreSQL: the same tables, order and rules as the SQLite store (see
 * sqlite/session-store.ts for the seq rules of compression and rewind).
 *
 * Two processes may write to one session (only one runs it, but an import, a rename and a run's
 * saves can interleave), so whatever allocates or cuts seq (append, compression, rewind) first
 * locks the session row (`FOR NO KEY UPDATE`, which still lets other tables' foreign keys check
 * the row) and only then, in its next statement, reads the last seq: under READ COMMITTED that
 * statement sees everything the previous holder of the lock committed (PgDatabase puts every
 * connection on READ COMMITTED). Should two appends still pick the same seq, the unique
 * (session_id, seq) constraint refuses the second and the append is tried again.
 *
 * Hot paths are one statement each: a streamed update (both buffers), a page (cursor and rows),
 * and an append's inserts into both buffers with its session patch (rows passed as arrays to
 * `unnest`). They are named, so each connection parses them once.
 */
import type { MessagePage, ModelChoice } from '../../protocol/rest.js';
import type {
  BufferedMessage,
  MessagePatch,
  NewSession,
  RewindResult,
  SessionPatch,
  SessionRecord,
  SessionStore,
  StoredMessage,
} from '../types.js';
import type { PgDatabase, PgQueryable } from './database.js';
import { fromRow, MESSAGE_COLUMNS, type MessageRow, messageColumns, messageParams } from './message-rows.js';
import {
  FOREIGN_KEY_VIOLATION,
  pgErrorCode,
  pgText,
  refuseNul,
  storableKey,
  UNIQUE_VIOLATION,
} from './pg-values.js';

interface SessionRow {
  id: string;
  profile_id: string;
  title: string;
  pinned: boolean;
  created_at: string;
  last_active: string;
  context_token_count: number;
  /** `{backend, model}` (parsed from JSONB), or null while the session follows its profile. */
  model_override: unknown;
}

type Buffer = 'messages' | 'context_messages';

const SESSION_COLUMNS =
  'id, profile_id, title, pinned, created_at, last_active, context_token_count, model_override';

/** How often an append whose seq another process took first is tried again. */
const SEQ_ATTEMPTS = 5;

/**
 * The session patch as SET clauses on parameters from `$first` on (see `patchParams`): a null
 * parameter leaves its column as it is; the model override, which null clears, has a flag.
 */
function patchSet(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `title = coalesce(${p(0)}, title),
    pinned = coalesce(${p(1)}::boolean, pinned),
    profile_id = coalesce(${p(2)}, profile_id),
    context_token_count = coalesce(${p(3)}::bigint, context_token_count),
    last_active = coalesce(${p(4)}, last_active),
    model_override = CASE WHEN ${p(5)}::boolean THEN ${p(6)}::jsonb ELSE model_override END`;
}

function patchParams(patch: SessionPatch): unknown[] {
  const override = patch.model_override;
  return [
    patch.title === undefined ? null : pgText(patch.title),
    patch.pinned ?? null,
    patch.profile_id ?? null,
    patch.context_token_count ?? null,
    patch.last_active ?? null,
    override !== undefined,
    override == null ? null : JSON.stringify({ backend: override.backend, model: override.model }),
  ];
}

const UPDATE_SESSION = `UPDATE sessions SET ${patchSet(2)} WHERE id = $1 RETURNING ${SESSION_COLUMNS}`;

/**
 * An append: the rows go to the buffers their flags name, each numbered on from that buffer's
 * last seq, read once from the end of the (session_id, seq) index: ORDER BY … LIMIT 1 and not
 * max(seq), which without fresh statistics the planner may answer by reading every row of the
 * session. `$2` says whether the session patch applies. Data-modifying WITH parts always run, whatever the main part reads.
 */
const APPEND = `
  WITH rows AS (
    SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::boolean[])
      WITH ORDINALITY AS r(id, role, content, payload, created_at, display, context, n)
  ),
  ${(['messages', 'context_messages'] as const)
    .map(
      (table) => `${table === 'messages' ? 'd' : 'c'} AS (
    INSERT INTO ${table} (session_id, seq, id, role, content, payload, created_at)
    SELECT $1, coalesce((SELECT seq FROM ${table} WHERE session_id = $1 ORDER BY seq DESC LIMIT 1), 0)
               + row_number() OVER (ORDER BY n),
           id, role, content, payload::jsonb, created_at
    FROM rows WHERE ${table === 'messages' ? 'display' : 'context'}
  )`,
    )
    .join(',\n  ')}
  UPDATE sessions SET ${patchSet(10)} WHERE id = $1 AND $2::boolean`;

/**
 * A streamed update of one message in both buffers. `$5` is a JSONB of payload keys to set (null
 * when the patch sets none and removes none), `$6` the keys to remove; an emptied payload
 * becomes NULL, as toPayload writes it.
 */
const UPDATE_MESSAGE = `
  WITH ${(['messages', 'context_messages'] as const)
    .map(
      (table) => `${table === 'messages' ? 'd' : 'c'} AS (
    UPDATE ${table} SET
      content = CASE WHEN $3::boolean THEN $4 ELSE content END,
      payload = CASE WHEN $5::jsonb IS NULL THEN payload
                     ELSE nullif((coalesce(payload, '{}'::jsonb) || $5::jsonb) - $6::text[], '{}'::jsonb) END
    WHERE session_id = $1 AND id = $2
    RETURNING 1
  )`,
    )
    .join(',\n  ')}
  SELECT (SELECT count(*) FROM d) + (SELECT count(*) FROM c) AS changed`;

/** A replaced context's rows, numbered from 0 in their order: one INSERT, rows as arrays. */
const REPLACE_CONTEXT = `
  INSERT INTO context_messages (session_id, seq, id, role, content, payload, created_at)
  SELECT $1, n - 1, id, role, content, payload::jsonb, created_at
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
    WITH ORDINALITY AS r(id, role, content, payload, created_at, n)`;

/** The page before a cursor, with the cursor's own check: no row at all when it is unknown. */
const PAGE_BEFORE = `
  SELECT m.id, m.role, m.content, m.payload, m.created_at
  FROM (SELECT seq FROM messages WHERE session_id = $1 AND id = $2) AS cursor
  LEFT JOIN LATERAL (
    SELECT seq, ${MESSAGE_COLUMNS} FROM messages
    WHERE session_id = $1 AND seq < cursor.seq ORDER BY seq DESC LIMIT $3
  ) AS m ON true
  ORDER BY m.seq DESC`;

const PAGE_NEWEST = `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY seq DESC LIMIT $2`;

/** The parameters of APPEND. */
function appendValues(sessionId: string, entries: BufferedMessage[], session?: SessionPatch): unknown[] {
  const c = messageColumns(entries);
  return [
    sessionId,
    session !== undefined,
    c.id,
    c.role,
    c.content,
    c.payload,
    c.created_at,
    c.display,
    c.context,
    ...patchParams(session ?? {}),
  ];
}

/** The statements of the hot paths and how their parameters are made, for the test of their cost. */
export const sessionStatements = {
  append: { text: APPEND, values: appendValues },
  updateMessage: UPDATE_MESSAGE,
  pageNewest: PAGE_NEWEST,
  pageBefore: PAGE_BEFORE,
} as const;

function toRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    id: row.id,
    profile_id: row.profile_id,
    title: row.title,
    pinned: row.pinned,
    created_at: row.created_at,
    last_active: row.last_active,
    context_token_count: row.context_token_count,
  };
  const override = modelChoiceOf(row.model_override);
  if (override) record.model_override = override;
  return record;
}

/** The stored override, when it is one; anything else means the session follows its profile. */
function modelChoiceOf(value: unknown): ModelChoice | undefined {
  const choice = value as Partial<Record<keyof ModelChoice, unknown>> | null;
  if (typeof choice?.backend !== 'string' || typeof choice.model !== 'string') return undefined;
  return { backend: choice.backend as ModelChoice['backend'], model: choice.model };
}

/** Turns constraint errors into messages that say which session or message was wrong. */
function explain(err: unknown, sessionId: string): unknown {
  const code = pgErrorCode(err);
  if (code === FOREIGN_KEY_VIOLATION) return new Error(`Session ${sessionId} does not exist`, { cause: err });
  if (code === UNIQUE_VIOLATION && /_id_unique\b/.test(String((err as Error).message))) {
    return new Error(`A message with this id is already in session ${sessionId}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return err;
}

function isSeqConflict(err: unknown): boolean {
  return pgErrorCode(err) === UNIQUE_VIOLATION && /_seq_unique\b/.test(String((err as Error).message));
}

/** The payload part of `patch`: keys to set (null when none changes) and keys to remove. */
function payloadPatch(patch: MessagePatch): { set: string | null; remove: string[] } {
  const set: Record<string, string | string[] | true> = {};
  const remove: string[] = [];
  if (patch.thinking !== undefined) set.thinking = pgText(patch.thinking);
  if (patch.unverified_claims !== undefined) set.unverified_claims = patch.unverified_claims.map(pgText);
  for (const mark of ['interrupted', 'stopped'] as const) {
    if (patch[mark] === true) set[mark] = true;
    else if (patch[mark] === false) remove.push(mark);
  }
  const changes = Object.keys(set).length > 0 || remove.length > 0;
  return { set: changes ? JSON.stringify(set) : null, remove };
}

export class PgSessionStore implements SessionStore {
  constructor(readonly db: PgDatabase) {}

  async create(input: NewSession): Promise<SessionRecord> {
    refuseNul('session id', input.id);
    refuseNul('profile id', input.profile_id);
    const createdAt = input.created_at ?? new Date().toISOString();
    try {
      const [row] = await this.db.rows<SessionRow>(
        `INSERT INTO sessions (id, profile_id, title, created_at, last_active)
         VALUES ($1, $2, $3, $4, $4) RETURNING ${SESSION_COLUMNS}`,
        [input.id, input.profile_id, pgText(input.title ?? ''), createdAt],
      );
      return toRecord(row as SessionRow);
    } catch (err) {
      if (pgErrorCode(err) === UNIQUE_VIOLATION) {
        throw new Error(`A session with id ${input.id} already exists`, { cause: err });
      }
      throw err;
    }
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    if (!storableKey(id)) return undefined;
    const [row] = await this.db.rows<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [
      id,
    ]);
    return row ? toRecord(row) : undefined;
  }

  async list(): Promise<SessionRecord[]> {
    // created_at and id break ties so the order is stable between calls (byte order, as SQLite).
    const rows = await this.db.rows<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions
       ORDER BY pinned DESC, last_active DESC, created_at DESC, id COLLATE "C"`,
    );
    return rows.map(toRecord);
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord | undefined> {
    if (!storableKey(id)) return undefined;
    const [row] = await this.db.rows<SessionRow>(UPDATE_SESSION, [id, ...patchParams(patch)]);
    return row ? toRecord(row) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!storableKey(id)) return false;
    // Both buffers go with the session row through ON DELETE CASCADE; kv state and file records
    // have no foreign key (subagent ids are not sessions), so they go by name, in the same statement.
    const result = await this.db.query(
      `WITH kv AS (DELETE FROM session_kv WHERE session_id = $1),
            files AS (DELETE FROM session_files WHERE session_id = $1)
       DELETE FROM sessions WHERE id = $1`,
      [id],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async getMessages(sessionId: string): Promise<StoredMessage[]> {
    return this.all('messages', sessionId);
  }

  async getMessagePage(
    sessionId: string,
    options: { limit: number; before?: string },
  ): Promise<MessagePage | undefined> {
    // One row past the page tells whether an older page exists, without counting the session.
    let rows: MessageRow[];
    if (options.before === undefined) {
      // No stored session has this id (PostgreSQL would refuse the NUL rather than find nothing).
      if (!storableKey(sessionId)) return { messages: [], next_before: null };
      rows = await this.db.rows<MessageRow>(PAGE_NEWEST, [sessionId, options.limit + 1]);
    } else {
      if (!storableKey(options.before) || !storableKey(sessionId)) return undefined;
      const found = await this.db.pool.query<MessageRow>({
        name: 'navi_page_before',
        text: PAGE_BEFORE,
        values: [sessionId, options.before, options.limit + 1],
      });
      if (found.rows.length === 0) return undefined;
      // The cursor exists but nothing is older: one row of nulls from the outer join.
      rows = found.rows.filter((row) => row.id !== null);
    }
    const more = rows.length > options.limit;
    const page = (more ? rows.slice(0, options.limit) : rows).reverse().map(fromRow);
    return { messages: page, next_before: more && page.length > 0 ? page[0]!.id : null };
  }

  async getMessage(sessionId: string, messageId: string): Promise<StoredMessage | undefined> {
    if (!storableKey(sessionId) || !storableKey(messageId)) return undefined;
    const [row] = await this.db.rows<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND id = $2`,
      [sessionId, messageId],
    );
    return row ? fromRow(row) : undefined;
  }

  async getContext(sessionId: string): Promise<StoredMessage[]> {
    return this.all('context_messages', sessionId);
  }

  async isInContext(sessionId: string, messageId: string): Promise<boolean> {
    if (!storableKey(sessionId) || !storableKey(messageId)) return false;
    const rows = await this.db.rows('SELECT 1 FROM context_messages WHERE session_id = $1 AND id = $2', [
      sessionId,
      messageId,
    ]);
    return rows.length > 0;
  }

  async append(sessionId: string, entries: BufferedMessage[], session?: SessionPatch): Promise<void> {
    if (entries.length === 0) {
      // A patch alone is an update, as on SQLite (an unknown session changes nothing).
      if (session) await this.update(sessionId, session);
      return;
    }
    for (const { message } of entries) refuseNul('message id', message.id);
    const values = appendValues(sessionId, entries, session);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.transaction(async (client) => {
          await this.lockSession(client, sessionId);
          await client.query({ name: 'navi_append', text: APPEND, values });
        });
        return;
      } catch (err) {
        if (attempt < SEQ_ATTEMPTS && isSeqConflict(err)) continue;
        throw explain(err, sessionId);
      }
    }
  }

  async updateMessage(sessionId: string, messageId: string, patch: MessagePatch): Promise<void> {
    const payload = payloadPatch(patch);
    let changed = 0;
    if (storableKey(sessionId) && storableKey(messageId)) {
      const [row] = (
        await this.db.pool.query<{ changed: number }>({
          name: 'navi_update_message',
          text: UPDATE_MESSAGE,
          values: [
            sessionId,
            messageId,
            patch.content !== undefined,
            patch.content == null ? null : pgText(patch.content),
            payload.set,
            payload.remove,
          ],
        })
      ).rows;
      changed = row?.changed ?? 0;
    }
    if (changed === 0) throw new Error(`Message ${messageId} is not in session ${sessionId}`);
  }

  async replaceContextPrefix(
    sessionId: string,
    firstKeptId: string | null,
    summary: StoredMessage,
  ): Promise<void> {
    const notInContext = () =>
      new Error(`Message ${firstKeptId} is not in the context of session ${sessionId}`);
    if (firstKeptId !== null && !storableKey(firstKeptId)) throw notInContext();
    refuseNul('message id', summary.id);
    try {
      await this.db.transaction(async (client) => {
        await this.lockSession(client, sessionId);
        let summarySeq = 0;
        if (firstKeptId === null) {
          await client.query('DELETE FROM context_messages WHERE session_id = $1', [sessionId]);
        } else {
          const { rows } = await client.query<{ seq: number }>(
            `WITH kept AS (SELECT seq FROM context_messages WHERE session_id = $1 AND id = $2),
                  gone AS (DELETE FROM context_messages WHERE session_id = $1 AND seq < (SELECT seq FROM kept))
             SELECT seq FROM kept`,
            [sessionId, firstKeptId],
          );
          const keptSeq = rows[0]?.seq;
          // Refusing is safer than guessing: a wrong guess would drop the whole context.
          if (keptSeq === undefined) throw notInContext();
          summarySeq = keptSeq - 1;
        }
        await client.query(
          `INSERT INTO context_messages (session_id, seq, id, role, content, payload, created_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
          [sessionId, summarySeq, ...messageParams(summary)],
        );
      });
    } catch (err) {
      throw explain(err, sessionId);
    }
  }

  async replaceContext(sessionId: string, messages: StoredMessage[]): Promise<void> {
    for (const message of messages) refuseNul('message id', message.id);
    try {
      await this.db.transaction(async (client) => {
        await this.lockSession(client, sessionId);
        await client.query('DELETE FROM context_messages WHERE session_id = $1', [sessionId]);
        if (messages.length === 0) return;
        const c = messageColumns(messages.map((message) => ({ message, display: false, context: true })));
        await client.query({
          name: 'navi_replace_context',
          text: REPLACE_CONTEXT,
          values: [sessionId, c.id, c.role, c.content, c.payload, c.created_at],
        });
      });
    } catch (err) {
      throw explain(err, sessionId);
    }
  }

  async rewind(sessionId: string, anchorId: string, options: { keepAnchor: boolean }): Promise<RewindResult> {
    if (!storableKey(sessionId) || !storableKey(anchorId)) return { ok: false, reason: 'not_found' };
    return this.db.transaction(async (client): Promise<RewindResult> => {
      if (!(await this.lockSession(client, sessionId, false))) return { ok: false, reason: 'not_found' };
      // Each buffer is cut at the anchor's own seq there: the two orders differ (display-only
      // and context-only rows, a summary below the kept rows), but both put later messages above it.
      const { rows } = await client.query<{ display: number | null; context: number | null }>(
        `SELECT (SELECT seq FROM messages WHERE session_id = $1 AND id = $2) AS display,
                (SELECT seq FROM context_messages WHERE session_id = $1 AND id = $2) AS context`,
        [sessionId, anchorId],
      );
      const seqs = rows[0];
      if (seqs?.display == null) return { ok: false, reason: 'not_found' };
      if (seqs.context == null) return { ok: false, reason: 'not_in_context' };
      const step = options.keepAnchor ? 1 : 0;
      const removed = await client.query<{ id: string; seq: number }>(
        `WITH c AS (DELETE FROM context_messages WHERE session_id = $1 AND seq >= $3)
         DELETE FROM messages WHERE session_id = $1 AND seq >= $2 RETURNING id, seq`,
        [sessionId, seqs.display + step, seqs.context + step],
      );
      // RETURNING has no order of its own.
      const removedIds = removed.rows.sort((a, b) => a.seq - b.seq).map((row) => row.id);
      return { ok: true, removedIds };
    });
  }

  private async all(table: Buffer, sessionId: string): Promise<StoredMessage[]> {
    if (!storableKey(sessionId)) return [];
    const rows = await this.db.rows<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM ${table} WHERE session_id = $1 ORDER BY seq`,
      [sessionId],
    );
    return rows.map(fromRow);
  }

  /**
   * Locks the session row for the rest of the transaction, so seq is allocated or cut by one
   * writer at a time. When the session does not exist: throws, or resolves false if not `required`.
   */
  private async lockSession(client: PgQueryable, sessionId: string, required = true): Promise<boolean> {
    const { rowCount } = !storableKey(sessionId)
      ? { rowCount: 0 }
      : await client.query('SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE', [sessionId]);
    if ((rowCount ?? 0) > 0) return true;
    if (required) throw new Error(`Session ${sessionId} does not exist`);
    return false;
  }
}
