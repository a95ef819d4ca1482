/**
 * What OAuth refuses, and says why: bad callbacks, servers that cannot authorise, a locked
 * vault. Also the real last error of an HTTP server (status and body, or the network error),
 * and that no token, code or verifier ever reaches the log at debug level.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../../test/support/oauth-mcp-server.js';
import { openVault } from '../../vault/index.js';
import { McpAuthError, McpUnknownServerError } from '../manager.js';
import {
  type OAuthHarness,
  oauthHarness,
  REDIRECT_BASE,
  vaultOptions,
  visit,
} from './oauth-support.test-helpers.js';
import { PENDING_TTL_MS } from './pending.js';

let server: OAuthMcpServer | undefined;
let h: OAuthHarness | undefined;

afterEach(async () => {
  await h?.close();
  await server?.close();
  h = undefined;
  server = undefined;
});

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error('expected a refusal');
  return err;
}

describe('authorisation refusals', () => {
  it("refuses a missing, unknown or reused state, and reports the authorisation server's error", async () => {
    server = await startOAuthMcpServer({ autoApprove: true });
    h = await oauthHarness({ 'remote.json': { name: 'remote', url: server.url } });
    await h.waitForState('needs_auth');

    const missing = await refusal(h.manager.completeAuthorization({ code: 'x' }));
    expect(missing).toBeInstanceOf(McpAuthError);
    expect(missing.message).toContain('no "state"');
    const unknown = await refusal(h.manager.completeAuthorization({ state: 'made-up', code: 'x' }));
    expect(unknown.message).toContain('unknown, expired');
    expect((unknown as McpAuthError).status).toBe(400);
    const wrongType = await refusal(
      h.manager.completeAuthorization({ state: 42 as unknown as string, code: 'x' }),
    );
    expect(wrongType.message).toContain('"state" must be a string');
    const huge = await refusal(h.manager.completeAuthorization({ state: 's'.repeat(10_000), code: 'x' }));
    expect(huge.message).toContain('at most 4096 characters');

    const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
    const query = await visit(authorizationUrl);
    await h.manager.completeAuthorization(query);
    await h.waitForState('ready');
    const reused = await refusal(h.manager.completeAuthorization(query));
    expect(reused.message).toContain('already completed');

    await h.manager.revokeAuthorization('remote');
    await h.waitForState('needs_auth');
    const again = new URL((await h.manager.authorize('remote', REDIRECT_BASE)).authorizationUrl);
    const denied = await refusal(
      h.manager.completeAuthorization({
        state: again.searchParams.get('state') ?? '',
        error: 'access_denied',
        error_description: 'The person denied the request',
      }),
    );
    expect(denied.message).toContain('answered access_denied: The person denied the request');
    expect(denied.message).toContain('press Connect');
    expect(h.status().auth?.status).toBe('needs_authorization');
  });

  it('an authorisation left unanswered is no longer pending once it expires, and its state is refused', async () => {
    server = await startOAuthMcpServer({ autoApprove: true, requiredScopes: ['mcp:read'] });
    h = await oauthHarness({ 'remote.json': { name: 'remote', url: server.url } });
    await h.waitForState('needs_auth');
    const waiting = h.status().auth;
    expect(waiting).toEqual({ status: 'needs_authorization', scope: 'mcp:read', expires_at: null });
    await h.manager.authorize('remote', REDIRECT_BASE);
    // A second Connect replaces the first; what it was before is still what expiry goes back to.
    const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
    const query = await visit(authorizationUrl);
    expect(h.status().auth?.status).toBe('pending');

    const start = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => start + PENDING_TTL_MS - 1000);
    try {
      expect(h.status().auth?.status).toBe('pending');
      clock.mockImplementation(() => start + PENDING_TTL_MS + 1000);
      expect(h.status().auth).toEqual(waiting);
      expect(h.status().state).toBe('needs_auth');
      const late = await refusal(h.manager.completeAuthorization(query));
      expect(late.message).toContain('unknown, expired');
    } finally {
      clock.mockRestore();
    }
    expect(h.status().auth).toEqual(waiting);
  });

  it('refuses an unknown server, a stdio server and a redirect base that is no origin', async () => {
    server = await startOAuthMcpServer({ autoApprove: true });
    h = await oauthHarness({
      'remote.json': { name: 'remote', url: server.url },
      // Disabled: never started, yet known (and stdio).
      'local.json': { name: 'local', command: process.execPath, enabled: false },
    });
    await h.waitForState('needs_auth');
    const unknown = await refusal(h.manager.authorize('nope', REDIRECT_BASE));
    expect(unknown).toBeInstanceOf(McpUnknownServerError);
    expect(unknown.message).toContain('known: ');
    expect(await refusal(h.manager.revokeAuthorization('nope'))).toBeInstanceOf(McpUnknownServerError);
    const stdio = await refusal(h.manager.authorize('local', REDIRECT_BASE));
    expect(stdio).toBeInstanceOf(McpAuthError);
    expect(stdio.message).toContain('stdio');
    for (const base of ['not a url', 'ftp://host', 'http://127.0.0.1:8000/?x=1', `javascript:alert(1)`]) {
      const bad = await refusal(h.manager.authorize('remote', base));
      expect(bad).toBeInstanceOf(McpAuthError);
      expect(bad.message).toMatch(/redirect base/);
    }
  });

  it('refuses to authorise while the vault is locked, saying how to unlock it', async () => {
    server = await startOAuthMcpServer({ autoApprove: true });
    const wrongKey = Buffer.alloc(32, 7).toString('base64');
    h = await oauthHarness(
      { 'remote.json': { name: 'remote', url: server.url } },
      {
        vault: (dir) => {
          // Created with its key file, then opened with another key: locked.
          openVault(vaultOptions(dir)).close();
          return openVault(vaultOptions(dir, wrongKey));
        },
      },
    );
    expect(h.vault.status().state).toBe('locked');
    await h.waitForState('needs_auth');
    const locked = await refusal(h.manager.authorize('remote', REDIRECT_BASE));
    expect(locked).toBeInstanceOf(McpAuthError);
    expect((locked as McpAuthError).status).toBe(503);
    expect(locked.message).toContain('the vault, where Navi keeps OAuth tokens, is locked');
    const status = h.vault.status();
    if (status.state === 'locked') expect(locked.message).toContain(status.howToUnlock);
  });
});

describe('the real last error of an HTTP server', () => {
  it('names a refused connection with its code', async () => {
    const closed = await startOAuthMcpServer();
    const url = closed.url;
    await closed.close();
    h = await oauthHarness({ 'gone.json': { name: 'gone', url } });
    const status = await h.waitForState('down');
    expect(status.last_error).toMatch(/could not reach http:\/\/127\.0\.0\.1:\d+\/mcp: .*ECONNREFUSED/);
  });

  it('names an unknown host', async () => {
    h = await oauthHarness({ 'nowhere.json': { name: 'nowhere', url: 'http://navi-test.invalid/mcp' } });
    const status = await h.waitForState('down');
    expect(status.last_error).toMatch(
      /could not reach http:\/\/navi-test\.invalid\/mcp: .*(ENOTFOUND|EAI_AGAIN)/,
    );
  });
});

describe('logging', () => {
  it('never logs a token, code or verifier, even at debug level', async () => {
    let logged = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    server = await startOAuthMcpServer({ autoApprove: true, tokenLifetimeSeconds: 1 });
    h = await oauthHarness(
      { 'remote.json': { name: 'remote', url: server.url } },
      { logger: pino({ level: 'debug' }, sink) },
    );
    await h.waitForState('needs_auth');
    const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
    const query = await visit(authorizationUrl);
    await h.manager.completeAuthorization(query);
    await h.waitForState('ready');
    const expiresAt = Date.parse(h.status().auth?.expires_at ?? '');
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now() + 50)));
    expect(await h.call('whoami')).toMatchObject({ success: true });
    await h.manager.revokeAuthorization('remote');
    await h.waitForState('needs_auth');

    expect(logged).toContain('MCP server authorised');
    expect(server.events.issued.length).toBeGreaterThanOrEqual(4);
    for (const secret of [...server.events.issued, query.state ?? '']) expect(logged).not.toContain(secret);
    const challenge = new URL(authorizationUrl).searchParams.get('code_challenge') ?? '';
    expect(logged).not.toContain(challenge);
  });
});
