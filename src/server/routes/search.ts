/**
 * `GET /search?q=&limit=`: search across chats, titles and the messages people read
 * (docs/protocol.md#search). `q` is plain words; nothing in it is query syntax.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { SearchResults } from '../../protocol/rest.js';
import { MAX_SEARCH_LIMIT } from '../../store/types.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

export const MAX_QUERY_LENGTH = 500;
const DEFAULT_SEARCH_LIMIT = 20;

function queryOf(raw: unknown): string {
  if (raw === undefined) throw new ApiError('INVALID_QUERY', 'q is missing');
  if (typeof raw !== 'string') throw new ApiError('INVALID_QUERY', 'give q once');
  if (raw.trim() === '') throw new ApiError('INVALID_QUERY', 'q is empty');
  if (raw.length > MAX_QUERY_LENGTH) {
    throw new ApiError('INVALID_QUERY', `q has ${raw.length} characters; shorten it`);
  }
  return raw;
}

function limitOf(raw: unknown): number {
  if (raw === undefined) return DEFAULT_SEARCH_LIMIT;
  const limit = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_SEARCH_LIMIT)) {
    throw new ApiError('BAD_REQUEST', `limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  return limit;
}

export const searchRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  app.get<{ Querystring: Record<string, unknown> }>('/search', async (request): Promise<SearchResults> => {
    const query = queryOf(request.query.q);
    const limit = limitOf(request.query.limit);
    return { query, results: await services.search.search(query, limit) };
  });
};
