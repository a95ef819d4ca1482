/**
 * `read`: one message as text. Headers, the plain text body (HTML turned into text when there is
 * no plain part) and the attachments listed by name, type and size. Attachments are counted as
 * the message streams past and never kept, so a large one costs no memory and never reaches the
 * model.
 */
import type { Readable } from 'node:stream';
import type { AddressObject, AttachmentStream, EmailAddress, Headers, MessageText } from 'mailparser';
import { type GmailConfig, GmailError } from './config.js';
import { addresses, byteSize, oneLine, shortDate, untrustedMail } from './format.js';
import { findUid, openMailbox, withImap } from './imap.js';

export interface ReadInput {
  id: string;
  mailbox: string;
}

/** The longest body shown; the rest is cut with a note. */
export const MAX_BODY_CHARS = 20_000;

interface Attachment {
  name: string;
  type: string;
  size: number;
  inline: boolean;
}

interface Parsed {
  headers: Headers;
  text: string;
  attachments: Attachment[];
}

/** The message `input.id` of `input.mailbox`, as text for the model. */
export async function readMail(config: GmailConfig, signal: AbortSignal, input: ReadInput): Promise<string> {
  return withImap(config, signal, async (client) => {
    await openMailbox(client, input.mailbox);
    const uid = await findUid(client, input.id, input.mailbox);
    const meta = await client.fetchOne(
      String(uid),
      { uid: true, flags: true, internalDate: true },
      { uid: true },
    );
    const download = await client.download(String(uid), undefined, { uid: true });
    if (!download.content)
      throw new GmailError(
        `Message ${input.id} of ${input.mailbox} vanished while it was read; search again.`,
      );
    const parsed = await parse(download.content);
    const unread = meta !== false && meta.flags !== undefined && !meta.flags.has('\\Seen');
    return [
      `Message ${uid} in ${input.mailbox}${unread ? ' (unread; reading it here does not mark it read)' : ''}. ` +
        'Attachments are only listed: this tool cannot open them. Answer it with action "reply" and this id.',
      untrustedMail(input.mailbox, render(parsed, meta ? meta.internalDate : undefined)),
    ].join('\n');
  });
}

function render(parsed: Parsed, arrived: Date | string | undefined): string {
  const h = parsed.headers;
  const lines = [
    `Message-ID: ${oneLine(String(h.get('message-id') ?? '(none)'))}`,
    `Date: ${shortDate((h.get('date') as Date | undefined) ?? arrived)}`,
    `From: ${addressText(h.get('from')) || '(unknown)'}`,
    `To: ${addressText(h.get('to')) || '(none)'}`,
  ];
  const cc = addressText(h.get('cc'));
  if (cc) lines.push(`Cc: ${cc}`);
  const replyTo = addressText(h.get('reply-to'));
  if (replyTo) lines.push(`Reply-To: ${replyTo}`);
  lines.push(`Subject: ${oneLine(String(h.get('subject') ?? '')) || '(no subject)'}`);
  if (parsed.attachments.length > 0) {
    lines.push(`Attachments (${parsed.attachments.length}):`);
    for (const a of parsed.attachments) {
      lines.push(`- ${a.name} (${a.type}, ${byteSize(a.size)}${a.inline ? ', inline' : ''})`);
    }
  }
  let body = parsed.text.trim();
  if (body.length > MAX_BODY_CHARS) {
    body = `${body.slice(0, MAX_BODY_CHARS)}\n[body cut: ${MAX_BODY_CHARS} of ${parsed.text.trim().length} characters shown]`;
  }
  lines.push('', body === '' ? '(no text body)' : body);
  return lines.join('\n');
}

function addressText(value: unknown): string {
  const objects = (Array.isArray(value) ? value : value ? [value] : []) as AddressObject[];
  const flat = (list: EmailAddress[]): EmailAddress[] => list.flatMap((a) => (a.group ? flat(a.group) : [a]));
  return addresses(flat(objects.flatMap((o) => o.value ?? [])));
}

/** Streams the raw message through MailParser; attachment bytes are counted and dropped. */
async function parse(source: Readable): Promise<Parsed> {
  // Loaded on first use: the mail libraries cost about 30 MB resident, and Navi imports every
  // tool at start only to list it.
  const { MailParser } = await import('mailparser');
  return new Promise((resolve, reject) => {
    const parser = new MailParser({
      skipImageLinks: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      // Turning a huge HTML body into text is slow; its start is what the model would read anyway.
      maxHtmlLengthToParse: 2_000_000,
    });
    const result: Parsed = { headers: new Map(), text: '', attachments: [] };
    parser.on('headers', (headers: Headers) => {
      result.headers = headers;
    });
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        result.text = data.text ?? '';
        return;
      }
      let size = 0;
      data.content.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      data.content.on('end', () => {
        result.attachments.push({
          name: oneLine(data.filename ?? '') || '(no name)',
          type: data.contentType || 'application/octet-stream',
          size,
          inline: data.contentDisposition === 'inline',
        });
        data.release?.();
      });
    });
    parser.on('end', () => resolve(result));
    parser.on('error', (err: Error) =>
      reject(new GmailError(`The message could not be parsed: ${err.message}`)),
    );
    source.on('error', reject);
    source.pipe(parser);
  });
}
