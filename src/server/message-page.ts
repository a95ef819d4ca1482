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

function limitOf(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  const limit = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new ApiError('INVALID_PAGE', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`);
  }
  return limit;
}

function beforeOf(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw === '' || raw.length > 100) {
    throw new ApiError('INVALID_PAGE', 'before must be the id of a message (the next_before of a page)');
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
  if (page === undefined) throw new ApiError('MESSAGE_NOT_FOUND', `no message ${before} in this session`);
  return page;
}
