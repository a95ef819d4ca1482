/**
 * Paged history (docs/protocol.md#paged-history): the query of `GET /sessions/{id}` and
 * `GET /sessions/{id}/messages`, read strictly, and the page it names. A session of any length
 * answers in the time of one page.
 */
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type MessagePage } from '../protocol/rest.js';
import type { SessionStore } from '../store/types.js';
import { ApiError } from './errors.js';

export interface PageQuery {
  limit?: unknown;
  before?: unknown;
}

/** The value a client sent, short enough to repeat back (a repeated parameter arrives as a list). */
function shown(raw: unknown): string {
  if (typeof raw !== 'string') return 'more than one value';
  return JSON.stringify(raw.length > 20 ? `${raw.slice(0, 20)}…` : raw);
}

function limitOf(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  const limit = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new ApiError(
      'INVALID_PAGE',
      `limit got ${shown(raw)}; send one limit, or none for the newest ${DEFAULT_PAGE_LIMIT}`,
    );
  }
  return limit;
}

function beforeOf(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw === '' || raw.length > 100) {
    throw new ApiError(
      'INVALID_PAGE',
      `before got ${shown(raw)}; it takes the next_before of a page (1 to 100 characters), once`,
    );
  }
  return raw;
}

export async function messagePage(
  sessions: SessionStore,
  sessionId: string,
  query: PageQuery,
): Promise<MessagePage> {
  const limit = limitOf(query.limit);
  const before = beforeOf(query.before);
  const page = await sessions.getMessagePage(sessionId, { limit, before });
  if (page === undefined) {
    // Regenerate and edit remove messages from the newest end, so a cursor a client kept can go.
    throw new ApiError(
      'MESSAGE_NOT_FOUND',
      `before ${shown(before)} is not in its history (regenerate or edit may have removed it); load the newest page again with GET /sessions/{id}`,
    );
  }
  return page;
}
