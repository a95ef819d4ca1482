/**
 * The transcript as it reaches the disk: every message, patch and summary passes the secret
 * masker first. Tool results are masked by the executor already; this catches what never went
 * through a tool — a value the person asked the vault to reveal and the answer that repeats it,
 * a key pasted into the chat — so the stored transcript and the next run's context never hold
 * a secret Navi knows. Costs nothing while no secret is registered.
 */
import type { SecretMasker } from '../util/secret-masker.js';
import type { BufferedMessage, MessagePatch, SessionStore, StoredMessage } from './types.js';

export function maskingSessionStore(store: SessionStore, secrets: SecretMasker): SessionStore {
  // maskJson hands the value back untouched while no secret is registered.
  const mask = <T>(value: T): T => secrets.maskJson(value);
  return {
    create: (input) => store.create(input),
    get: (id) => store.get(id),
    list: () => store.list(),
    update: (id, patch) => store.update(id, patch),
    delete: (id) => store.delete(id),
    getMessages: (id) => store.getMessages(id),
    getMessagePage: (id, options) => store.getMessagePage(id, options),
    getMessage: (id, messageId) => store.getMessage(id, messageId),
    getContext: (id) => store.getContext(id),
    isInContext: (id, messageId) => store.isInContext(id, messageId),
    append: (sessionId, entries: BufferedMessage[], session) =>
      store.append(
        sessionId,
        secrets.size === 0
          ? entries
          : entries.map((entry) => ({ ...entry, message: mask<StoredMessage>(entry.message) })),
        session,
      ),
    updateMessage: (sessionId, messageId, patch: MessagePatch) =>
      store.updateMessage(sessionId, messageId, mask(patch)),
    replaceContext: (sessionId, messages) => store.replaceContext(sessionId, messages.map(mask)),
    asStored: mask,
    replaceContextPrefix: (sessionId, firstKeptId, summary) =>
      store.replaceContextPrefix(sessionId, firstKeptId, mask(summary)),
    rewind: (sessionId, anchorId, options) => store.rewind(sessionId, anchorId, options),
  };
}
