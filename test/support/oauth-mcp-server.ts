/**
 * An MCP server that asks for OAuth, for tests: one real HTTP server on 127.0.0.1 that is both
 * the OAuth 2.1 authorisation server (metadata, dynamic client registration, an authorisation
 * page a browser can drive, PKCE S256, short-lived access tokens with rotating refresh tokens,
 * revocation) and the MCP resource server (RFC 9728 protected resource metadata, Bearer checks
 * with WWW-Authenticate, a Streamable HTTP MCP endpoint at /mcp).
 *
 * Written on node:http rather than the SDK's express-based auth router: express is only the
 * SDK's own dependency here (no types, not Navi's to import), and the step-up tool needs a
 * per-request scope check the router's middleware does not offer. The MCP side is the SDK's
 * McpServer and StreamableHTTPServerTransport.
 *
 * `events` records what the server saw, so tests can check what Navi sent (PKCE, scope,
 * resource, which grants, revocations) and that the tokens it issued never reach a log.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface OAuthMcpServerOptions {
  /** /authorize redirects back at once, as if the person pressed Approve (non-browser tests). */
  autoApprove?: boolean;
  /** Lifetime of access tokens in seconds (default 3600); short ones exercise refresh. */
  tokenLifetimeSeconds?: number;
  /** Scopes every /mcp request needs; named in WWW-Authenticate's `scope`. */
  requiredScopes?: string[];
  /** `scopes_supported` of the protected resource and authorisation server metadata. */
  scopesSupported?: string[];
  /** The `stepup` tool answers 403 insufficient_scope until the token holds this scope. */
  stepUpScope?: string;
  /** Offer dynamic client registration (default true). */
  registration?: boolean;
  /** Offer a revocation endpoint (default true). */
  revocation?: boolean;
  /** Clients known without registration (a config's `oauth.client_id`). */
  clients?: { client_id: string; client_secret?: string; redirect_uris: string[] }[];
  /** Issue no refresh tokens. */
  noRefreshTokens?: boolean;
  /** Never answer a refresh at /token: the request stays open until the client gives up. */
  refreshHangs?: boolean;
}

export interface AuthorizationRequestSeen {
  client_id: string;
  redirect_uri: string;
  scope: string | null;
  resource: string | null;
  state: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
}

export interface TokenGrantSeen {
  grant_type: string;
  client_id: string | null;
  /** Whether a token was issued; else the OAuth error answered. */
  ok: boolean;
  error?: string;
  /** The scope of the issued token. */
  scope?: string;
  resource: string | null;
}

export interface OAuthMcpEvents {
  registrations: { client_id: string; client_name?: string; redirect_uris: string[]; scope?: string }[];
  authorizations: AuthorizationRequestSeen[];
  grants: TokenGrantSeen[];
  revocations: { token_type_hint: string | null; kind: 'access' | 'refresh' | 'unknown' }[];
  /** Every credential the server issued (codes, access and refresh tokens), to look for in logs. */
  issued: string[];
  /** Statuses of the answers to /mcp requests, in order. */
  mcpStatuses: number[];
  /** Tool calls that reached the MCP server, with the scopes of their token. */
  toolCalls: { tool: string; scopes: string[] }[];
  /** Refreshes left unanswered (`refreshHangs`) whose client closed the request. */
  abandonedRefreshes: number;
}

export interface OAuthMcpServer {
  /** The MCP endpoint (`<origin>/mcp`). */
  url: string;
  /** The authorisation server's issuer (the origin, no trailing slash). */
  issuer: string;
  events: OAuthMcpEvents;
  /** Lifetime of the access tokens issued from now on. */
  setTokenLifetime(seconds: number): void;
  /** Invalidates every access token (refresh tokens stay valid), as an expiry would. */
  expireAccessTokens(): void;
  /** Invalidates every access and refresh token, as a revocation on the server's side would. */
  revokeEverything(): void;
  close(): Promise<void>;
}

interface Client {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

interface PendingRequest extends AuthorizationRequestSeen {
  code_challenge: string;
}

interface Grant {
  client_id: string;
  scopes: string[];
  resource: string | null;
}

interface CodeGrant extends Grant {
  redirect_uri: string;
  code_challenge: string;
  used: boolean;
}

interface AccessToken extends Grant {
  expiresAt: number;
}

/** The fixed text `whoami` answers with (and the token's scopes after it). */
export const WHOAMI_TEXT = 'you are the oauth fixture user';

const random = () => randomBytes(24).toString('base64url');

export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  let lifetime = options.tokenLifetimeSeconds ?? 3600;
  const events: OAuthMcpEvents = {
    registrations: [],
    authorizations: [],
    grants: [],
    revocations: [],
    issued: [],
    mcpStatuses: [],
    toolCalls: [],
    abandonedRefreshes: 0,
  };
  const clients = new Map<string, Client>((options.clients ?? []).map((c) => [c.client_id, { ...c }]));
  const pending = new Map<string, PendingRequest>();
  const codes = new Map<string, CodeGrant>();
  const accessTokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, Grant>();
  let origin = '';

  const resourceMetadataUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`;
  const issue = () => {
    const value = random();
    events.issued.push(value);
    return value;
  };

  const tokenResponse = (grant: Grant) => {
    const access = issue();
    accessTokens.set(access, { ...grant, expiresAt: Date.now() + lifetime * 1000 });
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: lifetime,
      scope: grant.scopes.join(' '),
    };
    if (!options.noRefreshTokens) {
      const refresh = issue();
      refreshTokens.set(refresh, grant);
      body.refresh_token = refresh;
    }
    return body;
  };

  const protectedResourceMetadata = () => ({
    resource: `${origin}/mcp`,
    authorization_servers: [origin],
    bearer_methods_supported: ['header'],
    ...(options.scopesSupported && { scopes_supported: options.scopesSupported }),
  });

  const authorizationServerMetadata = () => ({
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    ...(options.registration !== false && { registration_endpoint: `${origin}/register` }),
    ...(options.revocation !== false && {
      revocation_endpoint: `${origin}/revoke`,
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    }),
    ...(options.scopesSupported && { scopes_supported: options.scopesSupported }),
  });

  /** Answers the authorisation request: to the client's redirect URI, with a code or an error. */
  const finishAuthorization = (res: ServerResponse, request: PendingRequest, approved: boolean) => {
    const target = new URL(request.redirect_uri);
    if (approved) {
      const code = issue();
      codes.set(code, {
        client_id: request.client_id,
        scopes: request.scope ? request.scope.split(' ').filter(Boolean) : [],
        resource: request.resource,
        redirect_uri: request.redirect_uri,
        code_challenge: request.code_challenge,
        used: false,
      });
      target.searchParams.set('code', code);
    } else {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The person denied the request');
    }
    if (request.state !== null) target.searchParams.set('state', request.state);
    res.writeHead(302, { location: target.href }).end();
  };

  const authorizePage = (res: ServerResponse, id: string, request: PendingRequest) => {
    const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><title>Authorise ${html(request.client_id)}</title></head><body>
<h1>Authorise access</h1>
<p id="client">${html(clients.get(request.client_id)?.client_id ?? request.client_id)}</p>
<p id="scope">${html(request.scope ?? '')}</p>
<form method="post" action="/authorize/decision">
<input type="hidden" name="request" value="${html(id)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></body></html>`);
  };

  const handleAuthorize = (url: URL, res: ServerResponse) => {
    const p = url.searchParams;
    const clientId = p.get('client_id') ?? '';
    const redirectUri = p.get('redirect_uri') ?? '';
    const client = clients.get(clientId);
    // Without a known client and one of its redirect URIs there is nowhere safe to send an error.
    if (!client) return sendText(res, 400, `unknown client_id "${clientId}"`);
    if (!client.redirect_uris.includes(redirectUri))
      return sendText(res, 400, `redirect_uri "${redirectUri}" is not registered for this client`);
    const seen: AuthorizationRequestSeen = {
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: p.get('scope'),
      resource: p.get('resource'),
      state: p.get('state'),
      code_challenge: p.get('code_challenge'),
      code_challenge_method: p.get('code_challenge_method'),
    };
    events.authorizations.push(seen);
    const back = new URL(redirectUri);
    if (seen.state !== null) back.searchParams.set('state', seen.state);
    const fail = (error: string, description: string) => {
      back.searchParams.set('error', error);
      back.searchParams.set('error_description', description);
      res.writeHead(302, { location: back.href }).end();
    };
    if (p.get('response_type') !== 'code') return fail('unsupported_response_type', 'only code');
    if (!seen.code_challenge || seen.code_challenge_method !== 'S256')
      return fail('invalid_request', 'PKCE with S256 is required');
    const request: PendingRequest = { ...seen, code_challenge: seen.code_challenge };
    if (options.autoApprove) return finishAuthorization(res, request, true);
    const id = random();
    pending.set(id, request);
    authorizePage(res, id, request);
  };

  const handleDecision = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await readText(req));
    const id = form.get('request') ?? '';
    const request = pending.get(id);
    if (!request) return sendText(res, 400, 'unknown or finished authorisation request');
    pending.delete(id);
    finishAuthorization(res, request, form.get('decision') === 'approve');
  };

  const handleRegister = async (req: IncomingMessage, res: ServerResponse) => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readText(req)) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, { error: 'invalid_client_metadata', error_description: 'not JSON' });
    }
    const uris = body.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string'))
      return sendJson(res, 400, {
        error: 'invalid_redirect_uri',
        error_description: 'redirect_uris must be a non-empty list of URLs',
      });
    const client: Client = { client_id: `client-${random()}`, redirect_uris: uris as string[] };
    if (body.token_endpoint_auth_method && body.token_endpoint_auth_method !== 'none')
      client.client_secret = random();
    clients.set(client.client_id, client);
    events.registrations.push({
      client_id: client.client_id,
      redirect_uris: client.redirect_uris,
      ...(typeof body.client_name === 'string' && { client_name: body.client_name }),
      ...(typeof body.scope === 'string' && { scope: body.scope }),
    });
    sendJson(res, 201, {
      ...body,
      client_id: client.client_id,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      ...(client.client_secret && { client_secret: client.client_secret, client_secret_expires_at: 0 }),
    });
  };

  /** The client named by Basic auth or the form; null when its secret is wrong. */
  const authenticateClient = (req: IncomingMessage, form: URLSearchParams): Client | null => {
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (basic) {
      const [user, pass] = Buffer.from(basic, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(user ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    const client = id ? clients.get(id) : undefined;
    if (!client) return null;
    if (client.client_secret !== undefined && client.client_secret !== secret) return null;
    return client;
  };

  const handleToken = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await readText(req));
    const grantType = form.get('grant_type') ?? '';
    const seen: TokenGrantSeen = {
      grant_type: grantType,
      client_id: form.get('client_id'),
      ok: false,
      resource: form.get('resource'),
    };
    events.grants.push(seen);
    const refuse = (status: number, error: string, description: string) => {
      seen.error = error;
      sendJson(res, status, { error, error_description: description });
    };
    const client = authenticateClient(req, form);
    if (!client) return refuse(401, 'invalid_client', 'unknown client or wrong secret');
    seen.client_id = client.client_id;
    let grant: Grant;
    if (grantType === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      if (!code || code.used || code.client_id !== client.client_id)
        return refuse(400, 'invalid_grant', 'unknown or used authorization code');
      code.used = true;
      if (form.get('redirect_uri') !== code.redirect_uri)
        return refuse(400, 'invalid_grant', 'redirect_uri differs from the authorisation request');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (challenge !== code.code_challenge)
        return refuse(400, 'invalid_grant', 'code_verifier does not match the code_challenge');
      grant = { client_id: client.client_id, scopes: code.scopes, resource: code.resource };
    } else if (grantType === 'refresh_token') {
      if (options.refreshHangs) {
        res.on('close', () => {
          if (!res.writableEnded) events.abandonedRefreshes++;
        });
        return;
      }
      const token = form.get('refresh_token') ?? '';
      const found = refreshTokens.get(token);
      if (!found || found.client_id !== client.client_id)
        return refuse(400, 'invalid_grant', 'unknown or revoked refresh token');
      // Refresh tokens of public clients rotate (OAuth 2.1): the old one is spent.
      refreshTokens.delete(token);
      grant = found;
    } else {
      return refuse(400, 'unsupported_grant_type', `grant_type "${grantType}" is not supported`);
    }
    seen.ok = true;
    seen.scope = grant.scopes.join(' ');
    sendJson(res, 200, tokenResponse(grant));
  };

  const handleRevoke = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await readText(req));
    const token = form.get('token') ?? '';
    const kind = accessTokens.delete(token) ? 'access' : refreshTokens.delete(token) ? 'refresh' : 'unknown';
    events.revocations.push({ token_type_hint: form.get('token_type_hint'), kind });
    res.writeHead(200).end();
  };

  /** The Bearer check of the resource server; answers 401/403 itself and returns null then. */
  const checkBearer = (req: IncomingMessage, res: ServerResponse, body: unknown): AccessToken | null => {
    const challenge = (error: string, description: string, scope?: string[]) =>
      `Bearer error="${error}", error_description="${description}"` +
      (scope && scope.length > 0 ? `, scope="${scope.join(' ')}"` : '') +
      `, resource_metadata="${resourceMetadataUrl()}"`;
    const required = options.requiredScopes ?? [];
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const found = token ? accessTokens.get(token) : undefined;
    if (!found || found.expiresAt <= Date.now()) {
      const description = !token ? 'Missing Authorization header' : 'Token is invalid or expired';
      res.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': challenge('invalid_token', description, required),
      });
      res.end(JSON.stringify({ error: 'invalid_token', error_description: description }));
      return null;
    }
    const wanted = [...required];
    if (options.stepUpScope && callsTool(body, 'stepup')) wanted.push(options.stepUpScope);
    const missing = wanted.filter((s) => !found.scopes.includes(s));
    if (missing.length > 0) {
      const scope = [...new Set([...found.scopes, ...wanted])];
      res.writeHead(403, {
        'content-type': 'application/json',
        'www-authenticate': challenge('insufficient_scope', 'Insufficient scope', scope),
      });
      res.end(
        JSON.stringify({ error: 'insufficient_scope', error_description: `needs ${missing.join(' ')}` }),
      );
      return null;
    }
    return found;
  };

  const handleMcp = async (req: IncomingMessage, res: ServerResponse) => {
    const text = req.method === 'POST' ? await readText(req) : '';
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    res.on('finish', () => events.mcpStatuses.push(res.statusCode));
    const token = checkBearer(req, res, body);
    if (!token) return;
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const server = buildMcpServer(token.scopes, events);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const route = `${req.method} ${url.pathname}`;
    try {
      if (url.pathname === '/mcp') return await handleMcp(req, res);
      if (
        req.method === 'GET' &&
        (url.pathname === '/.well-known/oauth-protected-resource/mcp' ||
          url.pathname === '/.well-known/oauth-protected-resource')
      )
        return sendJson(res, 200, protectedResourceMetadata());
      if (route === 'GET /.well-known/oauth-authorization-server')
        return sendJson(res, 200, authorizationServerMetadata());
      if (route === 'GET /authorize') return handleAuthorize(url, res);
      if (route === 'POST /authorize/decision') return await handleDecision(req, res);
      if (route === 'POST /register' && options.registration !== false) return await handleRegister(req, res);
      if (route === 'POST /token') return await handleToken(req, res);
      if (route === 'POST /revoke' && options.revocation !== false) return await handleRevoke(req, res);
      sendText(res, 404, `no route ${route}`);
    } catch (err) {
      if (!res.headersSent) sendText(res, 500, String(err));
    }
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    issuer: origin,
    events,
    setTokenLifetime(seconds) {
      lifetime = seconds;
    },
    expireAccessTokens() {
      accessTokens.clear();
    },
    revokeEverything() {
      accessTokens.clear();
      refreshTokens.clear();
    },
    close: () =>
      new Promise((done) => {
        http.closeAllConnections();
        http.close(() => done());
      }),
  };
}

function buildMcpServer(scopes: string[], events: OAuthMcpEvents): McpServer {
  const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
  const answer = (tool: string) => async () => {
    events.toolCalls.push({ tool, scopes });
    return {
      content: [{ type: 'text' as const, text: `${WHOAMI_TEXT}; scopes: ${scopes.join(' ') || '(none)'}` }],
    };
  };
  server.registerTool('whoami', { description: 'Says who the token belongs to.' }, answer('whoami'));
  server.registerTool(
    'stepup',
    { description: 'Needs a scope the first authorisation does not grant.' },
    answer('stepup'),
  );
  return server;
}

/** Whether a JSON-RPC body (or batch) calls tool `name`. */
function callsTool(body: unknown, name: string): boolean {
  const list = Array.isArray(body) ? body : [body];
  return list.some((m: unknown) => {
    if (typeof m !== 'object' || m === null) return false;
    const message = m as { method?: unknown; params?: { name?: unknown } };
    return message.method === 'tools/call' && message.params?.name === name;
  });
}

async function readText(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}
