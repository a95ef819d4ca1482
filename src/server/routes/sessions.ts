/** /sessions: create, list, read, rename, pin and delete sessions (docs/protocol.md#rest). */
import type { FastifyPluginAsync } from 'fastify';
import type { EventOf } from '../../protocol/events.js';
import type { MessagePage, ModelChoice, SessionDetail, SessionSummary } from '../../protocol/rest.js';
import type { SessionPatch } from '../../store/types.js';
import { switchProfile } from '../../tools/builtin/switch-profile.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { createSession } from '../headless-run.js';
import { messagePage, type PageQuery } from '../message-page.js';
import { requireSession } from '../session-lookup.js';
import { sessionContextWindow } from '../session-model.js';

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 100 } },
  required: ['id'],
} as const;

const MAX_TITLE = 200;

/**
 * `{backend, model}` or null (back to the profile's). The model is not looked up: its server
 * may be down now, and the run says so plainly if the model is missing.
 */
const modelSchema = {
  type: ['object', 'null'],
  properties: {
    backend: { type: 'string', minLength: 1, maxLength: 64 },
    model: { type: 'string', minLength: 1, maxLength: 200 },
  },
  required: ['backend', 'model'],
  additionalProperties: false,
} as const;

function normaliseTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed.length < 1 || trimmed.length > MAX_TITLE) throw new ApiError('INVALID_TITLE');
  return trimmed;
}

export const sessionRoutes: FastifyPluginAsync<ServerContext> = async (app, { services, runs, files }) => {
  const checkModelChoice = (choice: ModelChoice | null): ModelChoice | null => {
    if (choice === null) return null;
    const backends = services.llm?.backends;
    const known = backends ? backends.list().map((b) => b.id) : [];
    if (!known.includes(choice.backend)) {
      throw new ApiError(
        'UNKNOWN_BACKEND',
        `"${choice.backend.slice(0, 64)}" is not one of ${known.join(', ') || 'no configured backend'}`,
      );
    }
    const model = choice.model.trim();
    if (model === '') throw new ApiError('BAD_REQUEST', 'model.model must name a model, not only spaces');
    return { backend: choice.backend, model };
  };

  app.post<{ Body: { profile_id?: string } | undefined }>(
    '/sessions',
    {
      schema: {
        body: {
          type: ['object', 'null'],
          properties: { profile_id: { type: 'string', minLength: 1, maxLength: 64 } },
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      const profileId = request.body?.profile_id ?? services.profiles.getDefault().id;
      if (!services.profiles.has(profileId)) throw new ApiError('UNKNOWN_PROFILE', profileId);
      const session = await createSession(services, profileId);
      reply.code(201);
      return { session_id: session.id, profile_id: session.profile_id, created_at: session.created_at };
    },
  );

  app.get('/sessions', async (): Promise<SessionSummary[]> => services.sessions.list());

  app.get<{ Params: { id: string }; Querystring: { limit?: unknown } }>(
    '/sessions/:id',
    { schema: { params: idParams } },
    async (request): Promise<SessionDetail> => {
      const session = await requireSession(services.sessions, request.params.id);
      const page = await messagePage(services.sessions, session.id, { limit: request.query.limit });
      // The client's context meter needs the window before the first run of this page ends.
      return { ...session, ...page, max_context_tokens: sessionContextWindow(services, session) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: PageQuery }>(
    '/sessions/:id/messages',
    { schema: { params: idParams } },
    async (request): Promise<MessagePage> => {
      const session = await requireSession(services.sessions, request.params.id);
      return messagePage(services.sessions, session.id, request.query);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/sessions/:id/context',
    { schema: { params: idParams } },
    async (request) => {
      const session = await requireSession(services.sessions, request.params.id);
      return { messages: await services.sessions.getContext(session.id) };
    },
  );

  app.patch<{
    Params: { id: string };
    Body: { title?: string; pinned?: boolean; model?: ModelChoice | null; profile_id?: string };
  }>(
    '/sessions/:id',
    {
      schema: {
        params: idParams,
        body: {
          type: 'object',
          properties: {
            title: { type: 'string', maxLength: 10_000 },
            pinned: { type: 'boolean' },
            model: modelSchema,
            profile_id: { type: 'string', minLength: 1, maxLength: 64 },
          },
          additionalProperties: false,
          minProperties: 1,
        },
      },
    },
    async (request): Promise<SessionSummary> => {
      const session = await requireSession(services.sessions, request.params.id);
      const patch: SessionPatch = {};
      if (request.body.title !== undefined) patch.title = normaliseTitle(request.body.title);
      if (request.body.pinned !== undefined) patch.pinned = request.body.pinned;
      if (request.body.model !== undefined) patch.model_override = checkModelChoice(request.body.model);
      let switched: EventOf<'profile_switched'> | undefined;
      if (request.body.profile_id !== undefined) {
        // A run reads its profile once, at its start: a change under it would reach only part of it.
        if (await runs.busy(session.id))
          throw new ApiError('RUN_ACTIVE', 'the profile can change once the answer is finished or stopped');
        const result = await switchProfile(
          services.profiles,
          session.profile_id,
          request.body.profile_id,
          async (profile) => {
            patch.profile_id = profile.id;
          },
        );
        if (result.status === 'unknown')
          throw new ApiError(
            'UNKNOWN_PROFILE',
            `"${result.id}"; choose one of ${result.known.join(', ')} (GET /agents/profiles)`,
          );
        if (result.status === 'switched') switched = result.event;
      }
      const updated = await services.sessions.update(session.id, patch);
      if (!updated) throw new ApiError('SESSION_NOT_FOUND');
      if (switched) runs.notify(session.id, switched);
      return updated;
    },
  );

  app.patch<{ Params: { id: string }; Body: { pinned: boolean } }>(
    '/sessions/:id/pin',
    {
      schema: {
        params: idParams,
        body: {
          type: 'object',
          properties: { pinned: { type: 'boolean' } },
          required: ['pinned'],
          additionalProperties: false,
        },
      },
    },
    async (request): Promise<SessionSummary> => {
      const session = await requireSession(services.sessions, request.params.id);
      const updated = await services.sessions.update(session.id, { pinned: request.body.pinned });
      if (!updated) throw new ApiError('SESSION_NOT_FOUND');
      return updated;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/sessions/:id',
    { schema: { params: idParams } },
    async (request, reply) => {
      const session = await requireSession(services.sessions, request.params.id);
      // A running agent would keep writing into the session being deleted: stop it and let it
      // save what it has before the rows go. A run that has just ended here may still be writing
      // its last events (on PostgreSQL its end waits for the session to be freed): wait for it too.
      const ending = runs.get(session.id) !== undefined;
      if ((await runs.stop(session.id)) || ending) {
        await Promise.race([
          runs.idle(session.id),
          new Promise((resolve) => setTimeout(resolve, 3000).unref()),
        ]);
      }
      await services.sessions.delete(session.id);
      await files.removeSession(session.id);
      await services.onSessionDeleted?.(session.id);
      reply.code(204);
    },
  );
};
