/**
 * The person's consent. Answering a tool confirmation, approving an MCP server or making Navi
 * load new code stands for the person's own decision, so it needs a credential that only the
 * person's client holds: the API token (bearer header or `navi_auth` cookie) or the
 * `navi_consent` cookie of a browser paired with a code from `navi pair`. Coming from loopback
 * is never enough: the agent's own commands run on this machine too.
 *
 * Routes that stand for consent say so with `config: { consent: true }`; the WebSocket decides
 * once at upgrade time.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Settings } from '../config/settings.js';
import type { ConsentStore } from '../store/types.js';
import { hasValidToken, readCookie } from './auth.js';
import { ApiError } from './errors.js';

export const CONSENT_COOKIE = 'navi_consent';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Only a client holding the person's consent credential may call the route. */
    consent?: boolean;
  }
}

/** The longest cookie value looked up; real ones are 43 characters. */
const MAX_SECRET_LENGTH = 256;

/** The paired-client secret the request carries, if any (not yet checked). */
export function consentSecret(request: FastifyRequest): string | undefined {
  const value = readCookie(request.headers.cookie, CONSENT_COOKIE);
  if (value === undefined || value === '' || value.length > MAX_SECRET_LENGTH) return undefined;
  return value;
}

/** Whether the request carries the API token or the cookie of a paired client. */
export async function hasConsent(
  request: FastifyRequest,
  settings: Pick<Settings, 'NAVI_API_TOKEN'>,
  store: ConsentStore,
): Promise<boolean> {
  const token = settings.NAVI_API_TOKEN;
  if (token !== '' && hasValidToken(request, token)) return true;
  const secret = consentSecret(request);
  return secret !== undefined && (await store.isPaired(secret));
}

/**
 * Refuses the routes marked `consent` to clients without the credential. Register after
 * `registerAuth`, so that access is checked first.
 */
export function registerConsent(
  app: FastifyInstance,
  settings: Pick<Settings, 'NAVI_API_TOKEN'>,
  store: ConsentStore,
): void {
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.consent !== true) return;
    if (!(await hasConsent(request, settings, store))) throw new ApiError('CONSENT_REQUIRED');
  });
}
