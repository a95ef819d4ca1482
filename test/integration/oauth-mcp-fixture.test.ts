/**
 * The OAuth MCP test server itself: what other tests rely on it to refuse (no token, a wrong
 * PKCE verifier, a spent code, a denied request) and to grant (the page's Approve button).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type OAuthMcpServer, startOAuthMcpServer } from '../support/oauth-mcp-server.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
let server: OAuthMcpServer;

afterEach(async () => {
  await server?.close();
});

async function register(): Promise<string> {
  const res = await fetch(`${server.issuer}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'test',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function authorizeUrl(clientId: string, challenge: string): string {
  const url = new URL(`${server.issuer}/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    scope: 'mcp:read',
    resource: server.url,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function exchange(clientId: string, code: string, verifier: string): Promise<Response> {
  return fetch(`${server.issuer}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
    }),
  });
}

describe('the OAuth MCP test server', () => {
  it('answers /mcp without a token with 401 and a WWW-Authenticate naming its metadata and scope', async () => {
    server = await startOAuthMcpServer({ requiredScopes: ['mcp:read'] });
    const res = await fetch(server.url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    const header = res.headers.get('www-authenticate') ?? '';
    expect(header).toContain(`resource_metadata="${server.issuer}/.well-known/oauth-protected-resource/mcp"`);
    expect(header).toContain('scope="mcp:read"');
    const metadata = await (await fetch(`${server.issuer}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toMatchObject({ resource: server.url, authorization_servers: [server.issuer] });
  });

  it('grants through the Approve button, checks PKCE and spends a code once', async () => {
    server = await startOAuthMcpServer();
    const clientId = await register();
    const { verifier, challenge } = pkce();
    const page = await fetch(authorizeUrl(clientId, challenge));
    const html = await page.text();
    expect(html).toContain('Approve');
    const requestId = /name="request" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const decision = await fetch(`${server.issuer}/authorize/decision`, {
      method: 'POST',
      body: new URLSearchParams({ request: requestId, decision: 'approve' }),
      redirect: 'manual',
    });
    expect(decision.status).toBe(302);
    const back = new URL(decision.headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe('st-1');
    const code = back.searchParams.get('code') ?? '';

    const wrong = await exchange(clientId, code, pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    // The failed attempt spent the code, as a careful server does.
    expect((await exchange(clientId, code, verifier)).status).toBe(400);
    expect(server.events.authorizations[0]).toMatchObject({
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mcp:read',
      resource: server.url,
    });
  });

  it('redirects with error=access_denied when the person presses Deny', async () => {
    server = await startOAuthMcpServer();
    const clientId = await register();
    const html = await (await fetch(authorizeUrl(clientId, pkce().challenge))).text();
    const requestId = /name="request" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const decision = await fetch(`${server.issuer}/authorize/decision`, {
      method: 'POST',
      body: new URLSearchParams({ request: requestId, decision: 'deny' }),
      redirect: 'manual',
    });
    const back = new URL(decision.headers.get('location') ?? '');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('issues expiring tokens that rotate on refresh, and revokes them', async () => {
    server = await startOAuthMcpServer({ autoApprove: true, tokenLifetimeSeconds: 60 });
    const clientId = await register();
    const { verifier, challenge } = pkce();
    const redirect = await fetch(authorizeUrl(clientId, challenge), { redirect: 'manual' });
    const code = new URL(redirect.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const tokens = (await (await exchange(clientId, code, verifier)).json()) as Record<string, string>;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 60, scope: 'mcp:read' });
    const refresh = () =>
      fetch(`${server.issuer}/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: clientId,
          refresh_token: tokens.refresh_token ?? '',
        }),
      });
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(400);
    await fetch(`${server.issuer}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: tokens.access_token ?? '', client_id: clientId }),
    });
    expect(server.events.revocations).toEqual([{ token_type_hint: null, kind: 'access' }]);
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });
});
