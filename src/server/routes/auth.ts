/**
 * POST /auth/login {token} sets the `navi_auth` cookie (HttpOnly, SameSite=Strict, Path=/) for
 * browsers, which cannot put a bearer token on a WebSocket upgrade; POST /auth/logout clears it.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUTH_COOKIE, cookieValueFor, secretsEqual } from '../auth.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

const COOKIE_MAX_AGE_SECONDS = 30 * 24 * 3600;

function cookie(request: FastifyRequest, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${AUTH_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure}`;
}

export const authRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const token = services.settings.NAVI_API_TOKEN;

  app.post<{ Body: { token: string } }>(
    '/auth/login',
    {
      config: { public: true },
      schema: {
        body: {
          type: 'object',
          properties: { token: { type: 'string', maxLength: 4096 } },
          required: ['token'],
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      // Without a configured token there is nothing to log in to (only local clients are served).
      if (token === '') return { ok: true, token_required: false };
      // An empty token is no token at all; any other that does not match is the wrong one.
      if (request.body.token.trim() === '') throw new ApiError('UNAUTHORIZED');
      if (!secretsEqual(request.body.token, token)) throw new ApiError('TOKEN_WRONG');
      reply.header('set-cookie', cookie(request, cookieValueFor(token), COOKIE_MAX_AGE_SECONDS));
      return { ok: true, token_required: true };
    },
  );

  app.post('/auth/logout', async (request, reply) => {
    reply.header('set-cookie', cookie(request, '', 0));
    return { ok: true };
  });
};
