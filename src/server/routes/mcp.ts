/**
 * /agents/mcp: the state of each configured MCP server (what `mcp_status` and `navi doctor`
 * show), a restart of one server, and a reload of MCP_SERVERS_DIR without a restart of Navi
 * (docs/mcp.md#http-endpoints-and-navi-doctor); OAuth's routes are in mcp-oauth.ts.
 * A reload never starts an agent-written server the user has not approved.
 */
import type { FastifyPluginAsync } from 'fastify';
import { McpUnknownServerError } from '../../mcp/manager.js';
import type { McpReloadReport, McpServerStatus } from '../../mcp/types.js';
import type { McpStatusView } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { mcpOAuthRoutes } from './mcp-oauth.js';

/** `GET /agents/mcp`: the manager's statuses are the wire shape itself. */
export type McpStatusBody = McpStatusView;

const serverNameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['name'],
} as const;

/**
 * The status an action on one server ends with; an unknown name is 404 and any other refusal
 * (a config changed since approval, a server disabled or waiting for approval) 400 with the
 * manager's sentence.
 */
async function answerFor(action: Promise<McpServerStatus>): Promise<McpServerStatus> {
  try {
    return await action;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ApiError(err instanceof McpUnknownServerError ? 'NOT_FOUND' : 'BAD_REQUEST', message);
  }
}

export const mcpRoutes: FastifyPluginAsync<ServerContext> = async (app, context) => {
  const { services } = context;
  // Connect, the OAuth callback and Revoke (docs/mcp.md#oauth).
  await app.register(mcpOAuthRoutes, context);
  const manager = () => {
    if (!services.mcp) throw new ApiError('NOT_FOUND', 'MCP support is not enabled');
    return services.mcp;
  };

  app.get('/agents/mcp', async (): Promise<McpStatusBody> => {
    const mcp = manager();
    return { servers: mcp.status(), errors: mcp.errors() };
  });

  // The user's approval of an agent-written server, for when it was not given in the chat (the
  // question timed out, or the user changed their mind). Only a client with the person's consent
  // credential may give it (see consent.ts). `command` must be the launch line the
  // user was shown (GET /agents/mcp, `command`): a config changed since then is refused.
  app.post<{ Params: { name: string }; Body: { command: string } }>(
    '/agents/mcp/servers/:name/approve',
    {
      config: { consent: true },
      schema: {
        params: serverNameParams,
        body: {
          type: 'object',
          properties: { command: { type: 'string', minLength: 1, maxLength: 8192 } },
          required: ['command'],
          additionalProperties: false,
        },
      },
    },
    // approve() reads a config it does not know yet, and only that one.
    async (request) => answerFor(manager().approve(request.params.name, request.body.command)),
  );

  // Not a consent action, like a reload: only a server that already may run is started again.
  app.post<{ Params: { name: string } }>(
    '/agents/mcp/servers/:name/restart',
    {
      schema: {
        params: serverNameParams,
      },
    },
    async (request) => answerFor(manager().restart(request.params.name)),
  );

  // Resolves once the added and changed servers have made their first connection attempt, so
  // the answer says whether they came up. Not a consent action: agent-written servers still wait
  // for the approval route, and the rest start from the folder at every restart anyway.
  app.post('/agents/mcp/reload', async (): Promise<McpReloadReport & McpStatusBody> => {
    const mcp = manager();
    const report = await mcp.reload();
    return { ...report, servers: mcp.status() };
  });
};
