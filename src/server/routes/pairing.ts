/**
 * Pairing a browser with the person's consent (see `consent.ts`):
 * - `GET /auth/status` tells a client whether a token is required and whether it holds consent;
 * - `POST /auth/pair {code}` exchanges a code from `navi pair` for the `navi_consent` cookie
 *   (HttpOnly, SameSite=Strict, Path=/);
 * - `DELETE /auth/pair` forgets this browser and clears its cookie.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AuthStatus, PairReply, PairRequest } from '../../protocol/rest.js';
import type { PairingRefusal } from '../../store/types.js';
import { CONSENT_COOKIE, consentSecret, hasConsent } from '../consent.js';
import type { ServerContext } from '../context.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { PairingLimiter } from '../pairing-limiter.js';

/** Browsers cap cookie lifetimes near 400 days; pairing again after that is acceptable. */
const COOKIE_MAX_AGE_SECONDS = 400 * 24 * 3600;

const refusalCodes: Record<PairingRefusal, ErrorCode> = {
  unknown: 'PAIRING_CODE_INVALID',
  expired: 'PAIRING_CODE_EXPIRED',
  used: 'PAIRING_CODE_USED',
};

function consentCookie(request: FastifyRequest, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${CONSENT_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure}`;
}

export const pairingRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const { settings, consent: store } = services;
  const limiter = new PairingLimiter();

  app.get(
    '/auth/status',
    { config: { public: true } },
    async (request): Promise<AuthStatus> => ({
      token_required: settings.NAVI_API_TOKEN !== '',
      consent: await hasConsent(request, settings, store),
    }),
  );

  app.post<{ Body: PairRequest }>(
    '/auth/pair',
    {
      schema: {
        body: {
          type: 'object',
          properties: { code: { type: 'string', minLength: 1, maxLength: 64 } },
          required: ['code'],
          additionalProperties: false,
        },
      },
    },
    async (request, reply): Promise<PairReply> => {
      if (limiter.blocked()) throw new ApiError('PAIRING_RATE_LIMITED');
      const userAgent = request.headers['user-agent'] ?? '';
      const result = await store.redeemPairingCode(request.body.code, userAgent);
      if (!result.ok) {
        limiter.recordFailure();
        throw new ApiError(refusalCodes[result.reason]);
      }
      request.log.info({ user_agent: userAgent }, 'a client was paired and may now give consent');
      reply.header('set-cookie', consentCookie(request, result.secret, COOKIE_MAX_AGE_SECONDS));
      return { ok: true, consent: true };
    },
  );

  app.delete('/auth/pair', async (request, reply) => {
    const secret = consentSecret(request);
    const unpaired = secret !== undefined && (await store.unpair(secret));
    reply.header('set-cookie', consentCookie(request, '', 0));
    return { ok: true, unpaired };
  });
};
