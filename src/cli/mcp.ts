/**
 * `navi mcp`: Navi's MCP server over stdio, in this process, for an MCP host that starts it
 * (docs/mcp-server.md#over-stdio-navi-mcp). It opens the same database as `navi serve` (with
 * SQLite, the same file, so its sessions show in the web client) and runs the agent with a run
 * registry of its own; it listens on no port, fires no recalls and builds no web client.
 * Stdout is the protocol: every log line goes to stderr. `navi mcp login` is another thing:
 * the OAuth sign-in of the running Navi at an MCP server (mcp-login.ts).
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createLogger } from '../config/logger.js';
import type { Settings } from '../config/settings.js';
import { createNaviMcpServer } from '../server/navi-mcp/server.js';
import { keepRunningOnStrayErrors, type StartEnvironment, startServices } from './start-services.js';

const MCP_USAGE = `Usage: navi mcp
       navi mcp login <server>

navi mcp serves Navi as an MCP server over stdio (stdin and stdout carry the protocol; logs go
to stderr). An MCP host starts it as a command; see docs/mcp-server.md.
navi mcp login authorises the running Navi at an MCP server that asks for OAuth (navi mcp login
help; docs/mcp.md#oauth).`;

/** How long shutdown lets active runs save before closing the stores. */
const RUN_GRACE_MS = 3000;
/** After shutdown, a handle something forgot to release must not keep the process alive. */
const EXIT_GRACE_MS = 2000;

export async function runMcp(
  settings: Settings,
  argv: readonly string[],
  start: StartEnvironment,
): Promise<number> {
  // A person at a terminal, not an MCP host: it talks to the running Navi and prints as usual.
  if (argv[0] === 'login') {
    const { runMcpLogin } = await import('./mcp-login.js');
    return runMcpLogin(settings, argv.slice(1), process);
  }
  if (argv.length > 0) {
    const help = argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h';
    // Help goes to stderr too: a host that passed a stray argument must not read it as protocol.
    process.stderr.write(`${help ? '' : `navi mcp: unexpected argument "${argv[0]}"\n\n`}${MCP_USAGE}\n`);
    return help ? 0 : 2;
  }
  const logger = createLogger(settings, process.stderr, start.secrets);
  keepRunningOnStrayErrors(logger);
  const { RunRegistry } = await import('../server/run-registry.js');
  const services = await startServices(settings, logger, start);
  if (typeof services === 'number') return services;
  const runs = new RunRegistry({
    agent: services.agent,
    logger,
    confirmTimeoutMs: settings.TOOL_CONFIRM_TIMEOUT_MS,
    // On PostgreSQL, a session answering in a navi serve is busy here too, and the other way round.
    ...(services.cluster ? { cluster: services.cluster } : {}),
  });
  const server = createNaviMcpServer({ services, runs });

  let markDone!: () => void;
  const done = new Promise<void>((resolve) => {
    markDone = resolve;
  });
  let closing = false;
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    void (async () => {
      logger.info({ why }, 'navi mcp shutting down');
      await runs.close(RUN_GRACE_MS).catch((err: unknown) => logger.error({ err }, 'stopping runs failed'));
      await server.close().catch((err: unknown) => logger.error({ err }, 'closing the MCP server failed'));
      await services.close().catch((err: unknown) => logger.error({ err }, 'closing the services failed'));
      markDone();
    })();
  };
  process.stdin.once('end', () => shutdown('stdin ended'));
  process.stdin.once('close', () => shutdown('stdin closed'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await server.connect(new StdioServerTransport(process.stdin, process.stdout));
  logger.info('navi mcp serving over stdio');
  await done;
  setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  return 0;
}
