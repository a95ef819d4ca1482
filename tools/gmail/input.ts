/**
 * The arguments of each action, checked before any server is contacted: which fields the action
 * needs, and that ids and mailbox names are what they claim to be. Each mistake is a
 * `GmailError` naming the field and how to fix it.
 */
import { GmailError } from './config.js';
import { hasControlCharacter } from './format.js';
import { INBOX } from './imap.js';
import type { ReadInput } from './read.js';
import type { SearchInput } from './search.js';
import type { ReplyInput, SendInput } from './send.js';

export const ACTIONS = ['search', 'read', 'send', 'reply', 'list_labels'] as const;
export type Action = (typeof ACTIONS)[number];

export type GmailParams = Partial<
  Record<'action' | 'query' | 'mailbox' | 'id' | 'to' | 'cc' | 'subject' | 'body', unknown> & {
    limit: unknown;
  }
>;

const MAX_MAILBOX_CHARS = 200;
const MAX_UID = 4_294_967_295;
const NEEDS: Record<Action, string> = {
  search: '"query" (optional), "mailbox" (optional) and "limit" (optional)',
  read: '"id" (from search) and "mailbox" when it is not INBOX',
  send: '"to", "subject" and "body" ("cc" optional)',
  reply: '"id" (from search) and "body" ("cc" optional, "mailbox" when it is not INBOX)',
  list_labels: 'nothing else',
};

/** The action, or a `GmailError` listing the actions. */
export function actionOf(params: GmailParams): Action {
  const action = params.action;
  if (typeof action === 'string' && (ACTIONS as readonly string[]).includes(action)) return action as Action;
  throw new GmailError(
    `${action === undefined ? '"action" is missing' : `"action" ${JSON.stringify(action)} is not known`}; ` +
      `use one of ${ACTIONS.join(', ')}.`,
  );
}

export function searchInput(p: GmailParams): SearchInput {
  const limit = p.limit === undefined ? 10 : p.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50) {
    throw new GmailError('"limit" must be a whole number from 1 to 50.');
  }
  return { query: optionalText(p, 'query', 'search') ?? '', mailbox: mailboxOf(p, 'search'), limit };
}

export function readInput(p: GmailParams): ReadInput {
  return { id: idOf(p, 'read'), mailbox: mailboxOf(p, 'read') };
}

export function sendInput(p: GmailParams): SendInput {
  const cc = optionalText(p, 'cc', 'send');
  return {
    to: requiredText(p, 'to', 'send'),
    ...(cc !== undefined && { cc }),
    subject: requiredText(p, 'subject', 'send'),
    body: requiredText(p, 'body', 'send'),
  };
}

export function replyInput(p: GmailParams): ReplyInput {
  const cc = optionalText(p, 'cc', 'reply');
  return {
    id: idOf(p, 'reply'),
    mailbox: mailboxOf(p, 'reply'),
    body: requiredText(p, 'body', 'reply'),
    ...(cc !== undefined && { cc }),
  };
}

function requiredText(p: GmailParams, field: keyof GmailParams, action: Action): string {
  const value = optionalText(p, field, action);
  if (value === undefined || value.trim() === '') {
    throw new GmailError(`"${action}" needs "${field}"; it takes ${NEEDS[action]}.`);
  }
  return value;
}

function optionalText(p: GmailParams, field: keyof GmailParams, action: Action): string | undefined {
  const value = p[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new GmailError(
      `"${field}" must be text, got ${Array.isArray(value) ? 'a list' : typeof value}; "${action}" takes ${NEEDS[action]}.`,
    );
  }
  return value;
}

function mailboxOf(p: GmailParams, action: Action): string {
  const value = optionalText(p, 'mailbox', action)?.trim();
  if (!value) return INBOX;
  if (hasControlCharacter(value) || value.length > MAX_MAILBOX_CHARS) {
    throw new GmailError(
      `"mailbox" must be one line of at most ${MAX_MAILBOX_CHARS} characters, as list_labels shows it (e.g. "[Gmail]/Sent Mail").`,
    );
  }
  return value;
}

/** A UID (digits) or a Message-ID, with its angle brackets added when they were left out. */
function idOf(p: GmailParams, action: Action): string {
  const raw = typeof p.id === 'number' ? String(p.id) : requiredText(p, 'id', action);
  const id = raw.trim();
  if (/^\d{1,10}$/.test(id) && Number(id) >= 1 && Number(id) <= MAX_UID) return String(Number(id));
  const bare = id.replace(/^<(.*)>$/, '$1');
  if (!hasControlCharacter(bare) && /^[^<>\s@]{1,400}@[^<>\s@]{1,400}$/.test(bare)) return `<${bare}>`;
  throw new GmailError(
    `"id" ${JSON.stringify(id.slice(0, 100))} is not a message id: give the number search showed (such as 42) ` +
      'or a Message-ID such as <abc@example.com>.',
  );
}
