/**
 * Store interfaces. SQL lives behind these: this build stores everything in one embedded
 * SQLite file, and another database engine could implement them without touching their callers
 * (docs/architecture.md#storage). Every method is async for that reason, even where SQLite
 * answers synchronously.
 */
import type {
  MessagePage,
  ModelChoice,
  RecallSummary,
  SearchHit,
  SessionMessage,
  SessionSummary,
} from '../protocol/rest.js';

export type SessionRecord = SessionSummary;
export type StoredMessage = SessionMessage;

export interface NewSession {
  id: string;
  profile_id: string;
  title?: string;
  /** ISO time; defaults to now. */
  created_at?: string;
}

export interface SessionPatch {
  title?: string;
  pinned?: boolean;
  profile_id?: string;
  context_token_count?: number;
  last_active?: string;
  /** The backend and model the session uses instead of its profile's; null clears it. */
  model_override?: ModelChoice | null;
}

/** Which buffers a message belongs to (docs/architecture.md#two-buffers). Most messages are in both. */
export interface BufferedMessage {
  message: StoredMessage;
  display: boolean;
  context: boolean;
}

export interface MessagePatch {
  content?: string | null;
  thinking?: string;
  /** Sets (true) or removes (false) the message's `interrupted` mark. */
  interrupted?: boolean;
  /** Sets the claims of an answer that no tool call backed (the claim check). */
  unverified_claims?: string[];
  /** Sets (true) or removes (false) the message's `stopped` mark. */
  stopped?: boolean;
}

export interface SessionStore {
  create(input: NewSession): Promise<SessionRecord>;
  get(id: string): Promise<SessionRecord | undefined>;
  /** Pinned first, then by `last_active` descending. */
  list(): Promise<SessionRecord[]>;
  update(id: string, patch: SessionPatch): Promise<SessionRecord | undefined>;
  /** Removes the session, both buffers, its key-value state and its file records. */
  delete(id: string): Promise<boolean>;

  /** Display buffer, oldest first. */
  getMessages(sessionId: string): Promise<StoredMessage[]>;
  /**
   * One page of the display buffer: the `limit` messages just older than `before` (the newest
   * when `before` is absent), oldest first, and the cursor for the page before them. Undefined
   * when `before` is not a display message of this session. Costs the page, not the session.
   */
  getMessagePage(
    sessionId: string,
    options: { limit: number; before?: string },
  ): Promise<MessagePage | undefined>;
  /** The display message `messageId` of this session, or undefined. Costs one message. */
  getMessage(sessionId: string, messageId: string): Promise<StoredMessage | undefined>;
  /** LLM context buffer, oldest first. */
  getContext(sessionId: string): Promise<StoredMessage[]>;
  /** Whether the context buffer still holds `messageId` (compression may have summarised it). */
  isInContext(sessionId: string, messageId: string): Promise<boolean>;
  /**
   * Appends messages to the buffers they name, in order, in one transaction. Cost is in
   * proportion to what is appended, never to the session's length. `session`, when given, is
   * applied to the session row in the same transaction (as `update` would).
   */
  append(sessionId: string, entries: BufferedMessage[], session?: SessionPatch): Promise<void>;
  /**
   * Updates a message already appended (by its id, in whichever buffers hold it). Used only for
   * the message being streamed, so a partial answer is on disk while it grows.
   */
  updateMessage(sessionId: string, messageId: string, patch: MessagePatch): Promise<void>;
  /**
   * Compression: removes from the context buffer every message older than `firstKeptId` and puts
   * `summary` in their place, in one transaction. The display buffer is not touched.
   */
  replaceContextPrefix(sessionId: string, firstKeptId: string | null, summary: StoredMessage): Promise<void>;
  /**
   * The OpenAI-compatible API's history (docs/openai-api.md#sessions-and-history): the context
   * buffer becomes exactly `messages`, in their order, in one transaction. The display buffer is
   * not touched.
   */
  replaceContext(sessionId: string, messages: StoredMessage[]): Promise<void>;
  /**
   * `value` as this store would write it: the masking store (masking-store.ts) hides the secrets
   * Navi knows, so a text compared with stored ones (a client's history, client-history.ts) must
   * pass here first. Absent: values are stored as given.
   */
  asStored?<T>(value: T): T;
  /**
   * Regenerate and edit (docs/architecture.md#rewinding): removes every message after `anchorId`,
   * and the anchor itself unless `keepAnchor`, from both buffers (each by its own order), in one
   * transaction. Resolves to the display ids removed, oldest first. Changes nothing when the
   * anchor is not in the display buffer (`not_found`) or no longer in the context buffer
   * (`not_in_context`: compression summarised it, so there is no point to cut the context at).
   */
  rewind(sessionId: string, anchorId: string, options: { keepAnchor: boolean }): Promise<RewindResult>;
}

export type RewindResult =
  | { ok: true; removedIds: string[] }
  | { ok: false; reason: 'not_found' | 'not_in_context' };

/** The most hits one search answers; `SearchStore.search` clamps its `limit` to 1…this. */
export const MAX_SEARCH_LIMIT = 50;

/**
 * Search across chats: session titles and the display messages people read (the user's words
 * and the answers; not tool output, reasoning or the model's context), kept current as they
 * change. An engine implements it with whatever full-text index it has.
 */
export interface SearchStore {
  /**
   * What matches the words of `text`, best first, at most `limit` (clamped to 1…50). `text` is
   * plain words typed by a person: any characters at all are allowed, none has a meaning of its
   * own, and the last word, while it is being typed (no space after it), also matches as the
   * start of a longer one ("deplo" finds "deployment"). Every word must match. Text with no
   * word in it finds nothing (no error). A title match weighs more than a match in a message.
   */
  search(text: string, limit: number): Promise<SearchHit[]>;
}

/** Per-session key-value state (scratchpad, todo, …): JSON values. */
export interface KvStore {
  get<T = unknown>(sessionId: string, key: string): Promise<T | undefined>;
  set(sessionId: string, key: string, value: unknown): Promise<void>;
  delete(sessionId: string, key: string): Promise<boolean>;
  /** Removes every key of a session (subagent clean-up). */
  clear(sessionId: string): Promise<void>;
}

export interface SessionFileRecord {
  session_id: string;
  name: string;
  /** Absolute path on disk. */
  path: string;
  size: number;
  mime_type: string;
  created_at: string;
  expires_at: string;
}

export interface FileStore {
  add(record: SessionFileRecord): Promise<void>;
  get(sessionId: string, name: string): Promise<SessionFileRecord | undefined>;
  list(sessionId: string): Promise<SessionFileRecord[]>;
  remove(sessionId: string, name: string): Promise<boolean>;
  /** Records whose `expires_at` is at or before `now`; the caller deletes the files. */
  expired(now: Date): Promise<SessionFileRecord[]>;
}

/** Why a pairing code was not accepted. */
export type PairingRefusal = 'unknown' | 'expired' | 'used';

export type PairingResult = { ok: true; secret: string } | { ok: false; reason: PairingRefusal };

/**
 * The person's consent credential: pairing codes and paired clients. Codes and secrets are
 * stored hashed; the plain values exist only in the answers of `createPairingCode` and
 * `redeemPairingCode`.
 */
export interface ConsentStore {
  /**
   * A new single-use code, valid for `ttlMs` from `now`, formatted for people (`ABCD-EFGH-JKMN`).
   * Also forgets codes that have expired.
   */
  createPairingCode(ttlMs: number, now?: Date): Promise<string>;
  /**
   * Uses up `code` (case, spaces and dashes do not matter) and pairs a new client: the secret
   * to put in its cookie. Atomic, so one code pairs at most one client.
   */
  redeemPairingCode(code: string, userAgent: string, now?: Date): Promise<PairingResult>;
  /** Whether `secret` belongs to a paired client (and notes that it was used). */
  isPaired(secret: string, now?: Date): Promise<boolean>;
  /** Forgets the client holding `secret`; false when there was none. */
  unpair(secret: string): Promise<boolean>;
  /** Forgets every paired client; resolves to how many there were. */
  unpairAll(): Promise<number>;
}

/** A stored recall: everything of `RecallSummary` but its description in words. */
export type RecallRecord = Omit<RecallSummary, 'description'>;

/** When an active recall is next due. */
export interface RecallTime {
  id: string;
  next_run_at: string;
}

export type RecallPatch = Partial<
  Pick<RecallRecord, 'status' | 'next_run_at' | 'last_run_at' | 'last_outcome' | 'run_count'>
>;

/** What a claim's `start` decided: its result, and the change that moves the recall on (none leaves it due). */
export interface RecallClaimStart<T> {
  value: T;
  patch?: RecallPatch;
}

/**
 * How a claim ended: `claimed` (start ran, its patch is stored), `taken` (another process holds
 * this occurrence right now), or `gone` (the recall is no longer active at that due time: run,
 * skipped, cancelled or deleted).
 */
export type RecallClaim<T> = { kind: 'claimed'; value: T } | { kind: 'taken' } | { kind: 'gone' };

/**
 * Recalls: prompts that run later in their session. A session's recalls go with it when it is
 * deleted.
 */
export interface RecallStore {
  /**
   * Fires one occurrence exactly once, however many processes share the store: if recall `id` is
   * still active and due at `dueAt`, and no one else holds it, calls `start` with the current
   * record while holding it, and stores `start`'s patch together with releasing it. A claim
   * held by a process that dies is released with it. `start` throwing releases the claim and
   * changes nothing.
   */
  claim<T>(
    id: string,
    dueAt: string,
    start: (current: RecallRecord) => Promise<RecallClaimStart<T>>,
  ): Promise<RecallClaim<T>>;
  add(recall: RecallRecord): Promise<void>;
  get(id: string): Promise<RecallRecord | undefined>;
  /** A session's recalls: active ones soonest first, then finished ones, newest first (at most `limit` of those). */
  listForSession(sessionId: string, finishedLimit?: number): Promise<RecallRecord[]>;
  countActive(sessionId: string): Promise<number>;
  /**
   * When the active recalls are next due, soonest first, at most `limit`: the id and time only,
   * since a scheduler reads this on every poll and prompts are long.
   */
  soonest(limit: number): Promise<RecallTime[]>;
  /** Active recalls due at or before `nowIso` (ISO-8601 UTC), soonest first, at most `limit`. */
  due(nowIso: string, limit: number): Promise<RecallRecord[]>;
  /** Changes what `patch` names; resolves to the updated recall, or undefined when there is none. */
  update(id: string, patch: RecallPatch): Promise<RecallRecord | undefined>;
}
