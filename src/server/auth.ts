/**
 * Who may talk to the server (see docs/protocol.md#authentication). With NAVI_API_TOKEN set, every API call and every
 * WebSocket upgrade needs `Authorization: Bearer <token>` or the `navi_auth` cookie set by
 * `POST /auth/login`; a token in the URL is never read, because URLs end up in logs and
 * browser history. Without a token, only loopback clients are served.
 *
 * Routes opt out with `config: { public: true }` (health, login, the web client's files).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Settings } from '../config/settings.js';
import type { ErrorCode } from './errors.js';
import { ApiError } from './errors.js';

export const AUTH_COOKIE = 'navi_auth';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (still loopback-only when no token is configured). */
    public?: boolean;
    /** The route checks access itself (the WebSocket, which answers with close codes). */
    selfChecked?: boolean;
  }
}

type AccessSettings = Pick<Settings, 'NAVI_API_TOKEN' | 'NAVI_ALLOWED_ORIGINS' | 'NAVI_HOST'>;

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const ip = address.toLowerCase();
  if (ip === '::1' || ip === '0:0:0:0:0:0:0:1') return true;
  const v4 = ip.startsWith('::ffff:') ? ip.slice('::ffff:'.length) : ip;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Compares in constant time (hashing first makes the lengths equal). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/**
 * The cookie holds a value derived from the token, not the token itself, so a leaked cookie
 * does not reveal the token, and changing the token logs every browser out.
 */
export function cookieValueFor(token: string): string {
  return createHmac('sha256', token).update('navi_auth cookie v1').digest('base64url');
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match?.[1]?.trim();
}

/** The bearer token and our cookie a request offers, each left out when absent or empty. */
function offered(request: FastifyRequest): { bearer?: string; cookie?: string } {
  const bearer = bearerToken(request.headers.authorization);
  const cookie = readCookie(request.headers.cookie, AUTH_COOKIE);
  return { ...(bearer ? { bearer } : {}), ...(cookie ? { cookie } : {}) };
}

/** Whether the request carries the configured token (header or cookie). */
export function hasValidToken(request: FastifyRequest, token: string): boolean {
  const { bearer, cookie } = offered(request);
  if (bearer !== undefined && secretsEqual(bearer, token)) return true;
  return cookie !== undefined && secretsEqual(cookie, cookieValueFor(token));
}

/** Why the request may not proceed, or undefined when it may. */
export function accessProblem(
  request: FastifyRequest,
  settings: AccessSettings,
  isPublic: boolean,
): ErrorCode | undefined {
  const token = settings.NAVI_API_TOKEN;
  if (token === '') {
    if (!isLoopback(request.socket.remoteAddress)) return 'REMOTE_FORBIDDEN';
    return hostAllowed(request.headers.host, settings) ? undefined : 'FOREIGN_HOST';
  }
  if (isPublic) return undefined;
  if (hasValidToken(request, token)) return undefined;
  // A credential that is offered but wrong (a cookie from before NAVI_API_TOKEN changed, a
  // mistyped token) is told apart from none, so the person learns that signing in again fixes it.
  const { bearer, cookie } = offered(request);
  return bearer !== undefined || cookie !== undefined ? 'TOKEN_WRONG' : 'UNAUTHORIZED';
}

/**
 * Without a token, a web page on another site could reach a loopback server by pointing its own
 * host name at 127.0.0.1 (DNS rebinding): the browser then treats it as same-origin. Its requests
 * still name the foreign host in `Host`, so only loopback names, NAVI_HOST and the hosts of
 * NAVI_ALLOWED_ORIGINS are accepted there.
 */
export function hostAllowed(host: string | undefined, settings: AccessSettings): boolean {
  if (host === undefined) return true; // HTTP/1.0-style clients; not a browser
  let name: string;
  try {
    name = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || isLoopback(name))
    return true;
  if (name === settings.NAVI_HOST.toLowerCase() || `[${settings.NAVI_HOST.toLowerCase()}]` === name)
    return true;
  return settings.NAVI_ALLOWED_ORIGINS.some((origin) => {
    try {
      return new URL(origin).hostname.toLowerCase() === name;
    } catch {
      return false;
    }
  });
}

/**
 * Browsers always send `Origin` on cross-site requests and WebSocket upgrades; other clients
 * usually send none and are allowed. Same origin means the Origin's host equals `Host`.
 */
export function originAllowed(request: FastifyRequest, settings: AccessSettings): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (
    request.headers.host !== undefined &&
    parsed.host === normaliseHost(parsed.protocol, request.headers.host)
  ) {
    return true;
  }
  const normalised = parsed.origin.toLowerCase();
  return settings.NAVI_ALLOWED_ORIGINS.some(
    (allowed) => allowed.replace(/\/+$/, '').toLowerCase() === normalised,
  );
}

/** `localhost:80` and `localhost` are the same host for http: compare as URLs do. */
function normaliseHost(protocol: string, host: string): string | undefined {
  try {
    return new URL(`${protocol}//${host}`).host;
  } catch {
    return undefined;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Installs the access check on every route of `app` (register at the root, before routes). */
export function registerAuth(app: FastifyInstance, settings: AccessSettings): void {
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.selfChecked) return;
    // Unknown routes are public so that they can answer 404; they expose nothing.
    const isPublic = config.public === true || request.routeOptions.url === undefined;
    const problem = accessProblem(request, settings, isPublic);
    if (problem) throw new ApiError(problem);
    // A state-changing request from another site's page (a form post, an upload) is refused
    // even when the browser would attach our cookie.
    if (!SAFE_METHODS.has(request.method) && !originAllowed(request, settings))
      throw new ApiError('FOREIGN_ORIGIN');
  });
}
