/**
 * The navi-web process: `node --import tsx src/servers/navi-web/main.ts [--http <port>]`.
 * Settings come from its environment (Navi passes them); a bad one stops it with a message on
 * stderr and exit code 1, before anything is served.
 */
import { loadSettings, SettingsError } from '../../config/settings.js';
import { parseServeArgs, serve, UsageError } from '../common/serve.js';
import { createNaviWebServer, NAVI_WEB_NAME } from './server.js';

/** After shutdown, a handle something forgot to release must not keep the process alive. */
const EXIT_GRACE_MS = 2000;

async function main(): Promise<number> {
  let mode: ReturnType<typeof parseServeArgs>;
  let settings: ReturnType<typeof loadSettings>;
  try {
    mode = parseServeArgs(process.argv.slice(2));
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof UsageError || err instanceof SettingsError) {
      process.stderr.write(`${NAVI_WEB_NAME}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const web = createNaviWebServer(settings);
  let handle: Awaited<ReturnType<typeof serve>>;
  try {
    handle = await serve({ mode, createServer: () => web.createServer(), onClose: () => web.close() });
  } catch (err) {
    // A port already taken, say: said plainly, without a stack.
    process.stderr.write(`${NAVI_WEB_NAME}: cannot serve: ${(err as Error).message}\n`);
    await web.close();
    return 1;
  }
  await handle.closed;
  setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  return 0;
}

process.exitCode = await main();
