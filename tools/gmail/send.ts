/**
 * `send` and `reply`. A reply goes to the sender of the original (its Reply-To when it has one),
 * keeps the conversation together with In-Reply-To and References, and takes the subject with
 * one "Re: ". Both ask the person first: see `confirmCall` in tools/gmail.ts.
 */
import type { MessageAddressObject } from 'imapflow';
import {
  checkBody,
  checkSubject,
  isMessageId,
  parseRecipients,
  type Recipient,
  replyReferences,
  replySubject,
} from './compose.js';
import type { GmailConfig } from './config.js';
import { GmailError } from './config.js';
import { findUid, openMailbox, withImap } from './imap.js';
import { addressOf, sendMessage } from './smtp.js';

export interface SendInput {
  to: string;
  cc?: string;
  subject: string;
  body: string;
}

export interface ReplyInput {
  id: string;
  mailbox: string;
  body: string;
  cc?: string;
}

/** Sends a new e-mail; resolves to a sentence saying to whom it went. */
export async function sendMail(config: GmailConfig, signal: AbortSignal, input: SendInput): Promise<string> {
  const to = parseRecipients('to', input.to);
  if (to.length === 0) throw new GmailError('"to" names nobody; give at least one address.');
  const cc = input.cc ? parseRecipients('cc', input.cc) : [];
  const subject = checkSubject(input.subject);
  const text = checkBody(input.body);
  const info = await sendMessage(config, signal, { to, cc, subject, text });
  return sentReport(info, to, cc, subject);
}

/** Replies to message `input.id` of `input.mailbox`; resolves to a sentence saying to whom it went. */
export async function replyMail(
  config: GmailConfig,
  signal: AbortSignal,
  input: ReplyInput,
): Promise<string> {
  const text = checkBody(input.body);
  const cc = input.cc ? parseRecipients('cc', input.cc) : [];
  const original = await withImap(config, signal, async (client) => {
    await openMailbox(client, input.mailbox);
    const uid = await findUid(client, input.id, input.mailbox);
    const msg = await client.fetchOne(
      String(uid),
      { uid: true, envelope: true, headers: ['references'] },
      { uid: true },
    );
    if (msg === false || !msg.envelope) {
      throw new GmailError(`Message ${input.id} of ${input.mailbox} vanished; search again.`);
    }
    return { envelope: msg.envelope, references: msg.headers?.toString('utf8') ?? '' };
  });
  const env = original.envelope;
  const to = replyRecipients(config.address, env.replyTo, env.from, env.to);
  if (to.length === 0) throw new GmailError(`Message ${input.id} has no sender address to reply to.`);
  const subject = replySubject(env.subject ?? '');
  const messageId = env.messageId && isMessageId(env.messageId) ? env.messageId : undefined;
  const references = replyReferences(original.references.replace(/^references:/i, ''), messageId);
  const info = await sendMessage(config, signal, {
    to,
    cc,
    subject,
    text,
    ...(messageId && { inReplyTo: messageId }),
    ...(references.length > 0 && { references }),
  });
  return sentReport(info, to, cc, subject);
}

/**
 * Who a reply goes to: the original's Reply-To (servers fill it in from From), or, for a message
 * the person sent themselves, its recipients. Only well-formed addresses survive.
 */
function replyRecipients(
  self: string,
  replyTo: MessageAddressObject[] | undefined,
  from: MessageAddressObject[] | undefined,
  to: MessageAddressObject[] | undefined,
): Recipient[] {
  const sender = (replyTo?.length ? replyTo : from) ?? [];
  const own = sender.every((a) => a.address?.toLowerCase() === self.toLowerCase());
  const chosen = own && to?.length ? to : sender;
  const out: Recipient[] = [];
  for (const a of chosen) {
    if (!a.address) continue;
    try {
      out.push(...parseRecipients('to', a.address));
    } catch {
      // An address a hostile message made up is dropped, not sent to.
      continue;
    }
    out[out.length - 1]!.name = (a.name ?? '').replace(/[\s<>"]+/g, ' ').trim();
  }
  return out;
}

function sentReport(
  info: { messageId: string; rejected: Parameters<typeof addressOf>[0][] },
  to: Recipient[],
  cc: Recipient[],
  subject: string,
): string {
  const list = (rs: Recipient[]) => rs.map((r) => r.address).join(', ');
  const refused = info.rejected.map(addressOf);
  return [
    `Sent to ${list(to)}${cc.length > 0 ? `, cc ${list(cc)}` : ''}: "${subject}" (Message-ID ${info.messageId}).`,
    ...(refused.length > 0 ? [`The server refused ${refused.join(', ')}; those did not get it.`] : []),
  ].join(' ');
}
