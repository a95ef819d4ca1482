/**
 * What an MCP server's card offers for OAuth (web/src/lib/mcp-auth.ts): Connect or Revoke, the
 * line about the token, and how a wait for the person's approval ends.
 */
import { describe, expect, it } from 'vitest';
import type { McpAuthInfo, McpServerInfo } from '../../src/protocol/rest.js';
import { authAction, authSummary, waitOutcome } from '../../web/src/lib/mcp-auth.js';

type View = Pick<McpServerInfo, 'transport' | 'state' | 'auth' | 'last_error'>;

const auth = (status: McpAuthInfo['status'], extra: Partial<McpAuthInfo> = {}): McpAuthInfo => ({
  status,
  scope: null,
  expires_at: null,
  ...extra,
});
const server = (
  state: McpServerInfo['state'],
  a: McpAuthInfo | null,
  last_error: string | null = null,
): View => ({
  transport: 'http',
  state,
  auth: a,
  last_error,
});

describe('authAction', () => {
  it('offers Connect to an HTTP server waiting for authorisation, or whose page was never finished', () => {
    expect(authAction(server('needs_auth', auth('needs_authorization')))).toBe('connect');
    expect(authAction(server('needs_auth', null))).toBe('connect');
    expect(authAction(server('needs_auth', auth('pending')))).toBe('connect');
  });

  it('offers Revoke once Navi holds a token, whatever the server does', () => {
    expect(authAction(server('ready', auth('authorized')))).toBe('revoke');
    expect(authAction(server('down', auth('authorized')))).toBe('revoke');
  });

  it('offers nothing to a server that never asked, or to a command', () => {
    expect(authAction(server('ready', null))).toBeNull();
    expect(
      authAction({ ...server('needs_auth', auth('needs_authorization')), transport: 'stdio' }),
    ).toBeNull();
  });
});

describe('authSummary', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');

  it('names the scope and how long the token lasts', () => {
    const a = auth('authorized', { scope: 'mcp:read mcp:write', expires_at: '2026-01-01T12:55:00Z' });
    expect(authSummary(a, now)).toBe('Authorised · scope: mcp:read mcp:write · token good for 55 min');
  });

  it('says an expired token is renewed rather than that it failed, and leaves out what is unknown', () => {
    expect(authSummary(auth('authorized', { expires_at: '2026-01-01T11:00:00Z' }), now)).toBe(
      'Authorised · token renewed at next use',
    );
    expect(authSummary(auth('authorized'), now)).toBe('Authorised');
    expect(authSummary(auth('authorized', { expires_at: 'not a time' }), now)).toBe('Authorised');
  });

  it('is empty for anything but an authorised server', () => {
    expect(authSummary(auth('pending'), now)).toBeNull();
    expect(authSummary(null, now)).toBeNull();
  });
});

describe('waitOutcome', () => {
  it('ends well once authorised and running, and keeps waiting while it connects', () => {
    expect(waitOutcome(server('ready', auth('authorized')), true)).toEqual({ done: true, problem: null });
    expect(waitOutcome(server('connecting', auth('authorized')), true)).toEqual({ done: false });
  });

  it('ends with the error when the authorisation came back without a token', () => {
    const outcome = waitOutcome(server('needs_auth', auth('needs_authorization'), 'access_denied'), true);
    expect(outcome).toEqual({
      done: true,
      problem: 'Not connected: access_denied. Press Connect to try again.',
    });
  });

  it('says the other tab tells why when the status names no error', () => {
    expect(waitOutcome(server('needs_auth', auth('needs_authorization')), true)).toEqual({
      done: true,
      problem:
        'Not connected: the authorisation ended without a token (the other tab says why). Press Connect to try again.',
    });
  });

  it('keeps waiting before the authorisation was known to be pending, and while it is', () => {
    expect(waitOutcome(server('needs_auth', auth('needs_authorization')), false)).toEqual({ done: false });
    expect(waitOutcome(server('needs_auth', auth('pending')), true)).toEqual({ done: false });
  });

  it('says so when authorised but the server does not run', () => {
    const outcome = waitOutcome(server('down', auth('authorized'), 'HTTP 500: boom'), true);
    expect(outcome).toEqual({
      done: true,
      problem: 'Authorised, but the server is not running: HTTP 500: boom.',
    });
  });
});
