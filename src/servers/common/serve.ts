/**
 * How a shipped MCP server is served: over stdio by default (Navi starts it as a child process),
 * or with `--http <port>` as Streamable HTTP on 127.0.0.1 only (conformance runs, trying a
 * server by hand). HTTP sessions are stateful, each with its own `McpServer` from the factory:
 * the SDK binds one server to one transport. Shutdown (SIGTERM, SIGINT, or stdin ending in stdio
 * mode) closes the sessions, then awaits `onClose` so resources such as a browser go with them.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { z } from 'zod';
import { type ShippedTool, type ToolRequest, toolError } from './tool.js';

export type ServeMode = { kind: 'stdio' } | { kind: 'http'; port: number };

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const USAGE = 'usage: [--http <port>]  (no option: stdio; --http 0 picks a free port on 127.0.0.1)';

/** Reads the command line (without node and the script). Throws UsageError saying what is wrong. */
export function parseServeArgs(argv: readonly string[]): ServeMode {
  if (argv.length === 0) return { kind: 'stdio' };
  const [flag, value, ...rest] = argv;
  if (flag !== '--http') throw new UsageError(`unknown argument ${JSON.stringify(flag)}; ${USAGE}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}; ${USAGE}`);
  const port = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || port > 65_535)
    throw new UsageError(`--http needs a port number from 0 to 65535, not ${JSON.stringify(value ?? '')}`);
  return { kind: 'http', port };
}

/**
 * Registers a ShippedTool with the SDK. The call's AbortSignal (client cancellation, session
 * end) and its `_meta` reach the handler; a handler that throws becomes an error result naming
 * the tool.
 */
export function registerShippedTool<Shape extends z.ZodRawShape>(
  server: McpServer,
  tool: ShippedTool<Shape>,
): void {
  const run = async (args: unknown, signal: AbortSignal, request: ToolRequest) => {
    try {
      return await tool.handler(args as z.infer<z.ZodObject<Shape>>, signal, request);
    } catch (err) {
      return toolError(
        `${tool.name} failed unexpectedly: ${err instanceof Error ? err.message : String(err)}. Try again; if it keeps failing, tell the user.`,
      );
    }
  };
  // The SDK infers argument types from a concrete shape; `run` restores the tool's own.
  const callback: ToolCallback<z.ZodRawShape> = (args, extra) =>
    run(args, extra.signal, { meta: extra._meta ?? {} });
  server.registerTool(
    tool.name,
    {
      description: tool.description,
      inputSchema: tool.inputSchema as z.ZodRawShape,
      annotations: tool.annotations,
    },
    callback,
  );
}

export interface ServeOptions {
  /** Builds a server with its tools registered; HTTP mode calls it once per session. */
  createServer: () => McpServer;
  mode: ServeMode;
  /** Awaited once every session is closed. */
  onClose?: () => Promise<void>;
  /** Where the `listening on …` line and shutdown problems go (default: stderr). */
  log?: (line: string) => void;
  /** stdio mode only (defaults: the process's). */
  stdin?: Readable;
  stdout?: Writable;
  /** How long `onClose` may take before shutdown goes on without it (default 10 s). */
  closeTimeoutMs?: number;
  /** Shut down on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
}

export interface ServeHandle {
  /** The endpoint in HTTP mode. */
  url?: string;
  /** Resolves once shut down, whatever started the shutdown. */
  closed: Promise<void>;
  close(): Promise<void>;
}

const CLOSE_TIMEOUT_MS = 10_000;

async function withTimeout(work: Promise<void> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`still not done after ${ms} ms; shutting down anyway`)), ms);
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts serving; the returned handle resolves `closed` after a signal, stdin's end or `close()`. */
export async function serve(options: ServeOptions): Promise<ServeHandle> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const endpoint =
    options.mode.kind === 'http'
      ? await serveHttp(options.createServer, options.mode.port)
      : await serveStdio(
          options.createServer,
          options.stdin ?? process.stdin,
          options.stdout ?? process.stdout,
        );
  if (endpoint.url) log(`listening on ${endpoint.url}`);

  let markClosed!: () => void;
  const closed = new Promise<void>((done) => {
    markClosed = done;
  });
  let closing: Promise<void> | undefined;
  const onSignal = () => void close();
  const close = (): Promise<void> => {
    closing ??= (async () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      try {
        await endpoint.close();
      } catch (err) {
        log(`closing the transport failed: ${(err as Error).message}`);
      }
      try {
        await withTimeout(options.onClose?.(), options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS);
      } catch (err) {
        log(`closing the server's resources failed: ${(err as Error).message}`);
      }
      markClosed();
    })();
    return closing;
  };
  if (options.handleSignals ?? true) {
    // `once`: a second signal during a slow shutdown falls to Node's default and ends the process.
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  void endpoint.ended.then(onSignal);
  return { url: endpoint.url, closed, close };
}

interface Endpoint {
  url?: string;
  /** Resolves when the peer goes away by itself (stdin's end); never in HTTP mode. */
  ended: Promise<void>;
  close(): Promise<void>;
}

async function serveStdio(create: () => McpServer, stdin: Readable, stdout: Writable): Promise<Endpoint> {
  const server = create();
  const ended = new Promise<void>((done) => {
    stdin.once('end', done);
    stdin.once('close', done);
  });
  await server.connect(new StdioServerTransport(stdin, stdout));
  return { ended, close: () => server.close() };
}

const LOCAL_HOST = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;
const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;

/** Whether the request is addressed to this machine by name: a Host is required, an Origin optional. */
function isLocalRequest(req: IncomingMessage): boolean {
  const { host, origin } = req.headers;
  return host !== undefined && LOCAL_HOST.test(host) && (origin === undefined || LOCAL_ORIGIN.test(origin));
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

interface Session {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
}

async function serveHttp(create: () => McpServer, port: number): Promise<Endpoint> {
  const sessions = new Map<string, Session>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp')
      return sendError(res, 404, -32_000, 'Not found: the MCP endpoint is /mcp.');
    // A web page the user visits must not reach this server through a DNS name it rebinds to
    // 127.0.0.1: only requests addressed to a loopback name get in.
    if (!isLocalRequest(req))
      return sendError(res, 403, -32_000, 'Forbidden: only requests to localhost are served.');
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session)
        return sendError(res, 404, -32_001, 'Session not found: it ended; start a new one with initialize.');
      return session.transport.handleRequest(req, res);
    }
    // No session yet: only an initialize request creates one, which the transport checks itself.
    const server = create();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { server, transport });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    if (!transport.sessionId) await server.close();
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, -32_603, `Internal error: ${err.message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((done, fail) => {
    http.once('error', fail);
    http.listen(port, '127.0.0.1', () => {
      http.off('error', fail);
      done();
    });
  });
  const address = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    ended: new Promise<void>(() => {}),
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((s) => s.server.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
    },
  };
}
