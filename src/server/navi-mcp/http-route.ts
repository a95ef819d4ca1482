/**
 * Navi's MCP server over Streamable HTTP at `/mcp` (docs/mcp-server.md#over-http-mcp), behind the
 * same access check as every other route (the root auth hook: the token, or loopback only).
 * Sessions are stateful (`Mcp-Session-Id`), each with its own `McpServer` since the SDK binds one
 * server to one transport. Their number is capped: a new one closes the least recently used idle
 * session, else the least recently used one that only listens on its event stream (GET), or is
 * refused with 503 when every one is answering a request. Sessions idle for long are closed, and
 * all of them when the app closes.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerContext } from '../context.js';
import { type ErrorCode, toApiError } from '../errors.js';
import { createNaviMcpServer } from './server.js';

export const MCP_PATH = '/mcp';

/** A message may be up to a million characters, of up to four bytes each, in JSON. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface NaviMcpRouteOptions extends ServerContext {
  /** Open MCP sessions at most (default 64). */
  maxSessions?: number;
  /** A session without requests for this long is closed (ms, default 30 minutes). */
  idleMs?: number;
}

interface Session {
  id: string;
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  lastActive: number;
  /** Requests being answered (an SSE stream stays open while its call runs). */
  inFlight: number;
  /** Of those, the open event streams (GET): a host keeps one for as long as it is connected. */
  listening: number;
}

/** The JSON-RPC error body MCP clients read (no request id: it may not have parsed). */
function rpcError(reply: FastifyReply, status: number, code: number, message: string, data?: unknown) {
  const error = data === undefined ? { code, message } : { code, message, data };
  return reply.code(status).send({ jsonrpc: '2.0', error, id: null });
}

/** Fastify's refusals of a body, worded for an MCP client: the JSON-RPC code and what to do. */
const BODY_REFUSALS: Partial<Record<ErrorCode, { code: number; message: string }>> = {
  INVALID_JSON: {
    code: -32_700,
    message:
      'Parse error: the body is empty or not valid JSON; send one JSON-RPC message (or a batch of them) as JSON.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: -32_000,
    message:
      'Unsupported Media Type: Content-Type must be application/json; send the JSON-RPC message as application/json.',
  },
  BODY_TOO_LARGE: {
    code: -32_000,
    message: `Payload Too Large: /mcp accepts bodies of up to ${MAX_BODY_BYTES} bytes; send a shorter message.`,
  },
};

/**
 * Anything refused before the handler (a body Fastify cannot parse, the access check) as the
 * JSON-RPC error an MCP client reads, with the HTTP status it would have had anyway.
 */
function rpcFailure(error: unknown) {
  const { apiError, internal } = toApiError(error);
  const worded = BODY_REFUSALS[apiError.code] ?? {
    code: internal ? -32_603 : -32_000,
    message: apiError.message,
  };
  return { status: apiError.status, ...worded, naviCode: apiError.code, internal };
}

class SessionPool {
  private readonly sessions = new Map<string, Session>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  add(session: Session): void {
    this.sessions.set(session.id, session);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  /**
   * The session to close for a new one: the least recently used with no request in flight, else
   * the least recently used whose only open requests are event streams. Otherwise a host that
   * stays connected (as the SDK client does, with its stream) would hold its place for ever, and
   * a few of them would lock every new host out.
   */
  toEvict(): Session | undefined {
    const oldest = (fits: (s: Session) => boolean) => {
      let found: Session | undefined;
      for (const s of this.sessions.values())
        if (fits(s) && (!found || s.lastActive < found.lastActive)) found = s;
      return found;
    };
    return oldest((s) => s.inFlight === 0) ?? oldest((s) => s.inFlight === s.listening);
  }

  idleSince(cutoff: number): Session[] {
    return [...this.sessions.values()].filter((s) => s.inFlight === 0 && s.lastActive < cutoff);
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }
}

async function closeSession(pool: SessionPool, session: Session): Promise<void> {
  pool.delete(session.id);
  await session.server.close().catch(() => {});
}

/** Counts the request as in flight (and a GET as listening) until its response is closed. */
function track(session: Session, method: string | undefined, res: ServerResponse): void {
  const stream = method === 'GET' ? 1 : 0;
  session.inFlight += 1;
  session.listening += stream;
  session.lastActive = Date.now();
  res.once('close', () => {
    session.inFlight -= 1;
    session.listening -= stream;
    session.lastActive = Date.now();
  });
}

export const naviMcpRoutes: FastifyPluginAsync<NaviMcpRouteOptions> = async (app, options) => {
  const deps = { services: options.services, runs: options.runs };
  const pool = new SessionPool(options.maxSessions ?? 64);
  const idleMs = options.idleMs ?? 30 * 60_000;
  let closing = false;

  const sweep = setInterval(
    () => {
      for (const session of pool.idleSince(Date.now() - idleMs)) void closeSession(pool, session);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  // Scoped to this plugin: Fastify's refusals of a body, and the root access hook's refusals of
  // /mcp, answer in JSON-RPC as the transport's own errors do, not in the REST error shape.
  app.setErrorHandler((error, request, reply) => {
    const failure = rpcFailure(error);
    if (failure.internal) request.log.error({ err: error, url: request.url }, 'MCP request failed');
    else request.log.debug({ status: failure.status, url: request.url }, 'MCP request refused');
    // Navi's stable error code rides along, as REST clients get it, for scripts that check it.
    return rpcError(reply, failure.status, failure.code, failure.message, { code: failure.naviCode });
  });
  // JSON only: a text/plain or multipart body would otherwise reach the handler, which could close
  // an idle session to make room before the transport refuses it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );

  // Before the server stops accepting: open SSE streams end now instead of holding the close.
  app.addHook('preClose', async () => {
    closing = true;
    clearInterval(sweep);
    await Promise.allSettled(pool.all().map((s) => closeSession(pool, s)));
  });

  /** A new session for an initialize request, or undefined after answering why there is none. */
  async function open(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (pool.size >= pool.max) {
      const oldest = pool.toEvict();
      if (!oldest)
        return void rpcError(
          reply,
          503,
          -32_000,
          `Navi already serves ${pool.max} MCP sessions and all are answering a request: end one (DELETE /mcp with its Mcp-Session-Id) or try again later.`,
        );
      request.log.info({ mcp_session: oldest.id }, 'MCP session closed to make room for a new one');
      await closeSession(pool, oldest);
    }
    const server = createNaviMcpServer(deps);
    let session: Session | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        session = { id, server, transport, lastActive: Date.now(), inFlight: 0, listening: 0 };
        pool.add(session);
        track(session, request.raw.method, reply.raw);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) pool.delete(transport.sessionId);
    };
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
    // Anything but a valid initialize leaves no session behind (the transport has answered why).
    if (!session) await server.close();
  }

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    bodyLimit: MAX_BODY_BYTES,
    handler: async (request, reply) => {
      if (closing) return rpcError(reply, 503, -32_000, 'Navi is shutting down; connect again once it runs.');
      const id = request.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const session = pool.get(id);
        if (!session)
          return rpcError(
            reply,
            404,
            -32_001,
            'Session not found: it ended (closed, idle too long, or Navi restarted); start a new one with initialize.',
          );
        track(session, request.raw.method, reply.raw);
        reply.hijack();
        await session.transport.handleRequest(request.raw, reply.raw, request.body);
        return;
      }
      if (request.method !== 'POST')
        return rpcError(
          reply,
          400,
          -32_000,
          'Bad Request: no Mcp-Session-Id header; start a session with an initialize request (POST).',
        );
      await open(request, reply);
    },
  });
};
