/**
 * The process around a shipped MCP server, the same for each: read the command line and the
 * settings from the environment (Navi passes them), build the server, serve it until shutdown.
 * Whatever the person must fix (a bad argument or setting, a resource the server cannot open, a
 * port already taken) is one line on stderr, `<name>: <what is wrong>`, and exit code 1.
 * `shippedToolServer` builds the usual kind: tools made once, offered on every connection.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import packageJson from '../../../package.json' with { type: 'json' };
import { loadSettings, type Settings, SettingsError } from '../../config/settings.js';
import {
  parseServeArgs,
  registerShippedTool,
  type ServeHandle,
  type ServeMode,
  serve,
  UsageError,
} from './serve.js';
import type { ShippedTool } from './tool.js';

/** What `serve` needs of a built server. */
export interface ShippedServer {
  /** A new MCP server with its tools registered: one per connection. */
  createServer(): McpServer;
  /** Releases what the server holds; awaited at shutdown, or when it cannot be served. */
  close(): Promise<void>;
}

/** A shipped server made of tools built once and shared by every connection. */
export interface ShippedToolServer extends ShippedServer {
  readonly tools: readonly ShippedTool[];
}

/** A server named `name` offering `tools` on each connection; `close` releases what they hold. */
export function shippedToolServer(
  name: string,
  tools: readonly ShippedTool[],
  close: () => Promise<void>,
): ShippedToolServer {
  return {
    tools,
    createServer() {
      const server = new McpServer({ name, version: packageJson.version });
      for (const tool of tools) registerShippedTool(server, tool);
      return server;
    },
    close,
  };
}

/** After shutdown, a handle something forgot to release must not keep the process alive. */
const EXIT_GRACE_MS = 2000;

/**
 * Runs a shipped server as this process and resolves to its exit code once it has shut down.
 * `build` gets the settings and returns the server, or a message saying what the person must
 * fix, printed after the server's name (exit code 1). What `build` throws is a bug and is thrown
 * on, stack and all.
 */
export async function runShippedServer(
  name: string,
  build: (settings: Settings) => ShippedServer | string,
): Promise<number> {
  let mode: ServeMode;
  let settings: Settings;
  try {
    mode = parseServeArgs(process.argv.slice(2));
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof UsageError || err instanceof SettingsError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const server = build(settings);
  if (typeof server === 'string') {
    process.stderr.write(`${name}: ${server}\n`);
    return 1;
  }
  let handle: ServeHandle;
  try {
    handle = await serve({ mode, createServer: () => server.createServer(), onClose: () => server.close() });
  } catch (err) {
    // A port already taken, say: said plainly, without a stack.
    process.stderr.write(`${name}: cannot serve: ${(err as Error).message}\n`);
    await server.close();
    return 1;
  }
  await handle.closed;
  setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  return 0;
}
