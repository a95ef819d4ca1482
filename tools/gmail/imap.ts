/**
 * One IMAP connection per call: opened, logged in, used and closed again, so nothing stays
 * connected between calls and a stop or a dead server ends the call instead of hanging it.
 */
import type { ImapFlow } from 'imapflow';
import { type GmailConfig, GmailError } from './config.js';
import { explainFailure } from './failures.js';

/** The default mailbox of search, read and reply. */
export const INBOX = 'INBOX';

/**
 * Runs `work` on a logged-in connection and closes it afterwards, whatever happens. Rejects with
 * a `GmailError` that says what went wrong and which setting to check; a stop (`signal`) closes
 * the connection at once.
 */
export async function withImap<T>(
  config: GmailConfig,
  signal: AbortSignal,
  work: (client: ImapFlow) => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw stopped();
  // Loaded on first use: the mail libraries cost about 30 MB resident, and Navi imports every
  // tool at start only to list it.
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: config.imap.host,
    port: config.imap.port,
    secure: config.imap.tls,
    auth: { user: config.address, pass: config.password },
    // Off, not just quiet: its log lines would carry addresses and server chatter into Navi's log.
    logger: false,
    emitLogs: false,
    disableAutoIdle: true,
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
  });
  // Failures reach us as rejected commands; an 'error' event nobody listens to would end Navi.
  client.on('error', () => {});
  const onAbort = () => client.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect();
    return await work(client);
  } catch (err) {
    if (signal.aborted) throw stopped();
    throw explainFailure(err, 'IMAP', config);
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (client.usable) await client.logout().catch(() => {});
    client.close();
  }
}

/** Selects `mailbox` read-only; a missing one is a `GmailError` that points to list_labels. */
export async function openMailbox(client: ImapFlow, mailbox: string): Promise<void> {
  try {
    await client.mailboxOpen(mailbox, { readOnly: true });
  } catch (err) {
    if (
      (err as { mailboxMissing?: boolean }).mailboxMissing ||
      (err as { responseStatus?: string }).responseStatus === 'NO'
    ) {
      throw new GmailError(
        `There is no mailbox "${mailbox}". Use action "list_labels" to see the mailboxes (Gmail labels), ` +
          `or leave "mailbox" out for ${INBOX}.`,
      );
    }
    throw err;
  }
}

/**
 * The UID of the message `id` names in the selected mailbox: `id` is a UID from search, or a
 * Message-ID (`<…@…>`, which stays the same in every mailbox). A `GmailError` when there is none.
 */
export async function findUid(client: ImapFlow, id: string, mailbox: string): Promise<number> {
  if (/^\d+$/.test(id)) {
    const found = await client.search({ uid: id }, { uid: true });
    if (Array.isArray(found) && found.includes(Number(id))) return Number(id);
  } else {
    const found = await client.search({ header: { 'message-id': id } }, { uid: true });
    if (Array.isArray(found) && found.length > 0) return Math.max(...found);
  }
  throw new GmailError(
    `No message with id ${id} in ${mailbox}. Ids are per mailbox: use action "search" (with the same ` +
      '"mailbox") to find the message and its id.',
  );
}

function stopped(): GmailError {
  return new GmailError('Stopped before the mail server answered.');
}
