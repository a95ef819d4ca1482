/**
 * OAuth for MCP servers reached over HTTP, the person's side (docs/mcp.md#oauth): starting an
 * authorisation (the page to open), the callback the authorisation server sends the browser
 * back to, and forgetting a server's tokens.
 *
 * None of these is a consent action: Navi gains access only when the person approves it on the
 * authorisation server's own page, and a revocation only takes access away.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { McpUnknownServerError } from '../../mcp/manager.js';
import type { McpServerStatus } from '../../mcp/types.js';
import type { McpAuthorizeView } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { OAUTH_CALLBACK_PATH, ORIGIN_EXAMPLE, redirectOrigin } from './mcp-oauth-origin.js';
import {
  CALLBACK_PAGE_HEADERS,
  type CallbackPage,
  connectedPage,
  failedPage,
  renderCallbackPage,
} from './mcp-oauth-page.js';

/** What the callback answers a client that asks for JSON (`navi mcp login` with a pasted address). */
export interface McpOAuthCallbackBody {
  server: string;
}

/** Real states and codes are tens to hundreds of characters; far longer is not an answer. */
const MAX_QUERY_VALUE = 4096;
const MAX_SHOWN_DESCRIPTION = 300;

const serverNameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['name'],
} as const;

/** The origin the request reached Navi at, as the person's browser would name it. */
function requestOrigin(request: FastifyRequest): string | { problem: string } {
  if (!request.headers.host)
    return {
      problem: `the request names no Host, so send redirect_base: the address your browser reaches Navi at, ${ORIGIN_EXAMPLE}`,
    };
  const origin = redirectOrigin(`${request.protocol}://${request.headers.host}`, 'the Host of the request');
  if (typeof origin !== 'string') return { problem: `${origin.problem}; or send redirect_base` };
  return origin;
}

/** One query parameter as a single text; a repeated or oversized one is refused. */
function queryValue(query: unknown, name: string): string | undefined | { problem: string } {
  const value = (query as Record<string, unknown> | null | undefined)?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    return {
      problem: `the address holds "${name}" more than once, which an authorisation server never sends`,
    };
  if (value.length > MAX_QUERY_VALUE)
    return {
      problem: `"${name}" in the address is longer than ${MAX_QUERY_VALUE} characters, which no authorisation server sends`,
    };
  return value;
}

/**
 * The code for an authorisation the manager refused. Its errors carry the HTTP status that
 * fits (already authorised, the authorisation server failing, no vault); the rest are the
 * request's fault.
 */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  409: 'MCP_ALREADY_AUTHORIZED',
  502: 'MCP_AUTH_SERVER_FAILED',
  503: 'MCP_TOKENS_UNAVAILABLE',
};

function codeOf(err: unknown): ErrorCode {
  const status = (err as { status?: unknown } | null)?.status;
  return (typeof status === 'number' && CODE_FOR_STATUS[status]) || 'MCP_AUTH_FAILED';
}

/** The server an error of the manager names, when it names one. */
function serverOf(err: unknown): string | undefined {
  const server = (err as { server?: unknown } | null)?.server;
  return typeof server === 'string' && server !== '' ? server : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Whether the client asked for JSON rather than a page (a browser always asks for HTML). */
function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export const mcpOAuthRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const manager = () => {
    if (!services.mcp) throw new ApiError('NOT_FOUND', 'MCP support is not enabled');
    return services.mcp;
  };

  /** The HTTP server `name` names; 404 for none, 400 for a server started as a command. */
  const httpServer = (name: string): McpServerStatus => {
    const mcp = manager();
    const server = mcp.server(name);
    if (!server) {
      const known = mcp.status().map((s) => s.name);
      throw new ApiError(
        'NOT_FOUND',
        `there is no MCP server named "${name}"; the servers are: ${known.join(', ') || 'none (put a config in MCP_SERVERS_DIR)'}`,
      );
    }
    if (server.transport !== 'http')
      throw new ApiError('MCP_NOT_HTTP', `"${server.name}" runs ${server.command}`);
    return server;
  };

  const refusal = (err: unknown): ApiError => {
    if (err instanceof ApiError) return err;
    if (err instanceof McpUnknownServerError) return new ApiError('NOT_FOUND', messageOf(err));
    return new ApiError(codeOf(err), messageOf(err));
  };

  app.post<{ Params: { name: string }; Body: unknown }>(
    '/agents/mcp/servers/:name/authorize',
    { schema: { params: serverNameParams } },
    async (request): Promise<McpAuthorizeView> => {
      const server = httpServer(request.params.name);
      const body = request.body ?? {};
      if (typeof body !== 'object' || Array.isArray(body) || body === null)
        throw new ApiError('BAD_REQUEST', `send a JSON object, {"redirect_base": "<origin>"} or {}`);
      const extra = Object.keys(body).find((key) => key !== 'redirect_base');
      if (extra !== undefined)
        throw new ApiError(
          'BAD_REQUEST',
          `unknown field ${JSON.stringify(extra.slice(0, 64))}; only redirect_base is read`,
        );
      const given = (body as { redirect_base?: unknown }).redirect_base;
      const origin = given === undefined ? requestOrigin(request) : redirectOrigin(given);
      if (typeof origin !== 'string') throw new ApiError('BAD_REQUEST', origin.problem);
      try {
        const { authorizationUrl } = await manager().authorize(server.name, origin);
        return { authorization_url: authorizationUrl };
      } catch (err) {
        throw refusal(err);
      }
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/agents/mcp/servers/:name/authorization',
    { schema: { params: serverNameParams } },
    async (request): Promise<McpServerStatus> => {
      const server = httpServer(request.params.name);
      try {
        await manager().revokeAuthorization(server.name);
      } catch (err) {
        throw refusal(err);
      }
      return httpServer(server.name);
    },
  );

  // Public: the browser comes back from the authorisation server, maybe without Navi's token.
  // The one-time, unguessable state is what ties the answer to an authorisation Navi started.
  app.get(OAUTH_CALLBACK_PATH, { config: { public: true } }, async (request, reply) => {
    const page = await completeFrom(request);
    if (wantsJson(request)) {
      if (page.status === 200 && page.server) return { server: page.server } satisfies McpOAuthCallbackBody;
      throw new ApiError('MCP_AUTH_FAILED', page.message);
    }
    return sendPage(reply, page);
  });

  /** The page for one callback; never throws, so the browser never sees a 500. */
  async function completeFrom(request: FastifyRequest): Promise<CallbackPage & { server?: string }> {
    const fields = ['state', 'code', 'error', 'error_description'] as const;
    const values: Partial<Record<(typeof fields)[number], string>> = {};
    for (const field of fields) {
      const value = queryValue(request.query, field);
      if (typeof value === 'object') return failedPage(value.problem);
      if (value !== undefined) values[field] = value;
    }
    const { state, code, error } = values;
    const description = values.error_description?.slice(0, MAX_SHOWN_DESCRIPTION);
    if (!state)
      return failedPage(
        'the address has no "state", so Navi cannot tell which authorisation it answers (open it only as the authorisation server\'s redirect)',
      );
    if (!code && !error)
      return failedPage('the address has neither a "code" nor an "error" from the authorisation server');
    try {
      const { server } = await manager().completeAuthorization(values);
      // An answer that says no must not read as a success, whatever the manager made of it.
      if (error) return failedPage(description ?? error, { server, denied: error === 'access_denied' });
      return { ...connectedPage(server), server };
    } catch (err) {
      const server = serverOf(err);
      if (error === 'access_denied')
        return failedPage(description ?? 'you, or the authorisation server, declined', {
          ...(server ? { server } : {}),
          denied: true,
        });
      if (!(err instanceof ApiError) && !(err instanceof McpUnknownServerError))
        request.log.warn({ err, server }, 'an MCP authorisation did not complete');
      return failedPage(messageOf(err), server ? { server } : {});
    }
  }
};

function sendPage(reply: FastifyReply, page: CallbackPage): FastifyReply {
  return reply.code(page.status).headers(CALLBACK_PAGE_HEADERS).send(renderCallbackPage(page));
}
