/**
 * What `send` and `reply` put into a message, checked before anything is sent: recipients that
 * are plain addresses, a subject on one line, a body of sane size. A line break in a header
 * field is refused outright: it is how a hostile text would add hidden recipients (`Bcc:`).
 */
import { GmailError } from './config.js';
import { hasControlCharacter, oneLine } from './format.js';

export interface Recipient {
  name: string;
  address: string;
}

export const MAX_RECIPIENTS = 50;
export const MAX_SUBJECT_CHARS = 500;
export const MAX_BODY_CHARS = 100_000;
const MAX_FIELD_CHARS = 5_000;

// Deliberately plain: what people type as an address, not every form RFC 5322 allows.
const ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)+$/u;

/** The recipients in `value` (`a@b.c, Name <d@e.f>`), or a `GmailError` saying which one is wrong. */
export function parseRecipients(field: 'to' | 'cc', value: string): Recipient[] {
  oneHeaderLine(field, value, 'Give the addresses on one line, separated by commas.');
  if (value.length > MAX_FIELD_CHARS) {
    throw new GmailError(`"${field}" is ${value.length} characters long; keep it under ${MAX_FIELD_CHARS}.`);
  }
  const recipients: Recipient[] = [];
  for (const part of splitList(value)) {
    const item = part.trim();
    if (item === '') continue;
    const m = /^(.*?)\s*<([^<>]*)>$/.exec(item);
    const name = m ? oneLine(m[1]!.replace(/^"(.*)"$/, '$1')) : '';
    const address = (m ? m[2]! : item).trim();
    if (!ADDRESS.test(address)) {
      throw new GmailError(
        `"${field}" has "${item.slice(0, 100)}", which is not an e-mail address. ` +
          'Write addresses as name@example.com or Name <name@example.com>, separated by commas.',
      );
    }
    if (/[<>"]/.test(name))
      throw new GmailError(`"${field}" has a name with <, > or " in it: "${name.slice(0, 100)}".`);
    recipients.push({ name, address });
  }
  if (recipients.length > MAX_RECIPIENTS) {
    throw new GmailError(
      `"${field}" has ${recipients.length} addresses; at most ${MAX_RECIPIENTS} are allowed.`,
    );
  }
  return recipients;
}

/** A subject checked for `send`: one line, not too long. */
export function checkSubject(subject: string): string {
  oneHeaderLine('subject', subject, 'Write the subject on one line.');
  if (subject.length > MAX_SUBJECT_CHARS) {
    throw new GmailError(
      `"subject" is ${subject.length} characters long; keep it under ${MAX_SUBJECT_CHARS}.`,
    );
  }
  return subject.trim();
}

/** A body checked for `send` and `reply`: not empty, not huge, no NUL bytes. */
export function checkBody(body: string): string {
  if (body.trim() === '') throw new GmailError('"body" is empty; write the text of the e-mail.');
  if (body.length > MAX_BODY_CHARS) {
    throw new GmailError(
      `"body" is ${body.length} characters long; the limit is ${MAX_BODY_CHARS}. Shorten it, or send a summary ` +
        'and offer the rest separately.',
    );
  }
  if (body.includes('\u0000')) throw new GmailError('"body" contains a NUL character; remove it.');
  return body;
}

/** The subject of a reply: `Re: ` once, never `Re: Re: `. */
export function replySubject(original: string): string {
  const subject = oneLine(original);
  return /^re:/i.test(subject) ? subject : `Re: ${subject || '(no subject)'}`.trim();
}

/**
 * The References of a reply: the original's references and its own Message-ID, at most the last
 * 20, keeping only well-formed ids (a hostile original could carry anything there).
 */
export function replyReferences(originalReferences: string, messageId: string | undefined): string[] {
  const ids: string[] = [...(originalReferences.match(/<[^<>\s]+>/g) ?? [])];
  if (messageId && isMessageId(messageId)) ids.push(messageId);
  return [...new Set(ids)].slice(-20);
}

/** Whether `id` is one well-formed `<…>` Message-ID. */
export function isMessageId(id: string): boolean {
  return /^<[^<>\s]{1,900}>$/.test(id);
}

/** Refuses a header value with a line break (or any control character) in it. */
function oneHeaderLine(field: string, value: string, fix: string): void {
  if (hasControlCharacter(value) || /[\u2028\u2029\u0085]/.test(value)) {
    throw new GmailError(
      `"${field}" contains a line break or another control character, which could smuggle extra ` +
        `headers (such as Bcc) into the e-mail. ${fix}`,
    );
  }
}

/** Splits at commas and semicolons that are not inside quotes or angle brackets. */
function splitList(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let angle = false;
  for (const ch of value) {
    if (ch === '"' && !angle) quoted = !quoted;
    else if (ch === '<' && !quoted) angle = true;
    else if (ch === '>' && !quoted) angle = false;
    if ((ch === ',' || ch === ';') && !quoted && !angle) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}
