/** `search`: the newest messages of a mailbox that match a query, with a short snippet each. */
import type { FetchMessageObject } from 'imapflow';
import { type GmailConfig, GmailError } from './config.js';
import { addresses, oneLine, shortDate, untrustedMail } from './format.js';
import { openMailbox, withImap } from './imap.js';
import { parseQuery } from './query.js';

export interface SearchInput {
  query: string;
  mailbox: string;
  limit: number;
}

// The head of each message is enough for a snippet; whole messages could be megabytes each.
const SNIPPET_SOURCE_BYTES = 16 * 1024;
const SNIPPET_CHARS = 160;

/** The matching messages, newest first, as text for the model. */
export async function searchMail(
  config: GmailConfig,
  signal: AbortSignal,
  input: SearchInput,
): Promise<string> {
  // A bad query is the caller's mistake: say so before connecting anywhere.
  const criteria = parseQuery(input.query);
  return withImap(config, signal, async (client) => {
    await openMailbox(client, input.mailbox);
    let uids: number[] | undefined;
    for (const criterion of criteria) {
      const found = await client.search(criterion, { uid: true });
      if (found === false || found === undefined) {
        throw new GmailError(
          `The server refused the search ${JSON.stringify(input.query)}; try simpler terms.`,
        );
      }
      const hits = new Set(found);
      uids = uids === undefined ? [...hits] : uids.filter((uid) => hits.has(uid));
      if (uids.length === 0) break;
    }
    // UIDs grow with arrival, so the highest are the newest.
    const all = (uids ?? []).sort((a, b) => b - a);
    const where = input.mailbox;
    const asked = input.query.trim() === '' ? '' : ` matching ${JSON.stringify(input.query)}`;
    if (all.length === 0) return `No messages in ${where}${asked}.`;
    const shown = all.slice(0, input.limit);
    const messages: FetchMessageObject[] = [];
    for await (const msg of client.fetch(
      shown.join(','),
      {
        uid: true,
        envelope: true,
        internalDate: true,
        flags: true,
        source: { maxLength: SNIPPET_SOURCE_BYTES },
      },
      { uid: true },
    )) {
      messages.push(msg);
    }
    messages.sort((a, b) => b.uid - a.uid);
    const rows: string[] = [];
    for (const msg of messages) rows.push(await row(msg));
    const more =
      all.length > shown.length
        ? ` Showing the newest ${shown.length} of ${all.length}: narrow the query, or raise "limit" (at most 50).`
        : '';
    return [
      `${all.length} message${all.length === 1 ? '' : 's'} in ${where}${asked}, newest first.${more}`,
      `Read one with action "read", its id${where === 'INBOX' ? '' : ` and mailbox "${where}"`}.`,
      untrustedMail(where, rows.join('\n\n')),
    ].join('\n');
  });
}

async function row(msg: FetchMessageObject): Promise<string> {
  const env = msg.envelope;
  const state = [
    ...(msg.flags && !msg.flags.has('\\Seen') ? ['unread'] : []),
    ...(msg.flags?.has('\\Flagged') ? ['starred'] : []),
  ];
  const snippet = await snippetOf(msg.source);
  return [
    `[id ${msg.uid}] ${shortDate(env?.date ?? msg.internalDate)}${state.length > 0 ? ` · ${state.join(', ')}` : ''}`,
    `From: ${addresses(env?.from) || '(unknown)'}`,
    `Subject: ${oneLine(env?.subject ?? '') || '(no subject)'}`,
    ...(snippet ? [`  ${snippet}`] : []),
  ].join('\n');
}

/** The start of the message's text (HTML turned into text), on one line; '' when there is none. */
async function snippetOf(source: Buffer | undefined): Promise<string> {
  if (!source) return '';
  try {
    // Loaded on first use: the mail libraries cost about 30 MB resident, and Navi imports every
    // tool at start only to list it.
    const { simpleParser } = await import('mailparser');
    const parsed = await simpleParser(source, {
      skipImageLinks: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      maxHtmlLengthToParse: SNIPPET_SOURCE_BYTES * 4,
    });
    const text = oneLine(parsed.text ?? '');
    return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text;
  } catch {
    // The head of a message is cut mid-part; what cannot be parsed simply has no snippet.
    return '';
  }
}
