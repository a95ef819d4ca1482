/**
 * A session's recalls for the client: list them, cancel one, skip its next run. The agent
 * schedules them with `schedule_recall`; these routes are how the person keeps control.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RecallList, RecallSummary } from '../../protocol/rest.js';
import type { RecallChange } from '../../recall/types.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { requireSession } from '../session-lookup.js';

const sessionParams = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 64 } },
  required: ['id'],
} as const;

const recallParams = {
  type: 'object',
  properties: {
    id: { type: 'string', maxLength: 64 },
    rid: { type: 'string', minLength: 1, maxLength: 64 },
  },
  required: ['id', 'rid'],
} as const;

function changed(change: RecallChange): { recall: RecallSummary } {
  if (!change.ok) throw new ApiError(change.code, change.message);
  return { recall: change.recall };
}

export const recallRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const recalls = () => {
    if (!services.recalls) throw new ApiError('NOT_FOUND', 'recalls are not enabled');
    return services.recalls;
  };

  app.get<{ Params: { id: string } }>(
    '/sessions/:id/recalls',
    { schema: { params: sessionParams } },
    async (request): Promise<RecallList> => {
      await requireSession(services.sessions, request.params.id);
      return { recalls: await recalls().list(request.params.id) };
    },
  );

  app.delete<{ Params: { id: string; rid: string } }>(
    '/sessions/:id/recalls/:rid',
    { schema: { params: recallParams } },
    async (request) => {
      await requireSession(services.sessions, request.params.id);
      return changed(await recalls().cancel(request.params.id, request.params.rid));
    },
  );

  app.post<{ Params: { id: string; rid: string } }>(
    '/sessions/:id/recalls/:rid/skip',
    { schema: { params: recallParams } },
    async (request) => {
      await requireSession(services.sessions, request.params.id);
      return changed(await recalls().skip(request.params.id, request.params.rid));
    },
  );
};
