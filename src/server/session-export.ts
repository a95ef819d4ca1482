/**
 * The body of `GET /sessions/{id}/export` for a session of any length. Reading and encoding
 * 100 000 messages at once held the event loop — and so every other session's stream — for a
 * second or more; here the display buffer is read a page at a time and the body is sent a page
 * at a time, with a turn of the event loop between pages, so nothing waits longer than one page.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MAX_PAGE_LIMIT, type SessionExport, type SessionSummary } from '../protocol/rest.js';
import type { SessionStore, StoredMessage } from '../store/types.js';
import { MARKDOWN_END, markdownHeader, markdownMessages } from './session-markdown.js';

/** Reads before giving up on a cursor that regenerate or edit keep removing. */
const ATTEMPTS = 3;

/**
 * The whole display buffer, oldest page first. `getMessagePage` walks from the newest end, so
 * every page is read before the first one is known. Messages appended meanwhile are newer than
 * the first page read and are left out, as if the export had been asked a moment earlier; a
 * rewind that removes the page cursor starts the read again from the newest end.
 */
export async function displayPages(sessions: SessionStore, sessionId: string): Promise<StoredMessage[][]> {
  for (let attempt = 1; ; attempt++) {
    const pages: StoredMessage[][] = [];
    let before: string | undefined;
    let gone = false;
    do {
      const page = await sessions.getMessagePage(sessionId, { limit: MAX_PAGE_LIMIT, before });
      if (page === undefined) {
        gone = true;
        break;
      }
      pages.push(page.messages);
      before = page.next_before ?? undefined;
      if (before !== undefined) await nextTurn();
    } while (before !== undefined);
    if (!gone) return pages.reverse();
    // A rewind that keeps coming is rarer than this fallback is slow.
    if (attempt === ATTEMPTS) return [await sessions.getMessages(sessionId)];
  }
}

/** `items` (not empty) as the inside of a JSON array: one stringify of the page is the cheapest. */
function jsonItems(items: readonly unknown[]): string {
  return JSON.stringify(items).slice(1, -1);
}

/**
 * The JSON export in pieces: exactly `JSON.stringify(body)` for `body` = `head` with `messages`
 * (the concatenated `pages`) and `context`, one piece per page.
 */
export async function* exportJson(
  head: Omit<SessionExport, 'messages' | 'context'>,
  pages: readonly StoredMessage[][],
  context: readonly StoredMessage[],
): AsyncGenerator<string> {
  const start = JSON.stringify(head);
  yield `${start.slice(0, -1)},"messages":[`;
  let first = true;
  for (const page of pages) {
    if (page.length === 0) continue;
    yield `${first ? '' : ','}${jsonItems(page)}`;
    first = false;
    await nextTurn();
  }
  yield '],"context":[';
  for (let i = 0; i < context.length; i += MAX_PAGE_LIMIT) {
    yield `${i === 0 ? '' : ','}${jsonItems(context.slice(i, i + MAX_PAGE_LIMIT))}`;
    await nextTurn();
  }
  yield ']}';
}

/** The Markdown export in pieces, one per page: exactly `sessionMarkdown` of the whole buffer. */
export async function* exportMarkdown(
  session: SessionSummary,
  pages: readonly StoredMessage[][],
  profileName: string,
  exportedAt: Date,
): AsyncGenerator<string> {
  yield markdownHeader(session, profileName, exportedAt);
  for (const page of pages) {
    yield markdownMessages(page);
    await nextTurn();
  }
  yield MARKDOWN_END;
}
