/**
 * OAuth of HTTP MCP servers, end to end: a real authorisation + resource server
 * (test/support/oauth-mcp-server.ts), a real McpManager and connections, tokens in a real
 * vault in a temporary folder.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type OAuthMcpServer,
  type OAuthMcpServerOptions,
  startOAuthMcpServer,
  WHOAMI_TEXT,
} from '../../../test/support/oauth-mcp-server.js';
import { waitFor } from '../fixtures/harness.js';
import { McpAuthError } from '../manager.js';
import { type OAuthHarness, oauthHarness, REDIRECT_BASE, visit } from './oauth-support.test-helpers.js';
import { MCP_OAUTH_TAG } from './vault-token-store.js';

let server: OAuthMcpServer;
let h: OAuthHarness;

afterEach(async () => {
  await h?.close();
  await server?.close();
});

async function setUp(options: OAuthMcpServerOptions, oauth?: Record<string, unknown>): Promise<void> {
  server = await startOAuthMcpServer(options);
  h = await oauthHarness({ 'remote.json': { name: 'remote', url: server.url, ...(oauth && { oauth }) } });
}

async function authorise(): Promise<URL> {
  const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
  const query = await visit(authorizationUrl);
  await h.manager.completeAuthorization(query);
  await h.waitForState('ready');
  return new URL(authorizationUrl);
}

describe('an HTTP server that asks for OAuth', () => {
  it('waits in needs_auth with the real 401, without restarting', async () => {
    await setUp({ autoApprove: true, requiredScopes: ['mcp:read'] });
    const status = await h.waitForState('needs_auth');
    expect(status.last_error).toMatch(/^HTTP 401 Unauthorized: \{"error":"invalid_token"/);
    expect(status.last_error).toContain('press Connect on the MCP servers page');
    expect(status.last_error).toContain('navi mcp login remote');
    expect(status.auth).toEqual({ status: 'needs_authorization', scope: 'mcp:read', expires_at: null });
    const seen = server.events.mcpStatuses.length;
    // Several back-off periods (100 ms at most here) go by: no new attempt may be made.
    await new Promise((r) => setTimeout(r, 500));
    expect(server.events.mcpStatuses.length).toBe(seen);
    expect(h.status()).toMatchObject({ state: 'needs_auth', restarts: 0 });
    const refused = await h.call('whoami').catch((err: Error) => ({ success: false, error: err.message }));
    expect(refused.success).toBe(false);
  });

  it('authorises with PKCE, state, resource and the scope of WWW-Authenticate, then calls with the token', async () => {
    await setUp({
      autoApprove: true,
      requiredScopes: ['mcp:read'],
      scopesSupported: ['mcp:read', 'mcp:write'],
    });
    await h.waitForState('needs_auth');
    const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
    const url = new URL(authorizationUrl);
    expect(url.origin).toBe(server.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(url.searchParams.get('resource')).toBe(server.url);
    expect(url.searchParams.get('scope')).toBe('mcp:read');
    expect(url.searchParams.get('redirect_uri')).toBe(`${REDIRECT_BASE}/agents/mcp/oauth/callback`);
    expect(h.status().auth).toMatchObject({ status: 'pending', scope: 'mcp:read' });
    expect(server.events.registrations).toHaveLength(1);
    expect(server.events.registrations[0]).toMatchObject({ client_name: 'Navi' });

    const query = await visit(authorizationUrl);
    expect(await h.manager.completeAuthorization(query)).toEqual({ server: 'remote' });
    const status = await h.waitForState('ready');
    expect(status.auth).toMatchObject({ status: 'authorized', scope: 'mcp:read' });
    expect(Date.parse(status.auth?.expires_at ?? '')).toBeGreaterThan(Date.now());
    expect(await h.call('whoami')).toMatchObject({
      success: true,
      output: `${WHOAMI_TEXT}; scopes: mcp:read`,
    });
    expect(server.events.grants.filter((g) => g.ok).map((g) => g.grant_type)).toEqual(['authorization_code']);
    // RFC 8707: the token is asked for this MCP server, so it cannot be replayed at another.
    expect(server.events.grants[0]?.resource).toBe(server.url);

    // The tokens are one secret of the vault, tagged, their value encrypted (never shown masked).
    const [secret, ...others] = h.vault.search({ tag: MCP_OAUTH_TAG });
    expect(others).toEqual([]);
    expect(secret).toMatchObject({ name: 'MCP OAuth: remote', type: 'api_token' });
    expect(JSON.stringify(secret)).not.toContain(server.events.issued.at(-1));
  });

  it('asks for scopes_supported when WWW-Authenticate names none, and for nothing without either', async () => {
    await setUp({ autoApprove: true, scopesSupported: ['files:read', 'files:write'] });
    await h.waitForState('needs_auth');
    const url = new URL((await h.manager.authorize('remote', REDIRECT_BASE)).authorizationUrl);
    expect(url.searchParams.get('scope')).toBe('files:read files:write');
    await h.close();
    await server.close();

    await setUp({ autoApprove: true });
    await h.waitForState('needs_auth');
    const bare = new URL((await h.manager.authorize('remote', REDIRECT_BASE)).authorizationUrl);
    expect(bare.searchParams.has('scope')).toBe(false);
  });

  it('uses the stored tokens after a restart, and refreshes an expired access token', async () => {
    await setUp({ autoApprove: true, tokenLifetimeSeconds: 1 });
    await h.waitForState('needs_auth');
    await authorise();
    // Restarting reads the tokens back from the vault: no new authorisation.
    await h.manager.restart('remote');
    await h.waitForState('ready');
    const expiresAt = Date.parse(h.status().auth?.expires_at ?? '');
    await waitFor('the access token to expire', () => Date.now() > expiresAt + 50, 5000);
    expect(await h.call('whoami')).toMatchObject({ success: true });
    expect(server.events.grants.filter((g) => g.ok).map((g) => g.grant_type)).toContain('refresh_token');
    for (const grant of server.events.grants) expect(grant.resource).toBe(server.url);
    expect(server.events.authorizations).toHaveLength(1);
    expect(Date.parse(h.status().auth?.expires_at ?? '')).toBeGreaterThan(expiresAt);
  });

  it('goes to needs_auth when the refresh token is refused too', async () => {
    await setUp({ autoApprove: true });
    await h.waitForState('needs_auth');
    await authorise();
    server.revokeEverything();
    const result = await h.call('whoami');
    expect(result.success).toBe(false);
    expect(result.error).toContain('press Connect');
    const status = await h.waitForState('needs_auth');
    expect(status.auth?.status).toBe('needs_authorization');
  });

  it('steps up: a 403 insufficient_scope fails that call only and offers Connect for the wanted scope', async () => {
    await setUp({ autoApprove: true, scopesSupported: ['mcp:read'], stepUpScope: 'mcp:admin' });
    await h.waitForState('needs_auth');
    await authorise();
    const refused = await h.call('stepup');
    expect(refused.success).toBe(false);
    expect(refused.error).toContain('HTTP 403');
    expect(refused.error).toContain('it needs the scope "mcp:read mcp:admin"');
    expect(refused.error).toContain('Connect on the MCP servers page, or `navi mcp login remote`');
    // The server stays ready: its other tools still work with the token Navi holds.
    const status = h.status();
    expect(status.state).toBe('ready');
    expect(status.auth).toMatchObject({ status: 'needs_authorization', scope: 'mcp:read mcp:admin' });
    expect(await h.call('whoami')).toMatchObject({ success: true });
    expect(h.status().auth).toMatchObject({ status: 'needs_authorization', scope: 'mcp:read mcp:admin' });
    // Bounded: the SDK's own step-up tried once (a refresh), then gave up.
    expect(server.events.mcpStatuses.filter((s) => s === 403).length).toBeLessThanOrEqual(2);

    const url = await authorise();
    expect(url.searchParams.get('scope')).toBe('mcp:read mcp:admin');
    expect(await h.call('stepup')).toMatchObject({ success: true });
    expect(server.events.toolCalls.at(-1)).toEqual({ tool: 'stepup', scopes: ['mcp:read', 'mcp:admin'] });
  });

  it('revokes: the authorisation server sees the revocation and the server needs authorisation again', async () => {
    await setUp({ autoApprove: true });
    await h.waitForState('needs_auth');
    await authorise();
    await h.manager.revokeAuthorization('remote');
    expect(server.events.revocations.map((r) => r.kind).sort()).toEqual(['access', 'refresh']);
    const status = await h.waitForState('needs_auth');
    expect(status.auth?.status).toBe('needs_authorization');
    expect(h.vault.search({ tag: MCP_OAUTH_TAG })).toEqual([]);
  });

  it('uses a client id from the config without registering', async () => {
    const clientId = 'navi-preregistered';
    await setUp(
      {
        autoApprove: true,
        registration: false,
        clients: [{ client_id: clientId, redirect_uris: [`${REDIRECT_BASE}/agents/mcp/oauth/callback`] }],
      },
      { client_id: clientId },
    );
    await h.waitForState('needs_auth');
    const url = await authorise();
    expect(url.searchParams.get('client_id')).toBe(clientId);
    expect(server.events.registrations).toEqual([]);
    expect(await h.call('whoami')).toMatchObject({ success: true });
  });

  it('says when the server is already authorised', async () => {
    await setUp({ autoApprove: true });
    await h.waitForState('needs_auth');
    await authorise();
    const err = await h.manager.authorize('remote', REDIRECT_BASE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpAuthError);
    expect((err as McpAuthError).status).toBe(409);
    expect((err as Error).message).toContain('already authorised');
  });
});
