/**
 * Which Navi session a Chat Completions request runs in. OpenAI's API keeps no state, so a
 * client names the conversation itself: `metadata.session_id` (or, failing that, `user`) is
 * either a Navi session's id, or a key of the client's own that Navi maps to a session it
 * creates on first use. Without a key, every request is a new session.
 *
 * The mapping lives in the key-value store under a reserved id that is no session's: the
 * `session_kv` table has no foreign key to sessions on either engine (subagents keep state the
 * same way). A second reserved id maps each such session back to its one entry, so deleting the
 * session removes the entry (`forgetConversation`, from `onSessionDeleted`) rather than leaving
 * one behind for every key a client ever used.
 */

import { NAVI_MODEL_PREFIX } from '../../protocol/openai.js';
import type { KvStore, SessionRecord } from '../../store/types.js';
import { createSession, discardEmptySession } from '../headless-run.js';
import type { RunRegistry } from '../run-registry.js';
import type { NaviServices } from '../services.js';
import { isUuid } from '../session-lookup.js';
import { OpenAiParamError } from './errors.js';

/** The key-value "session" holding conversation keys; not a UUID, so no session can be it. */
export const CONVERSATIONS_KV_ID = 'openai_conversations';
/** The key-value "session" mapping a session id back to its conversation key's entry. */
export const CONVERSATION_OF_SESSION_KV_ID = 'openai_conversation_sessions';

interface Mapping {
  session_id: string;
}

interface ReverseMapping {
  entry: string;
}

/**
 * Removes the conversation key of a deleted session, if a key leads to it. Only an entry that
 * still names the session goes: one that a request already pointed at a new session stays. (A
 * request of another process could re-point it between the read and the delete; the key then
 * loses its new session, and its next request starts another, which the client's history fills.)
 */
export async function forgetConversation(kv: KvStore, sessionId: string): Promise<void> {
  const reverse = await kv.get<ReverseMapping>(CONVERSATION_OF_SESSION_KV_ID, sessionId);
  if (!reverse) return;
  const mapping = await kv.get<Mapping>(CONVERSATIONS_KV_ID, reverse.entry);
  if (mapping?.session_id === sessionId) await kv.delete(CONVERSATIONS_KV_ID, reverse.entry);
  await kv.delete(CONVERSATION_OF_SESSION_KV_ID, sessionId);
}

function refuseOtherProfile(session: SessionRecord, profileId: string): void {
  if (session.profile_id === profileId) return;
  throw new OpenAiParamError(
    'BAD_REQUEST',
    `session ${session.id} belongs to the profile "${session.profile_id}", not "${profileId}"; ` +
      `ask for the model ${NAVI_MODEL_PREFIX}${session.profile_id}, or name another session`,
    'model',
  );
}

/** The session a request runs in, and whether this request created it. */
export interface OpenedSession {
  session: SessionRecord;
  /** True for the one request that created the session (never for one that joined it). */
  created: boolean;
  /** The key-value entry mapping the conversation key to the session, when there is one. */
  entry?: string;
}

export class Conversations {
  /**
   * First uses of a key in progress, so two at once create one session, not two. One is held
   * from the look-up until the session it created has its run started or is removed again
   * (`settle`): a request of the same key that came meanwhile would otherwise take a session
   * that is about to go, and fail as SESSION_NOT_FOUND.
   */
  private readonly creating = new Map<string, Promise<void>>();
  /** How to end the hold of a session a request created, until `settle` does. */
  private readonly holds = new WeakMap<OpenedSession, () => void>();

  constructor(
    private readonly services: NaviServices,
    private readonly runs: Pick<RunRegistry, 'busy'>,
  ) {}

  /**
   * The session a request with `key` (or none) and the model of `profileId` runs in. A Navi
   * session's id names that session, which must be of the model's profile; any other key is a
   * conversation of that model (the same key with another model is another conversation), which
   * follows its session whatever profile that session has since switched to.
   */
  async sessionFor(profileId: string, key: string | undefined): Promise<OpenedSession> {
    if (key === undefined) return { session: await createSession(this.services, profileId), created: true };
    if (isUuid(key)) {
      const session = await this.services.sessions.get(key);
      if (session) {
        refuseOtherProfile(session, profileId);
        return { session, created: false };
      }
    }
    const entry = `${profileId}/${key}`;
    // After another request's first use of the key, look again: its session is there with its run,
    // or gone, and this request makes its own.
    for (let pending = this.creating.get(entry); pending; pending = this.creating.get(entry)) await pending;
    let end = () => {};
    const held = new Promise<void>((resolve) => {
      end = resolve;
    });
    const release = () => {
      if (this.creating.get(entry) === held) this.creating.delete(entry);
      end();
    };
    this.creating.set(entry, held);
    try {
      const opened = await this.mapped(entry, profileId);
      if (opened.created) this.holds.set(opened, release);
      else release();
      return opened;
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * The first use of `opened` is over: its run started, or `discard` was done with it. A request
   * that created the session must call this once it gets there (other requests of its key wait
   * until then); for any other it does nothing. Safe to call more than once.
   */
  settle(opened: OpenedSession): void {
    this.holds.get(opened)?.();
    this.holds.delete(opened);
  }

  /**
   * Removes a session this request created when its run could not start (Navi stopping, the
   * session taken by a request that joined it, images refused…), with its key's entry, so no
   * empty session is left behind. Kept when another request's run uses it or it holds messages.
   * Returns whether it was removed.
   */
  async discard(opened: OpenedSession): Promise<boolean> {
    if (!opened.created) return false;
    return discardEmptySession(this.services, this.runs, opened.session.id);
  }

  private async mapped(entry: string, profileId: string): Promise<OpenedSession> {
    const mapping = await this.services.kv.get<Mapping>(CONVERSATIONS_KV_ID, entry);
    const existing = mapping ? await this.services.sessions.get(mapping.session_id) : undefined;
    // The conversation goes on as the session is now, even when its profile changed inside it
    // (the agent's switch_profile, or the web client): the client keeps asking for the model it
    // chose, and refusing it would leave that chat stuck.
    if (existing) return { session: existing, created: false, entry };
    const { kv } = this.services;
    // Its session went without a word to this key (removed by hand, or by an older Navi).
    if (mapping) await kv.delete(CONVERSATION_OF_SESSION_KV_ID, mapping.session_id);
    const session = await createSession(this.services, profileId);
    try {
      await kv.set(CONVERSATION_OF_SESSION_KV_ID, session.id, { entry } satisfies ReverseMapping);
      await kv.set(CONVERSATIONS_KV_ID, entry, { session_id: session.id } satisfies Mapping);
    } catch (err) {
      // A session no key leads to would be left empty for good.
      await forgetConversation(kv, session.id).catch(() => undefined);
      await this.services.sessions.delete(session.id).catch(() => false);
      throw err;
    }
    return { session, created: true, entry };
  }
}
