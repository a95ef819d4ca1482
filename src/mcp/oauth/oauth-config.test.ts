/**
 * The `oauth` block of an HTTP server's config, and the body summary of a failed answer: what
 * each accepts, and what each refuses or hides.
 */
import { describe, expect, it } from 'vitest';
import { parseServerConfig } from '../config.js';
import { describeFailure, failureWatchingFetch, type HttpFailure, summariseBody } from '../http-failure.js';

const parse = (oauth: unknown) =>
  parseServerConfig(
    JSON.stringify({ name: 'remote', url: 'https://mcp.example.com/mcp', oauth }),
    'remote.json',
  );

describe('the oauth block', () => {
  it('takes a client id, a secret (or a vault reference), a scope and a metadata document URL', () => {
    const config = parse({
      client_id: 'navi',
      client_secret: '{{secret:0b6f3f3e-3b1a-4c55-9a55-0e6b8f1f2a3b.secret}}',
      scope: 'read write',
      client_metadata_url: 'https://navi.example.com/oauth/client.json',
    });
    expect(config).toMatchObject({
      oauth: {
        clientId: 'navi',
        clientSecret: '{{secret:0b6f3f3e-3b1a-4c55-9a55-0e6b8f1f2a3b.secret}}',
        scope: 'read write',
        clientMetadataUrl: 'https://navi.example.com/oauth/client.json',
      },
    });
    expect(parse({})).toMatchObject({ oauth: {} });
  });

  it.each([
    [{ client_id: 42 }, 'oauth.client_id: must be a string'],
    [{ client_id: '' }, 'oauth.client_id: must not be empty'],
    [{ client_id: 'x'.repeat(600) }, 'oauth.client_id: must be at most 512 characters'],
    [{ client_secret: 's' }, 'client_secret needs the client_id'],
    [{ client_metadata_url: 'http://navi.example.com/client.json' }, 'accepts an https:// URL with a path'],
    [{ client_metadata_url: 'https://navi.example.com/' }, 'accepts an https:// URL with a path'],
    [{ client_metadata_url: 'not a url' }, 'accepts an https:// URL with a path'],
    [{ token: 'x' }, 'oauth: Unrecognized key'],
    ['yes', 'oauth: '],
  ])('refuses %j', (oauth, message) => {
    expect(() => parse(oauth)).toThrow(message);
  });

  it('belongs to HTTP servers only', () => {
    expect(() =>
      parseServerConfig(JSON.stringify({ name: 'local', command: 'x', oauth: {} }), 'local.json'),
    ).toThrow(/oauth/);
  });
});

describe('the summary of a failed answer', () => {
  it('collapses whitespace, cuts long bodies and hides anything token-like', () => {
    const body = `{"error":"invalid_token",\n\n  "access_token": "abc.def-123", "refresh_token":"r-456"} Bearer eyJhbGciOi code=xyz789`;
    const summary = summariseBody(body);
    for (const secret of ['abc.def-123', 'r-456', 'eyJhbGciOi', 'xyz789'])
      expect(summary).not.toContain(secret);
    expect(summary).toContain('{"error":"invalid_token", "access_token": "[hidden]"');
    expect(summariseBody('x'.repeat(1000))).toHaveLength(301);
  });

  it('hides a JWT quoted bare in an error description', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJuYXZpIn0.c2lnbmF0dXJl';
    const summary = summariseBody(`{"error":"invalid_token","error_description":"token ${jwt} has expired"}`);
    expect(summary).not.toContain('eyJzdWIiOiJuYXZpIn0');
    expect(summary).toContain('token [hidden] has expired');
  });

  it('reads as a status line or the network error', () => {
    expect(describeFailure({ status: 401, statusText: 'Unauthorized', body: '{}' }, 'http://h/mcp')).toBe(
      'HTTP 401 Unauthorized: {}',
    );
    expect(describeFailure({ network: 'connect ECONNREFUSED 127.0.0.1:9' }, 'http://h/mcp')).toBe(
      'could not reach http://h/mcp: connect ECONNREFUSED 127.0.0.1:9',
    );
  });
});

describe('the WWW-Authenticate challenge of a refused answer', () => {
  const endpoint = 'https://mcp.example.com/mcp';
  async function challengeOf(header: string): Promise<HttpFailure['challenge']> {
    let seen: HttpFailure | undefined;
    const base = async () => new Response('{}', { status: 401, headers: { 'www-authenticate': header } });
    await failureWatchingFetch(base, endpoint, (f) => {
      seen = f;
    })(endpoint, { method: 'POST' });
    return seen?.challenge;
  }

  it('reads error, scope and resource_metadata, quoted or not', async () => {
    expect(
      await challengeOf(
        'Bearer error="insufficient_scope", scope="mcp:read mcp:admin", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      ),
    ).toEqual({
      error: 'insufficient_scope',
      scope: 'mcp:read mcp:admin',
      resourceMetadata: 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    });
    expect(await challengeOf('Bearer error=invalid_token,scope=files')).toEqual({
      error: 'invalid_token',
      scope: 'files',
    });
  });

  it('takes no parameter from inside another one', async () => {
    expect(
      await challengeOf(
        'Bearer resource_metadata="https://as.example/prm?scope=admin&error=x", error_description="no scope=all"',
      ),
    ).toEqual({ resourceMetadata: 'https://as.example/prm?scope=admin&error=x' });
    expect(await challengeOf('Bearer xscope="admin"')).toEqual({});
  });

  it('reads only the start of a huge challenge, quickly', async () => {
    const started = Date.now();
    expect(await challengeOf(`Bearer ${'a'.repeat(100_000)} scope="late"`)).toEqual({});
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
