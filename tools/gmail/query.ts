/**
 * The search language of the gmail tool, turned into IMAP SEARCH criteria. Gmail's own
 * X-GM-RAW is not offered by other IMAP servers, so the tool speaks a small language of its
 * own that every server understands:
 *
 *   from:alice  to:bob  cc:carol  subject:"quarterly report"  since:2024-01-31  before:2024-03-01
 *   unread  is:unread  is:read  is:starred  plain words  "an exact phrase"
 *
 * Every term must match (AND). `since:` includes its day, `before:` excludes its day (both by
 * the day the message arrived); `after:` is another name for `since:`. Plain words and phrases
 * are looked for in the headers and the body.
 */
import type { SearchObject } from 'imapflow';
import { GmailError } from './config.js';
import { hasControlCharacter } from './format.js';

/** The longest query accepted. */
export const MAX_QUERY_CHARS = 500;

const TEXT_KEYS = { from: 'from', to: 'to', cc: 'cc', subject: 'subject' } as const;
const DATE_KEYS = { since: 'since', after: 'since', before: 'before' } as const;
const FLAGS: Record<string, Pick<SearchObject, 'seen' | 'flagged'>> = {
  unread: { seen: false },
  'is:unread': { seen: false },
  'is:read': { seen: true },
  'is:starred': { flagged: true },
};

const SYNTAX =
  'Use from:, to:, cc:, subject:, since:YYYY-MM-DD, before:YYYY-MM-DD, unread, is:read, ' +
  'is:starred and plain words; put values with spaces, and words with a colon, in double quotes.';

type Criterion = Partial<Record<'from' | 'to' | 'cc' | 'subject' | 'text', string>> &
  Pick<SearchObject, 'seen' | 'flagged' | 'since' | 'before'>;

/**
 * The query as a list of IMAP criteria that must all match. IMAP takes each key once per
 * search, so repeated keys (two plain words, two `from:`) land in separate objects whose
 * results the caller intersects. An empty query is `[{ all: true }]`.
 * Throws a `GmailError` that explains the mistake.
 */
export function parseQuery(query: string): SearchObject[] {
  if (query.length > MAX_QUERY_CHARS) {
    throw new GmailError(`The query is ${query.length} characters long; keep it under ${MAX_QUERY_CHARS}.`);
  }
  if (hasControlCharacter(query)) {
    throw new GmailError(
      'The query contains a line break or another control character; write it on one line.',
    );
  }
  const criteria: Criterion[] = tokens(query).map(criterionOf);
  if (criteria.length === 0) return [{ all: true }];
  return pack(criteria);
}

function criterionOf(token: Token): Criterion {
  const flag = token.quoted ? undefined : FLAGS[token.text.toLowerCase()];
  if (flag) return { ...flag };
  const m = token.quoted ? null : /^([a-z]+):(.*)$/is.exec(token.text);
  if (!m) return { text: token.text };
  const key = m[1]!.toLowerCase();
  const value = (token.value ?? m[2]!).trim();
  if (key in TEXT_KEYS) {
    if (value === '') throw new GmailError(`"${key}:" needs a value, as in ${key}:alice. ${SYNTAX}`);
    return { [TEXT_KEYS[key as keyof typeof TEXT_KEYS]]: value };
  }
  if (key in DATE_KEYS) return { [DATE_KEYS[key as keyof typeof DATE_KEYS]]: dateOf(key, value) };
  if (key === 'is') throw new GmailError(`"is:${value}" is not known. ${SYNTAX}`);
  if (key === 'in' || key === 'label') {
    throw new GmailError(
      `"${key}:" is not part of the query: pass the mailbox as "mailbox" (see action list_labels).`,
    );
  }
  throw new GmailError(`"${key}:" is not a search term this tool knows. ${SYNTAX}`);
}

function dateOf(key: string, value: string): Date {
  const m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(value);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  // Date.UTC rolls 2024-02-30 over into March; a real date survives the round trip.
  if (!date || date.getUTCDate() !== Number(m![3]) || date.getUTCMonth() !== Number(m![2]) - 1) {
    throw new GmailError(`"${key}:${value}" is not a date; write it as ${key}:2024-01-31.`);
  }
  return date;
}

/** Criteria merged into as few search objects as IMAP allows (each key once per object). */
function pack(criteria: Criterion[]): SearchObject[] {
  const out: Record<string, unknown>[] = [];
  for (const c of criteria) {
    const [[key, value]] = Object.entries(c) as [[string, unknown]];
    const home = out.find((o) => !(key in o));
    if (home) home[key] = value;
    else out.push({ [key]: value });
  }
  return out as SearchObject[];
}

interface Token {
  text: string;
  quoted: boolean;
  /** For `key:"quoted value"`: the value without its quotes. */
  value?: string;
}

/** Words separated by spaces; "double quotes" keep spaces, also after a key (subject:"a b"). */
function tokens(query: string): Token[] {
  const out: Token[] = [];
  const re = /([a-z]+):"([^"]*)"?|"([^"]*)"?|(\S+)/gi;
  for (const m of query.matchAll(re)) {
    if (m[1] !== undefined) out.push({ text: `${m[1]}:${m[2]}`, quoted: false, value: m[2]! });
    else if (m[3] !== undefined) {
      if (m[3].trim() !== '') out.push({ text: m[3], quoted: true });
    } else out.push({ text: m[4]!, quoted: false });
  }
  return out;
}
