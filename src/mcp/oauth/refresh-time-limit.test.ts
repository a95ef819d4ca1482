/**
 * A refresh the SDK makes inside the transport (the MCP server answered 401 to an expired
 * token) is bounded: when the authorisation server's token endpoint never answers, the request
 * is given up after the connect time limit and the call fails, instead of waiting for ever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../../test/support/oauth-mcp-server.js';
import { waitFor } from '../fixtures/harness.js';
import { type OAuthHarness, oauthHarness, REDIRECT_BASE, visit } from './oauth-support.test-helpers.js';

let server: OAuthMcpServer;
let h: OAuthHarness;

afterEach(async () => {
  await h?.close();
  await server?.close();
});

describe('a token endpoint that never answers', () => {
  it('fails the call once the connect time limit is up, giving the request up', async () => {
    server = await startOAuthMcpServer({ autoApprove: true, refreshHangs: true });
    // A long tool time limit: only the transport's own limit can end the refresh in time.
    h = await oauthHarness(
      { 'remote.json': { name: 'remote', url: server.url } },
      { timing: { connectTimeoutMs: 300 } },
    );
    const { authorizationUrl } = await h.manager.authorize('remote', REDIRECT_BASE);
    await h.manager.completeAuthorization(await visit(authorizationUrl));
    await h.waitForState('ready');
    expect((await h.call('whoami')).success).toBe(true);

    server.expireAccessTokens();
    const outcome = await h.call('whoami').catch((err: Error) => ({ success: false, error: err.message }));
    expect(outcome.success).toBe(false);
    // Navi gave the request up; the fixture never answers it.
    await waitFor('the refresh to be given up', () => server.events.abandonedRefreshes === 1);
    expect(h.status().state).toBe('needs_auth');
    expect(server.events.grants.map((g) => g.grant_type)).toEqual(['authorization_code', 'refresh_token']);
  });
});
