/**
 * SessionStore on SQLite (docs/architecture.md#sessions). Every statement is prepared once in the constructor. The
 * two buffers live in `messages` (display) and `context_messages` (LLM context) with the same
 * shape, each ordered by an integer `seq` per session.
 *
 * Compression ordering: replaceContextPrefix deletes the context rows below the first kept row
 * and inserts the summary at (that row's seq − 1), which is free once the older rows are gone.
 * Nothing is renumbered, so compression costs the rows it deletes, and seq may go negative.
 */
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
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
import { fromRow, type MessageRow, toPayload } from './message-rows.js';

interface SessionRow {
  id: string;
  profile_id: string;
  title: string;
  pinned: 0 | 1;
  created_at: string;
  last_active: string;
  context_token_count: number;
  /** JSON `{backend, model}`, or null while the session follows its profile. */
  model_override: string | null;
}

interface InsertMessage {
  session_id: string;
  seq: number;
  id: string;
  role: string;
  content: string | null;
  payload: string | null;
  created_at: string;
}

interface UpdateMessage {
  session_id: string;
  id: string;
  set_content: 0 | 1;
  content: string | null;
  /** JSON merge patch of the payload, or null to leave it as it is. */
  patch: string | null;
}

/** The statements of one buffer table. */
class BufferStatements {
  readonly insert: Statement<[InsertMessage]>;
  readonly lastSeq: Statement<[string], number>;
  readonly seqOf: Statement<[string, string], number>;
  readonly all: Statement<[string], MessageRow>;
  readonly byId: Statement<[string, string], MessageRow>;
  /** The newest `limit` rows, newest first; and those before a seq. Both walk the index backwards. */
  readonly newest: Statement<[string, number], MessageRow>;
  readonly olderThan: Statement<[string, number, number], MessageRow>;
  readonly update: Statement<[UpdateMessage]>;
  readonly deleteBefore: Statement<[string, number]>;
  readonly deleteAll: Statement<[string]>;
  readonly idsFrom: Statement<[string, number], string>;
  readonly deleteFrom: Statement<[string, number]>;

  constructor(db: Database, table: 'messages' | 'context_messages') {
    this.insert = db.prepare(
      `INSERT INTO ${table} (session_id, seq, id, role, content, payload, created_at)
       VALUES (@session_id, @seq, @id, @role, @content, @payload, @created_at)`,
    );
    // ORDER BY … LIMIT 1 walks the (session_id, seq) index from its end: one row read.
    this.lastSeq = db
      .prepare<[string], number>(`SELECT seq FROM ${table} WHERE session_id = ? ORDER BY seq DESC LIMIT 1`)
      .pluck();
    this.seqOf = db
      .prepare<[string, string], number>(`SELECT seq FROM ${table} WHERE session_id = ? AND id = ?`)
      .pluck();
    this.all = db.prepare(
      `SELECT id, role, content, payload, created_at FROM ${table} WHERE session_id = ? ORDER BY seq`,
    );
    this.byId = db.prepare(
      `SELECT id, role, content, payload, created_at FROM ${table} WHERE session_id = ? AND id = ?`,
    );
    this.newest = db.prepare(
      `SELECT id, role, content, payload, created_at FROM ${table}
       WHERE session_id = ? ORDER BY seq DESC LIMIT ?`,
    );
    this.olderThan = db.prepare(
      `SELECT id, role, content, payload, created_at FROM ${table}
       WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    );
    // One statement per buffer whatever the patch holds, so a streaming save is one indexed update.
    // A JSON merge patch keeps the other payload keys (images, tool calls…) without reading them
    // out; its nulls remove keys. An emptied payload becomes NULL, as toPayload writes it.
    this.update = db.prepare(
      `UPDATE ${table} SET
         content = CASE WHEN @set_content THEN @content ELSE content END,
         payload = CASE
           WHEN @patch IS NULL THEN payload
           ELSE nullif(json_patch(coalesce(payload, '{}'), @patch), '{}')
         END
       WHERE session_id = @session_id AND id = @id`,
    );
    this.deleteBefore = db.prepare(`DELETE FROM ${table} WHERE session_id = ? AND seq < ?`);
    this.deleteAll = db.prepare(`DELETE FROM ${table} WHERE session_id = ?`);
    this.idsFrom = db
      .prepare<[string, number], string>(
        `SELECT id FROM ${table} WHERE session_id = ? AND seq >= ? ORDER BY seq`,
      )
      .pluck();
    this.deleteFrom = db.prepare(`DELETE FROM ${table} WHERE session_id = ? AND seq >= ?`);
  }
}

function toRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    id: row.id,
    profile_id: row.profile_id,
    title: row.title,
    pinned: row.pinned === 1,
    created_at: row.created_at,
    last_active: row.last_active,
    context_token_count: row.context_token_count,
  };
  const override = modelChoiceOf(row.model_override);
  if (override) record.model_override = override;
  return record;
}

/** The stored override, when it is one; anything else means the session follows its profile. */
function modelChoiceOf(json: string | null): ModelChoice | undefined {
  if (json === null) return undefined;
  const value = JSON.parse(json) as Partial<Record<keyof ModelChoice, unknown>> | null;
  if (typeof value?.backend !== 'string' || typeof value.model !== 'string') return undefined;
  return { backend: value.backend as ModelChoice['backend'], model: value.model };
}

function insertRow(sessionId: string, seq: number, m: StoredMessage): InsertMessage {
  return {
    session_id: sessionId,
    seq,
    id: m.id,
    role: m.role,
    content: m.content,
    payload: toPayload(m),
    created_at: m.created_at,
  };
}

/** The parameters of the session patch statement: null leaves a column as it is. */
function patchRow(id: string, patch: SessionPatch): Record<string, string | number | null> {
  return {
    id,
    title: patch.title ?? null,
    pinned: patch.pinned === undefined ? null : patch.pinned ? 1 : 0,
    profile_id: patch.profile_id ?? null,
    context_token_count: patch.context_token_count ?? null,
    last_active: patch.last_active ?? null,
    set_model: patch.model_override === undefined ? 0 : 1,
    model_override:
      patch.model_override == null
        ? null
        : JSON.stringify({ backend: patch.model_override.backend, model: patch.model_override.model }),
  };
}

/** Turns SQLite constraint codes into messages that say which session or message was wrong. */
function explain(err: unknown, sessionId: string): unknown {
  if (!(err instanceof BetterSqlite3.SqliteError)) return err;
  if (err.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return new Error(`Session ${sessionId} does not exist`, { cause: err });
  }
  if (err.code === 'SQLITE_CONSTRAINT_UNIQUE') {
    return new Error(`A message with this id is already in session ${sessionId}: ${err.message}`, {
      cause: err,
    });
  }
  return err;
}

const SESSION_COLUMNS =
  'id, profile_id, title, pinned, created_at, last_active, context_token_count, model_override';

export class SqliteSessionStore implements SessionStore {
  private readonly display: BufferStatements;
  private readonly context: BufferStatements;
  private readonly insertSession: Statement<[SessionRow]>;
  private readonly selectSession: Statement<[string], SessionRow>;
  private readonly selectAll: Statement<[], SessionRow>;
  private readonly patchSession: Statement<[Record<string, string | number | null>]>;
  private readonly deleteSession: Statement<[string]>;
  private readonly deleteKv: Statement<[string]>;
  private readonly deleteFiles: Statement<[string]>;
  private readonly appendTx: (sessionId: string, entries: BufferedMessage[], session?: SessionPatch) => void;
  private readonly updateTx: (sessionId: string, messageId: string, patch: MessagePatch) => void;
  private readonly replaceContextTx: (sessionId: string, messages: StoredMessage[]) => void;
  private readonly compressTx: (
    sessionId: string,
    firstKeptId: string | null,
    summary: StoredMessage,
  ) => void;
  private readonly deleteTx: (id: string) => boolean;
  private readonly rewindTx: (sessionId: string, anchorId: string, keepAnchor: boolean) => RewindResult;

  constructor(db: Database) {
    this.display = new BufferStatements(db, 'messages');
    this.context = new BufferStatements(db, 'context_messages');
    this.insertSession = db.prepare(
      `INSERT INTO sessions (${SESSION_COLUMNS})
       VALUES (@id, @profile_id, @title, @pinned, @created_at, @last_active, @context_token_count,
               @model_override)`,
    );
    this.selectSession = db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`);
    // created_at and id break ties so the order is stable between calls.
    this.selectAll = db.prepare(
      `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY pinned DESC, last_active DESC, created_at DESC, id`,
    );
    // A null parameter means "not in the patch": no patchable column is ever null, but for the
    // model override, which null clears; @set_model says whether the patch names it.
    this.patchSession = db.prepare(
      `UPDATE sessions SET
         title = coalesce(@title, title),
         pinned = coalesce(@pinned, pinned),
         profile_id = coalesce(@profile_id, profile_id),
         context_token_count = coalesce(@context_token_count, context_token_count),
         last_active = coalesce(@last_active, last_active),
         model_override = CASE WHEN @set_model THEN @model_override ELSE model_override END
       WHERE id = @id`,
    );
    this.deleteSession = db.prepare('DELETE FROM sessions WHERE id = ?');
    this.deleteKv = db.prepare('DELETE FROM session_kv WHERE session_id = ?');
    this.deleteFiles = db.prepare('DELETE FROM session_files WHERE session_id = ?');

    this.appendTx = db.transaction(
      (sessionId: string, entries: BufferedMessage[], session?: SessionPatch) => {
        // Read each buffer's last seq at most once per call, then count on from it.
        let nextDisplay: number | undefined;
        let nextContext: number | undefined;
        for (const { message, display, context } of entries) {
          if (display) {
            nextDisplay ??= (this.display.lastSeq.get(sessionId) ?? 0) + 1;
            this.display.insert.run(insertRow(sessionId, nextDisplay++, message));
          }
          if (context) {
            nextContext ??= (this.context.lastSeq.get(sessionId) ?? 0) + 1;
            this.context.insert.run(insertRow(sessionId, nextContext++, message));
          }
        }
        // One commit for the turn's write and the session row it changes (last_active, tokens).
        if (session) this.patchSession.run(patchRow(sessionId, session));
      },
    );

    this.updateTx = db.transaction((sessionId: string, messageId: string, patch: MessagePatch) => {
      const params: UpdateMessage = {
        session_id: sessionId,
        id: messageId,
        set_content: patch.content === undefined ? 0 : 1,
        content: patch.content ?? null,
        patch: payloadPatch(patch),
      };
      const changed = this.display.update.run(params).changes + this.context.update.run(params).changes;
      if (changed === 0) throw new Error(`Message ${messageId} is not in session ${sessionId}`);
    });

    this.replaceContextTx = db.transaction((sessionId: string, messages: StoredMessage[]) => {
      // An empty list inserts nothing, so no foreign key would catch an unknown session.
      if (!this.selectSession.get(sessionId)) throw new Error(`Session ${sessionId} does not exist`);
      this.context.deleteAll.run(sessionId);
      for (const [seq, message] of messages.entries())
        this.context.insert.run(insertRow(sessionId, seq, message));
    });
    this.compressTx = db.transaction(
      (sessionId: string, firstKeptId: string | null, summary: StoredMessage) => {
        let summarySeq = 0;
        if (firstKeptId === null) {
          this.context.deleteAll.run(sessionId);
        } else {
          const keptSeq = this.context.seqOf.get(sessionId, firstKeptId);
          // Refusing is safer than guessing: a wrong guess would drop the whole context.
          if (keptSeq === undefined) {
            throw new Error(`Message ${firstKeptId} is not in the context of session ${sessionId}`);
          }
          this.context.deleteBefore.run(sessionId, keptSeq);
          summarySeq = keptSeq - 1;
        }
        this.context.insert.run(insertRow(sessionId, summarySeq, summary));
      },
    );

    // Each buffer is cut at the anchor's own seq there: the two orders differ (display-only and
    // context-only rows, a summary below the kept rows), but both put later messages above it.
    this.rewindTx = db.transaction((sessionId: string, anchorId: string, keepAnchor: boolean) => {
      const displaySeq = this.display.seqOf.get(sessionId, anchorId);
      if (displaySeq === undefined) return { ok: false, reason: 'not_found' } as const;
      const contextSeq = this.context.seqOf.get(sessionId, anchorId);
      if (contextSeq === undefined) return { ok: false, reason: 'not_in_context' } as const;
      const step = keepAnchor ? 1 : 0;
      const removedIds = this.display.idsFrom.all(sessionId, displaySeq + step);
      this.display.deleteFrom.run(sessionId, displaySeq + step);
      this.context.deleteFrom.run(sessionId, contextSeq + step);
      return { ok: true, removedIds } as const;
    });

    this.deleteTx = db.transaction((id: string) => {
      this.deleteKv.run(id);
      this.deleteFiles.run(id);
      // Both buffers go with the session row through ON DELETE CASCADE.
      return this.deleteSession.run(id).changes > 0;
    });
  }

  async create(input: NewSession): Promise<SessionRecord> {
    const createdAt = input.created_at ?? new Date().toISOString();
    const row: SessionRow = {
      id: input.id,
      profile_id: input.profile_id,
      title: input.title ?? '',
      pinned: 0,
      created_at: createdAt,
      last_active: createdAt,
      context_token_count: 0,
      model_override: null,
    };
    this.insertSession.run(row);
    return toRecord(row);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const row = this.selectSession.get(id);
    return row ? toRecord(row) : undefined;
  }

  async list(): Promise<SessionRecord[]> {
    return this.selectAll.all().map(toRecord);
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord | undefined> {
    this.patchSession.run(patchRow(id, patch));
    return this.get(id);
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteTx(id);
  }

  async getMessages(sessionId: string): Promise<StoredMessage[]> {
    return this.display.all.all(sessionId).map(fromRow);
  }

  async getMessagePage(
    sessionId: string,
    options: { limit: number; before?: string },
  ): Promise<MessagePage | undefined> {
    // One row past the page tells whether an older page exists, without counting the session.
    let rows: MessageRow[];
    if (options.before === undefined) {
      rows = this.display.newest.all(sessionId, options.limit + 1);
    } else {
      const seq = this.display.seqOf.get(sessionId, options.before);
      if (seq === undefined) return undefined;
      rows = this.display.olderThan.all(sessionId, seq, options.limit + 1);
    }
    const more = rows.length > options.limit;
    const page = (more ? rows.slice(0, options.limit) : rows).reverse().map(fromRow);
    return { messages: page, next_before: more && page.length > 0 ? page[0]!.id : null };
  }

  async getMessage(sessionId: string, messageId: string): Promise<StoredMessage | undefined> {
    const row = this.display.byId.get(sessionId, messageId);
    return row ? fromRow(row) : undefined;
  }

  async getContext(sessionId: string): Promise<StoredMessage[]> {
    return this.context.all.all(sessionId).map(fromRow);
  }

  async isInContext(sessionId: string, messageId: string): Promise<boolean> {
    return this.context.seqOf.get(sessionId, messageId) !== undefined;
  }

  async append(sessionId: string, entries: BufferedMessage[], session?: SessionPatch): Promise<void> {
    if (entries.length === 0 && !session) return;
    try {
      this.appendTx(sessionId, entries, session);
    } catch (err) {
      throw explain(err, sessionId);
    }
  }

  async updateMessage(sessionId: string, messageId: string, patch: MessagePatch): Promise<void> {
    this.updateTx(sessionId, messageId, patch);
  }

  async replaceContextPrefix(
    sessionId: string,
    firstKeptId: string | null,
    summary: StoredMessage,
  ): Promise<void> {
    try {
      this.compressTx(sessionId, firstKeptId, summary);
    } catch (err) {
      throw explain(err, sessionId);
    }
  }

  async replaceContext(sessionId: string, messages: StoredMessage[]): Promise<void> {
    try {
      this.replaceContextTx(sessionId, messages);
    } catch (err) {
      throw explain(err, sessionId);
    }
  }

  async rewind(sessionId: string, anchorId: string, options: { keepAnchor: boolean }): Promise<RewindResult> {
    return this.rewindTx(sessionId, anchorId, options.keepAnchor);
  }
}

/** The payload part of `patch` as a JSON merge patch, or null when it changes no payload key. */
function payloadPatch(patch: MessagePatch): string | null {
  const merge: Record<string, string | string[] | true | null> = {};
  if (patch.thinking !== undefined) merge.thinking = patch.thinking;
  if (patch.unverified_claims !== undefined) merge.unverified_claims = patch.unverified_claims;
  if (patch.interrupted !== undefined) merge.interrupted = patch.interrupted ? true : null;
  if (patch.stopped !== undefined) merge.stopped = patch.stopped ? true : null;
  return Object.keys(merge).length > 0 ? JSON.stringify(merge) : null;
}
