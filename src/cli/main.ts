/** `navi serve` and `navi doctor`. */
import type { Logger } from 'pino';
import { createLogger } from '../config/logger.js';
import { loadSettings, type Settings, SettingsError } from '../config/settings.js';

const USAGE = `Usage: navi <command>

Commands:
  serve    start the Navi server (same as npm start)
  doctor   check the LLM backend, the database, tools and MCP servers; exit 0 only when all is well
  help     show this text

Configuration comes from the environment and an optional .env file (see README.md).`;

export async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command !== 'serve' && command !== 'doctor') {
    process.stderr.write(`navi: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  let settings: Settings;
  try {
    settings = loadSettings(process.env, process.cwd());
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`navi: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger(settings);
  if (command === 'doctor') {
    const { runDoctor } = await import('./doctor.js');
    return runDoctor(settings, logger.child({}, { level: 'warn' }), process.stdout);
  }
  return serve(settings, logger);
}

async function serve(settings: Settings, logger: Logger): Promise<number> {
  const { createServices } = await import('../server/create-services.js');
  const { buildApp } = await import('../server/app.js');
  try {
    const { ensureWebBuild } = await import('./web-build.js');
    const build = await ensureWebBuild({ logger });
    if (build.built) logger.info({ reason: build.reason }, 'web client built');
  } catch (err) {
    logger.error(
      { err },
      'building the web client failed; the API still starts (run npm run build:web to see why)',
    );
  }
  // A user tool's stray timer or forgotten promise throws outside the executor's reach; one
  // such error must not end every session, so it is logged with its stack and Navi goes on.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception (kept running)'));
  process.on('unhandledRejection', (reason) =>
    logger.error({ err: reason }, 'unhandled promise rejection (kept running)'),
  );
  const services = await createServices(settings, { logger });
  const app = await buildApp(services);
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await app.close();
    await services.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  try {
    await app.listen({ host: settings.NAVI_HOST, port: settings.NAVI_PORT });
  } catch (err) {
    logger.error(
      { err },
      `cannot listen on ${settings.NAVI_HOST}:${settings.NAVI_PORT}; set NAVI_HOST / NAVI_PORT`,
    );
    await services.close();
    return 1;
  }
  logger.info(
    `Navi is serving on http://${settings.NAVI_HOST}:${app.server.address() && typeof app.server.address() === 'object' ? (app.server.address() as { port: number }).port : settings.NAVI_PORT}`,
  );
  // Keep running until a signal ends the process.
  await new Promise<never>(() => {});
  return 0;
}
