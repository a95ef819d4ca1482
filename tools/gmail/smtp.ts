/** Sending one message over SMTP with the app password; a new connection per message. */
import type Mail from 'nodemailer/lib/mailer/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { type GmailConfig, GmailError } from './config.js';
import { explainFailure } from './failures.js';

/**
 * Sends `message` from the configured address. Resolves once the server accepted it for at
 * least one recipient; rejects with a `GmailError` that says why not (refused recipients
 * included). A stop (`signal`) closes the connection; whether the server had already taken the
 * message is then unknown, and the error says so.
 */
export async function sendMessage(
  config: GmailConfig,
  signal: AbortSignal,
  message: Mail.Options,
): Promise<SMTPTransport.SentMessageInfo> {
  if (signal.aborted) throw new GmailError('Stopped before anything was sent.');
  // Loaded on first use: the mail libraries cost about 30 MB resident, and Navi imports every
  // tool at start only to list it.
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    host: config.smtp.host,
    port: config.smtp.port,
    secure: config.smtp.tls,
    auth: { user: config.address, pass: config.password },
    // Off: nodemailer's log would carry the conversation, addresses and all, into Navi's log.
    logger: false,
    debug: false,
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
    // The message is built from text only; nothing may make nodemailer read files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  let onAbort = () => {};
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => {
      transport.close();
      reject(
        new GmailError(
          'Stopped while the mail was being sent: it may or may not have gone out. Check Sent Mail before sending it again.',
        ),
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const info = await Promise.race([transport.sendMail({ ...message, from: config.address }), stopped]);
    const refused = info.rejected.map(addressOf);
    if (info.accepted.length === 0) {
      throw new GmailError(
        `The SMTP server refused every recipient (${refused.join(', ')}); nothing was sent.`,
      );
    }
    return info;
  } catch (err) {
    throw explainFailure(err, 'SMTP', config);
  } finally {
    signal.removeEventListener('abort', onAbort);
    stopped.catch(() => {});
    transport.close();
  }
}

/** An address as nodemailer reports it back. */
export function addressOf(a: string | Mail.Address): string {
  return typeof a === 'string' ? a : (a.address ?? '');
}
