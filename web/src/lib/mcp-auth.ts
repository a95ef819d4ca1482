/**
 * OAuth of an MCP server on the MCP servers page (docs/mcp.md#oauth): which button a server's
 * card offers, the short line about its token and how a wait for the person's approval ends.
 * The REST calls behind Connect and Revoke are in mcp-auth-api.ts.
 */
// Relative rather than `@protocol`: the unit tests in test/web compile this file with the
// server's configuration, which has no such alias.
import type { McpAuthInfo, McpServerInfo } from '../../../src/protocol/rest.js';
import { duration } from './insight.js';

type AuthView = Pick<McpServerInfo, 'transport' | 'state' | 'auth'>;

/**
 * What the card offers: Connect for an HTTP server that waits for authorisation (or whose
 * authorisation was started and never finished: the tab may have been closed), Revoke for one
 * Navi holds a token for, nothing for the rest.
 */
export function authAction(server: AuthView): 'connect' | 'revoke' | null {
  if (server.transport !== 'http') return null;
  if (server.auth?.status === 'authorized') return 'revoke';
  if (server.state === 'needs_auth' || server.auth?.status === 'needs_authorization') return 'connect';
  if (server.auth?.status === 'pending') return 'connect';
  return null;
}

/** "Authorised · scope: files:read · token good for 55 min", for an authorised server. */
export function authSummary(auth: McpAuthInfo | null, now: number = Date.now()): string | null {
  if (auth?.status !== 'authorized') return null;
  const parts = ['Authorised'];
  if (auth.scope) parts.push(`scope: ${auth.scope}`);
  const expires = auth.expires_at ? Date.parse(auth.expires_at) : Number.NaN;
  if (Number.isFinite(expires)) {
    const left = duration(expires - now);
    // An expired access token is renewed with the refresh token at the next call.
    parts.push(left ? `token good for ${left}` : 'token renewed at next use');
  }
  return parts.join(' · ');
}

/**
 * How a wait for the person's approval stands, from a fresh status. `sawPending`: the
 * authorisation is known to have been pending since Connect (Navi marks it so before it hands
 * out the page), so needing authorisation again means the callback brought no token (denied,
 * or it failed).
 */
export function waitOutcome(
  server: AuthView & Pick<McpServerInfo, 'last_error'>,
  sawPending: boolean,
): { done: true; problem: string | null } | { done: false } {
  const status = server.auth?.status;
  if (status === 'authorized') {
    if (server.state === 'ready') return { done: true, problem: null };
    if (server.state === 'down' || server.state === 'stopped')
      return {
        done: true,
        problem: `Authorised, but the server is not running${server.last_error ? `: ${server.last_error}` : ''}.`,
      };
    return { done: false };
  }
  if (sawPending && status !== 'pending')
    return {
      done: true,
      problem: `Not connected: ${server.last_error ?? 'the authorisation ended without a token (the other tab says why)'}. Press Connect to try again.`,
    };
  return { done: false };
}
