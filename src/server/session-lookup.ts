/** Finding the session a request names; anything that is not a known session is a 404. */
import type { SessionRecord, SessionStore } from '../store/types.js';
import { ApiError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * The session `id` names, or `SESSION_NOT_FOUND`. The format is checked first so that a
 * malformed id never reaches the store (and internal ids like `subagent_…` are not reachable).
 */
export async function requireSession(sessions: SessionStore, id: string): Promise<SessionRecord> {
  if (!isUuid(id)) throw new ApiError('SESSION_NOT_FOUND');
  const session = await sessions.get(id);
  if (!session) throw new ApiError('SESSION_NOT_FOUND');
  return session;
}
