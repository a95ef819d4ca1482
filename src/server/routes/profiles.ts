/**
 * /agents/profiles/{id}: one profile as its file holds it (`GET`), and saving an edited one
 * (`PUT`, the person's decision: it changes what the agent may do). See docs/protocol.md#rest.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ProfileDocument } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ProfileDocuments } from '../profile-documents.js';

/** Longer ids name no profile (64 at most); the check on what they may hold is the handler's. */
const idParams = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 100 } },
  required: ['id'],
} as const;

/** Far above any real profile (the shipped ones are under 2 KiB), far below harm. */
export const PROFILE_BODY_LIMIT = 256 * 1024;

export const profileRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const documents = new ProfileDocuments(services.profiles, services.logger);

  app.get<{ Params: { id: string } }>(
    '/agents/profiles/:id',
    { schema: { params: idParams } },
    async (request): Promise<ProfileDocument> => documents.read(request.params.id),
  );

  app.put<{ Params: { id: string }; Body: { profile: unknown } }>(
    '/agents/profiles/:id',
    {
      bodyLimit: PROFILE_BODY_LIMIT,
      // A profile decides which tools the agent may use and which ask first: only the person's
      // own client may change one (see consent.ts), as the agent's file tools may not.
      config: { consent: true },
      schema: {
        params: idParams,
        body: {
          type: 'object',
          // Any JSON: the profile schema judges it and says what is wrong in its own words.
          properties: { profile: {} },
          required: ['profile'],
          additionalProperties: false,
        },
      },
    },
    async (request): Promise<ProfileDocument> => documents.write(request.params.id, request.body.profile),
  );
};
