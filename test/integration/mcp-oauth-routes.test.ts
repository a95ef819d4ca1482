/**
 * The person's side of MCP OAuth on a real Navi (docs/mcp.md#oauth): `POST
 * /agents/mcp/servers/:name/authorize` hands out the authorisation page (and refuses what is
 * not an origin), the public callback answers a page of its own whatever arrives (connected,
 * denied, or what went wrong, never a 500), and `DELETE .../authorization` forgets the token
 * and tells the authorisation server. The MCP server is the OAuth test server on a real port.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl } from '../fake-llm/index.js';
import {
  authorizationUrl,
  autoApprovedCallback,
  decideAt,
  mcpServerStatus,
  postAuthorize,
  writeHttpServerConfig,
} from '../support/mcp-oauth-flow.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../support/oauth-mcp-server.js';
import { eventually } from '../support/processes.js';

const CALLBACK = '/agents/mcp/oauth/callback';

function callback(navi: NaviHandle, query: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${navi.url}${CALLBACK}${query}`, { headers });
}

describe('MCP OAuth routes', () => {
  const dir = tempDir('navi-mcp-oauth-');
  const serversDir = join(dir, 'servers');
  let auto: OAuthMcpServer;
  let manual: OAuthMcpServer;
  let navi: NaviHandle;

  beforeAll(async () => {
    auto = await startOAuthMcpServer({ autoApprove: true });
    manual = await startOAuthMcpServer();
    writeHttpServerConfig(serversDir, 'auto', auto.url);
    writeHttpServerConfig(serversDir, 'manual', manual.url);
    writeHttpServerConfig(serversDir, 'gone', `${await closedPortUrl()}/mcp`);
    writeFileSync(
      join(serversDir, 'local.json'),
      JSON.stringify({
        name: 'local',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/fixture-server.ts')],
        cwd: repoRoot,
      }),
    );
    navi = await startNavi({ dir, settings: { MCP_SERVERS_DIR: serversDir } });
    await navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await navi?.close();
    await auto?.close();
    await manual?.close();
  });

  describe('POST /agents/mcp/servers/:name/authorize', () => {
    it('shows a server that answered 401 as needing authorisation', async () => {
      const status = await mcpServerStatus(navi.url, 'auto');
      expect(status.state).toBe('needs_auth');
      expect(status.auth).toMatchObject({ status: 'needs_authorization' });
    });

    it('hands out the authorisation page, with the callback under the origin the request came to', async () => {
      const page = new URL(await authorizationUrl(navi.url, 'manual'));
      expect(page.origin).toBe(manual.issuer);
      expect(page.searchParams.get('redirect_uri')).toBe(`${navi.url}${CALLBACK}`);
      expect(page.searchParams.get('code_challenge_method')).toBe('S256');
      expect(page.searchParams.get('state')).toMatch(/^.{16,}$/);
    });

    it('puts the callback under redirect_base when one is given, trailing slash or not', async () => {
      for (const base of ['https://navi.example.org', 'http://10.0.0.5:8123/']) {
        const page = new URL(await authorizationUrl(navi.url, 'manual', base));
        expect(page.searchParams.get('redirect_uri')).toBe(`${base.replace(/\/$/, '')}${CALLBACK}`);
      }
    });

    it.each([
      ['a number', { redirect_base: 8000 }, /redirect_base must be a text/],
      ['an empty text', { redirect_base: '' }, /redirect_base must be a text/],
      ['no address', { redirect_base: 'navi here' }, /redirect_base is not an address/],
      ['another scheme', { redirect_base: 'javascript:alert(1)' }, /must start with http:\/\/ or https:\/\//],
      ['a path', { redirect_base: 'http://127.0.0.1:8000/navi' }, /an origin only, without a path/],
      ['a query', { redirect_base: 'http://127.0.0.1:8000/?x=1' }, /an origin only/],
      ['an empty query', { redirect_base: 'http://127.0.0.1:8000?' }, /an origin only/],
      ['credentials', { redirect_base: 'http://me:pw@127.0.0.1:8000' }, /user name or password/],
      ['over 200 characters', { redirect_base: `http://${'a'.repeat(200)}.org` }, /longer than 200/],
      ['an unknown field', { redirect_base: 'http://127.0.0.1', scope: 'all' }, /unknown field "scope"/],
      ['an array', [1, 2], /send a JSON object/],
    ])('refuses a body with %s (400, saying what to send)', async (_what, body, message) => {
      const res = await postAuthorize(navi.url, 'manual', body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { error: string; code: string };
      expect(answer.code).toBe('BAD_REQUEST');
      expect(answer.error).toMatch(message);
    });

    it('takes a request without a body', async () => {
      const res = await postAuthorize(navi.url, 'manual');
      expect(res.status).toBe(200);
      expect(((await res.json()) as { authorization_url: string }).authorization_url).toContain(
        manual.issuer,
      );
    });

    it('answers 404 for an unknown server, naming the servers there are', async () => {
      const res = await postAuthorize(navi.url, 'nobody', {});
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: string };
      expect(body.error).toContain('no MCP server named "nobody"');
      expect(body.error).toMatch(/auto.*manual|manual.*auto/);
    });

    it('answers 400 MCP_NOT_HTTP for a server started as a command', async () => {
      const res = await postAuthorize(navi.url, 'local', {});
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; code: string };
      expect(body.code).toBe('MCP_NOT_HTTP');
      expect(body.error).toContain('reached over HTTP');
    });

    it('answers 502 when the server cannot be reached to discover its authorisation server', async () => {
      const res = await postAuthorize(navi.url, 'gone', {});
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error: string; code: string };
      expect(body.code).toBe('MCP_AUTH_SERVER_FAILED');
      expect(body.error).toContain('gone');
    });

    it('refuses an over-long server name as a bad request', async () => {
      const res = await postAuthorize(navi.url, 'x'.repeat(65), {});
      expect(res.status).toBe(400);
    });
  });

  describe('GET /agents/mcp/oauth/callback', () => {
    const expectPage = async (res: Response, status: number, text: RegExp) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await res.text();
      expect(html).toContain('href="/#/mcp"');
      expect(html).not.toContain('<script');
      expect(html).toMatch(text);
      return html;
    };

    it('says what is missing without a state or without a code', async () => {
      await expectPage(await callback(navi, '?code=abc'), 400, /has no &quot;state&quot;/);
      await expectPage(await callback(navi, ''), 400, /has no &quot;state&quot;/);
      await expectPage(
        await callback(navi, '?state=abc'),
        400,
        /neither a &quot;code&quot; nor an &quot;error&quot;/,
      );
    });

    it('refuses a repeated or oversized parameter with a page, not a 500', async () => {
      await expectPage(await callback(navi, '?state=a&state=b&code=c'), 400, /more than once/);
      await expectPage(await callback(navi, `?state=${'s'.repeat(5000)}&code=c`), 400, /longer than 4096/);
    });

    it('refuses a state Navi never handed out, and says how to start again', async () => {
      await expectPage(
        await callback(navi, '?state=made-up-state&code=whatever'),
        400,
        /did not complete.*press Connect/s,
      );
    });

    it('escapes what the authorisation server says', async () => {
      const html = await expectPage(
        await callback(
          navi,
          `?state=x&error=access_denied&error_description=${encodeURIComponent('<img src=x onerror=alert(1)>')}`,
        ),
        400,
        /Access was denied/,
      );
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
      expect(html).not.toContain('<img');
    });

    it('answers JSON with the error code to a client that asks for JSON', async () => {
      const res = await callback(navi, '?state=made-up&code=x', { accept: 'application/json' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'MCP_AUTH_FAILED',
        error: expect.stringContaining('did not complete'),
      });
    });
  });

  describe('a whole authorisation', () => {
    it('connects after Approve: the page says so, and the server runs with its tools', async () => {
      const back = await autoApprovedCallback(await authorizationUrl(navi.url, 'auto'));
      expect(back.startsWith(`${navi.url}${CALLBACK}?`)).toBe(true);
      const res = await fetch(back);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Navi is connected to auto. You can close this tab.');
      await eventually(async () => (await mcpServerStatus(navi.url, 'auto')).state === 'ready');
      const status = await mcpServerStatus(navi.url, 'auto');
      expect(status.auth).toMatchObject({ status: 'authorized' });
      expect(status.tools).toContain('mcp__auto__whoami');
      expect(auto.events.grants.filter((g) => g.grant_type === 'authorization_code' && g.ok)).toHaveLength(1);

      // The code and its state were for one use.
      const again = await fetch(back);
      expect(again.status).toBe(400);

      // A server authorised and running is not authorised twice.
      const twice = await postAuthorize(navi.url, 'auto', {});
      expect(twice.status).toBe(409);
      expect(await twice.json()).toMatchObject({
        code: 'MCP_ALREADY_AUTHORIZED',
        error: expect.stringContaining('revoke it first'),
      });
    });

    it('says access was denied after Deny, and the server still waits for authorisation', async () => {
      const back = await decideAt(await authorizationUrl(navi.url, 'manual'), 'deny');
      const res = await fetch(back);
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain('Access was denied');
      expect(html).toContain('The person denied the request');
      const status = await mcpServerStatus(navi.url, 'manual');
      expect(status.state).toBe('needs_auth');
      expect(status.auth?.status).not.toBe('authorized');
    });

    it('revokes: the token is forgotten, the authorisation server told, and Connect is needed again', async () => {
      await eventually(async () => (await mcpServerStatus(navi.url, 'auto')).auth?.status === 'authorized');
      const res = await fetch(`${navi.url}/agents/mcp/servers/auto/authorization`, { method: 'DELETE' });
      expect(res.status).toBe(200);
      const status = (await res.json()) as { state: string; auth: { status: string } | null };
      expect(status.auth?.status).toBe('needs_authorization');
      expect(auto.events.revocations.length).toBeGreaterThan(0);
      await eventually(async () => (await mcpServerStatus(navi.url, 'auto')).state === 'needs_auth');
    });

    it('answers 404 and 400 to a revocation for an unknown server and for a command', async () => {
      const unknown = await fetch(`${navi.url}/agents/mcp/servers/nobody/authorization`, {
        method: 'DELETE',
      });
      expect(unknown.status).toBe(404);
      const local = await fetch(`${navi.url}/agents/mcp/servers/local/authorization`, { method: 'DELETE' });
      expect(local.status).toBe(400);
      expect(((await local.json()) as { code: string }).code).toBe('MCP_NOT_HTTP');
    });
  });
});

describe('MCP OAuth routes with NAVI_API_TOKEN', () => {
  const dir = tempDir('navi-mcp-oauth-token-');
  let fixture: OAuthMcpServer;
  let navi: NaviHandle;

  beforeAll(async () => {
    fixture = await startOAuthMcpServer({ autoApprove: true });
    writeHttpServerConfig(join(dir, 'servers'), 'auto', fixture.url);
    navi = await startNavi({
      dir,
      settings: { MCP_SERVERS_DIR: join(dir, 'servers'), NAVI_API_TOKEN: 'route-test-token' },
    });
    await navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await navi?.close();
    await fixture?.close();
  });

  it('wants the token to start an authorisation or to revoke one', async () => {
    expect((await postAuthorize(navi.url, 'auto', {})).status).toBe(401);
    const revoke = await fetch(`${navi.url}/agents/mcp/servers/auto/authorization`, { method: 'DELETE' });
    expect(revoke.status).toBe(401);
  });

  it('serves the callback to a browser without the token, and completes with the state alone', async () => {
    const start = await fetch(`${navi.url}/agents/mcp/servers/auto/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer route-test-token' },
      body: '{}',
    });
    expect(start.status).toBe(200);
    const { authorization_url } = (await start.json()) as { authorization_url: string };
    const res = await fetch(await autoApprovedCallback(authorization_url));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Navi is connected to auto.');
    // A made-up state is still refused, token or not.
    expect((await fetch(`${navi.url}${CALLBACK}?state=guess&code=x`)).status).toBe(400);
  });
});
