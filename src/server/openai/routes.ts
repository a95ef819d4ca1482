/**
 * The OpenAI-compatible API under `/v1` (docs/openai-api.md): the models (one per profile,
 * `navi:<profile id>`) and chat completions. Behind the same token as the rest of the API; every
 * error here, the access check's included, is answered in OpenAI's shape, since that is all an
 * OpenAI client can read.
 */
import type { FastifyPluginAsync } from 'fastify';
import {
  type ChatCompletion,
  type ChatCompletionRequest,
  type ModelEntry,
  type ModelList,
  NAVI_MODEL_PREFIX,
} from '../../protocol/openai.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { chatCompletion } from './completions.js';
import { Conversations } from './conversations.js';
import { openAiFailure } from './errors.js';
import { chatRequestSchema, profileOfModel } from './request.js';

export interface OpenAiRoutesOptions extends ServerContext {
  /** How often a silent stream sends a keep-alive comment (ms); tests make it short. */
  keepAliveMs?: number;
}

export const openAiRoutes: FastifyPluginAsync<OpenAiRoutesOptions> = async (
  app,
  { services, runs, keepAliveMs },
) => {
  const conversations = new Conversations(services, runs);
  // Profiles have no creation time; the time Navi started serves every model.
  const created = Math.floor(Date.now() / 1000);
  const modelOf = (id: string): ModelEntry => ({
    id: `${NAVI_MODEL_PREFIX}${id}`,
    object: 'model',
    created,
    owned_by: 'navi',
    name: services.profiles.get(id)?.name ?? id,
  });

  // Scoped to this plugin: the root access hook's refusals of these routes land here too.
  app.setErrorHandler((error, request, reply) => {
    const failure = openAiFailure(error);
    if (failure.internal) request.log.error({ err: error, url: request.url }, 'request failed');
    else request.log.debug({ code: failure.body.error.code, url: request.url }, 'request refused');
    return reply.code(failure.status).send(failure.body);
  });

  app.get(
    '/models',
    async (): Promise<ModelList> => ({
      object: 'list',
      data: services.profiles.list().map((profile) => modelOf(profile.id)),
    }),
  );

  app.get<{ Params: { id: string } }>(
    '/models/:id',
    { schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 300 } } } } },
    async (request): Promise<ModelEntry> => modelOf(profileOfModel(services, request.params.id)),
  );

  app.post<{ Body: ChatCompletionRequest }>(
    '/chat/completions',
    { schema: { body: chatRequestSchema } },
    async (request, reply): Promise<ChatCompletion | undefined> =>
      chatCompletion({ services, runs, conversations, keepAliveMs }, request, reply),
  );

  // Any other path under /v1 is an OpenAI 404, not the web client's (whose files match `/*`).
  app.all('/*', async () => {
    throw new ApiError(
      'NOT_FOUND',
      "that is not part of Navi's OpenAI-compatible API (GET /v1/models, GET /v1/models/{id}, POST /v1/chat/completions)",
    );
  });
};
