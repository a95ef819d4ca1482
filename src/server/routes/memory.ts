/**
 * Long-term memory for the client: list, search, edit and delete facts, read the summary
 * (issue 5). The agent's own access is the `memory` tool.
 */
import type { FastifyPluginAsync } from 'fastify';
import { MemoryConflictError, MemoryValidationError } from '../../memory/types.js';
import type {
  MemoryFactPage,
  MemoryFactRecord,
  MemorySearchResults,
  MemorySummaryView,
} from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' } },
  required: ['id'],
} as const;

function factError(err: unknown): never {
  if (err instanceof MemoryConflictError) throw new ApiError('FACT_CONFLICT', `${err.category}/${err.key}`);
  if (err instanceof MemoryValidationError) throw new ApiError('INVALID_FACT', err.message);
  throw err;
}

export const memoryRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const memory = () => {
    if (!services.memory) throw new ApiError('NOT_FOUND', 'long-term memory is not enabled');
    return services.memory;
  };

  // Query strings arrive as text and the server does not coerce types (coerceTypes: false), so
  // numbers are matched as digit strings here and converted below.
  app.get<{ Querystring: { offset?: string; limit?: string; category?: string } }>(
    '/memory/facts',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            offset: { type: 'string', pattern: '^(0|[1-9][0-9]{0,6})$' },
            limit: { type: 'string', pattern: '^([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$' },
            category: { type: 'string', minLength: 1, maxLength: 40 },
          },
          additionalProperties: false,
        },
      },
    },
    async (request): Promise<MemoryFactPage> => {
      const { offset, limit, category } = request.query;
      return memory().store.list({
        ...(offset !== undefined ? { offset: Number(offset) } : {}),
        ...(limit !== undefined ? { limit: Number(limit) } : {}),
        ...(category !== undefined ? { category } : {}),
      });
    },
  );

  app.get<{ Querystring: { q: string; limit?: string } }>(
    '/memory/search',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            q: { type: 'string', maxLength: 2000 },
            limit: { type: 'string', pattern: '^([1-9]|[1-4][0-9]|50)$' },
          },
          required: ['q'],
          additionalProperties: false,
        },
      },
    },
    async (request): Promise<MemorySearchResults> =>
      memory().search.search(
        request.query.q,
        request.query.limit !== undefined ? { limit: Number(request.query.limit) } : {},
      ),
  );

  app.patch<{ Params: { id: string }; Body: { category?: string; key?: string; value?: string } }>(
    '/memory/facts/:id',
    {
      schema: {
        params: idParams,
        body: {
          type: 'object',
          properties: {
            category: { type: 'string', minLength: 1, maxLength: 40 },
            key: { type: 'string', minLength: 1, maxLength: 80 },
            value: { type: 'string', minLength: 1, maxLength: 2000 },
          },
          additionalProperties: false,
          minProperties: 1,
        },
      },
    },
    async (request): Promise<MemoryFactRecord> => {
      const fact = await memory().store.update(Number(request.params.id), request.body).catch(factError);
      if (!fact) throw new ApiError('FACT_NOT_FOUND');
      return fact;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/memory/facts/:id',
    { schema: { params: idParams } },
    async (request, reply) => {
      const removed = await memory().store.delete({ id: Number(request.params.id) });
      if (!removed) throw new ApiError('FACT_NOT_FOUND');
      reply.code(204);
    },
  );

  app.get('/memory/summary', async (): Promise<MemorySummaryView> => memory().store.getSummary());
};
