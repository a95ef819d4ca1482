/**
 * The HTTP and WebSocket server: `buildApp(services)` assembles Fastify with one plugin per
 * route group. It does not listen; `navi serve` and the tests do. Closing the app stops the
 * active runs (waiting briefly for them to save) and the file sweeper; the services are the
 * caller's to close.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyMultipart from '@fastify/multipart';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import { MAX_CLIENT_FRAME_BYTES } from '../protocol/commands.js';
import { registerAuth } from './auth.js';
import { reapConnectionsOnClose } from './connection-reaper.js';
import { registerConsent } from './consent.js';
import type { ServerContext } from './context.js';
import { toApiError } from './errors.js';
import { FileSweeper } from './file-sweeper.js';
import { naviMcpRoutes } from './navi-mcp/http-route.js';
import { openAiRoutes } from './openai/routes.js';
import { recallRunner } from './recall-runner.js';
import { agentRoutes } from './routes/agents.js';
import { authRoutes } from './routes/auth.js';
import { fileRoutes } from './routes/files.js';
import { healthRoutes } from './routes/health.js';
import { llamacppRuntimeRoutes } from './routes/llamacpp-runtime.js';
import { llmRoutes } from './routes/llm.js';
import { llmModelRoutes, runtimeStatusUnknown } from './routes/llm-models.js';
import { mcpRoutes } from './routes/mcp.js';
import { memoryRoutes } from './routes/memory.js';
import { messageRoutes } from './routes/messages.js';
import { metricsRoutes } from './routes/metrics.js';
import { pairingRoutes } from './routes/pairing.js';
import { profileRoutes } from './routes/profiles.js';
import { recallRoutes } from './routes/recalls.js';
import { searchRoutes } from './routes/search.js';
import { sessionTransferRoutes } from './routes/session-transfer.js';
import { sessionRoutes } from './routes/sessions.js';
import { vaultRoutes } from './routes/vault.js';
import { RunRegistry } from './run-registry.js';
import type { NaviServices } from './services.js';
import { type Clock, SessionFiles } from './session-files.js';
import { staticRoutes } from './static.js';
import { sessionSocketRoutes } from './ws/session-socket.js';
import { websocketPluginOptions } from './ws/socket-options.js';

export interface BuildAppOptions {
  /** Time source for file expiry (tests move it forward instead of sleeping). */
  clock?: Clock;
  /** Folder of the built web client; defaults to `web/dist` of this checkout. */
  webDir?: string;
  /** Largest client WebSocket frame handled; larger ones get a recoverable error. */
  maxClientFrameBytes?: number;
  /** Outgoing bytes a WebSocket client may fall behind before it is disconnected. */
  maxSocketBufferedBytes?: number;
  /** Window of the delta coalescer (ms); 0 turns coalescing off. */
  coalesceWindowMs?: number;
  /** How often expired session files are swept (ms). */
  sweepIntervalMs?: number;
  /** Largest JSON body (bytes); messages with images are the big ones. */
  bodyLimitBytes?: number;
  /** How long closing waits for stopped runs to save (ms). */
  shutdownGraceMs?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's own state: active runs and session files (the sweeper for tests). */
    navi: ServerContext & { sweeper: FileSweeper };
  }
}

const defaultWebDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../web/dist');

export function buildApp(services: NaviServices, options: BuildAppOptions = {}): FastifyInstance {
  const clock = options.clock ?? (() => new Date());
  const settings = services.settings;
  const maxClientFrameBytes = options.maxClientFrameBytes ?? MAX_CLIENT_FRAME_BYTES;

  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes ?? 40 * 1024 * 1024,
    // Client mistakes must be refused, not silently coerced ("true" is not a boolean).
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    logController: new LogController({ disableRequestLogging: true }),
    // Errors the router raises before any route (a bad URL, an over-long path segment) get the
    // same table-coded answers as the rest, instead of Fastify's own bodies echoing the URL.
    frameworkErrors: (error, _request, reply) => {
      const { apiError } = toApiError(error);
      // The option's reply type is generic over every route's schema; ours is the plain one.
      return (reply as FastifyReply).code(apiError.status).send(apiError.toBody());
    },
    return503OnClosing: true,
  });

  const files = new SessionFiles({
    root: settings.SESSION_FILES_DIR,
    files: services.files,
    ttlHours: settings.SESSION_FILES_TTL_HOURS,
    maxBytes: settings.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024,
    clock,
    logger: services.logger,
  });
  const runs = new RunRegistry({
    agent: services.agent,
    logger: services.logger,
    confirmTimeoutMs: settings.TOOL_CONFIRM_TIMEOUT_MS,
    coalesceWindowMs: options.coalesceWindowMs,
    ...(services.cluster ? { cluster: services.cluster } : {}),
  });
  const sweeper = new FileSweeper(files, options.sweepIntervalMs ?? 10 * 60_000, services.logger);
  const context: ServerContext = { services, runs, files };
  app.decorate('navi', { ...context, sweeper });

  app.setErrorHandler((error, request, reply) => {
    const { apiError, internal } = toApiError(error);
    if (internal) request.log.error({ err: error, url: request.url }, 'request failed');
    else request.log.debug({ code: apiError.code, url: request.url }, 'request refused');
    return reply.code(apiError.status).send(apiError.toBody());
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({ error: 'Not found', code: 'NOT_FOUND' }),
  );

  // The ws library closes a socket on an oversized frame, so it gets twice our limit: frames in
  // between reach our own check and get a recoverable error; only absurd ones close (1009).
  app.register(fastifyWebsocket, websocketPluginOptions(maxClientFrameBytes * 2));
  app.register(fastifyMultipart, { limits: { fileSize: files.maxBytes, files: 1, fields: 20, parts: 40 } });
  registerAuth(app, settings);
  registerConsent(app, settings, services.consent);

  app.register(healthRoutes);
  app.register(authRoutes, context);
  app.register(pairingRoutes, context);
  app.register(agentRoutes, context);
  app.register(profileRoutes, context);
  app.register(mcpRoutes, context);
  app.register(sessionRoutes, context);
  app.register(sessionTransferRoutes, context);
  app.register(searchRoutes, context);
  app.register(memoryRoutes, context);
  app.register(recallRoutes, context);
  app.register(vaultRoutes, context);
  app.register(llmRoutes, context);
  app.register(llmModelRoutes, {
    ...context,
    runtimeStatus: () => services.llamacppRuntime?.status() ?? runtimeStatusUnknown(),
  });
  app.register(llamacppRuntimeRoutes, context);
  app.register(metricsRoutes, context);
  app.register(fileRoutes, context);
  app.register(messageRoutes, context);
  app.register(openAiRoutes, { ...context, prefix: '/v1' });
  app.register(naviMcpRoutes, context);
  app.register(sessionSocketRoutes, {
    ...context,
    maxClientFrameBytes,
    maxBufferedBytes: options.maxSocketBufferedBytes,
  });
  app.register(staticRoutes, { webDir: options.webDir ?? defaultWebDir });

  app.addHook('onReady', async () => {
    sweeper.start();
    // Recalls missed while Navi was down fire now; the others when they come due.
    await services.recalls?.start(recallRunner(runs));
  });
  // preClose runs before @fastify/websocket closes the sockets, so clients still receive the
  // stream_stopped of their run.
  app.addHook('preClose', async () => {
    const grace = options.shutdownGraceMs ?? 3000;
    services.recalls?.stop();
    await runs.close(grace);
    // Fastify closes the server right after this hook; requests still being answered get the
    // same grace to finish, and no idle keep-alive connection may hold the close.
    if (app.server.listening) reapConnectionsOnClose(app.server, grace);
  });
  app.addHook('onClose', async () => sweeper.stop());
  return app;
}
