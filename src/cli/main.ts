/** `navi serve`, `navi pair`, `navi doctor` and `navi vault`. */
import type { Logger } from 'pino';
import { createLogger } from '../config/logger.js';
import { knownSecrets, scrubSecretEnvironment } from '../config/secret-env.js';
import {
  loadSettings,
  readDotEnv,
  type Settings,
  SettingsError,
  settingOrigins,
} from '../config/settings.js';
import type { ConsentStore } from '../store/types.js';
import { SecretMasker } from '../util/secret-masker.js';
import { isHelp } from './cli-io.js';
import { keepRunningOnStrayErrors, type StartEnvironment, startServices } from './start-services.js';

const USAGE = `Usage: navi <command>

Commands:
  serve    start the Navi server (same as npm start)
  mcp      serve Navi as an MCP server over stdio, for an MCP host to start (docs/mcp-server.md);
           mcp login <server>: authorise the running Navi at an MCP server that asks for OAuth
  pair     print a one-time link that lets a browser use Navi and approve what the agent does
           (--unpair-all: forget every paired browser)
  doctor   check the LLM backend, the database, tools and MCP servers; exit 0 only when all is well
  vault    the secrets vault: status, rotate-key, export <file>, import <file> (navi vault help)
  model    local models for the llamacpp backend: pull <alias | hf:org/repo/file.gguf | URL>,
           list, rm <name> (navi model help)
  llamacpp the embedded llama.cpp runtime: install, status (navi llamacpp help)
  data     where the database, session files and vault are; move: into the data folder
  backup   copy the data into a folder, safe while Navi runs: backup [DEST]
  restore  put a backup in place of the current data (Navi stopped): restore SRC
  db       move the database between SQLite and PostgreSQL: db copy --from A --to B (navi db help)
  service  a systemd user unit for navi serve: service install [--write] [--force]
  help     show this text

Configuration comes from the environment and an optional .env file (see README.md).`;

const COMMANDS = [
  'serve',
  'mcp',
  'doctor',
  'pair',
  'vault',
  'model',
  'llamacpp',
  'data',
  'backup',
  'restore',
  'service',
  'db',
];

export interface MainOptions {
  /** The Navi checkout this command runs from (bin/navi.js passes its own). */
  checkout?: string;
}

export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const command = argv[0] ?? 'serve';
  if (isHelp(command)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!COMMANDS.includes(command)) {
    process.stderr.write(`navi: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  // An MCP host starts `navi mcp` from a folder of its own; Navi's .env, profiles, tools and
  // manuals are in the checkout, where `npm start` runs navi serve, so it works there too.
  if (command === 'mcp' && options.checkout) process.chdir(options.checkout);
  let settings: Settings;
  try {
    settings = loadSettings(process.env, process.cwd());
  } catch (err) {
    return refuseSettings(err);
  }
  // Every secret of the settings, the environment and .env, masked in log lines and tool
  // output; then gone from the environment, so no program Navi starts from here on (a user
  // tool's own child_process call included) inherits one.
  // ssh_exec still reads the passwords its hosts file names from the environment as it was.
  // (/proc/self/environ keeps that original block too; the file tools and the sandbox keep
  // tools away from /proc.)
  const environment = Object.freeze({ ...process.env });
  const secrets = new SecretMasker(knownSecrets(settings, { ...readDotEnv(process.cwd()), ...environment }));
  scrubSecretEnvironment(process.env);
  // Stdout is navi mcp's protocol: it makes its own logger, on stderr.
  if (command === 'mcp') {
    const { runMcp } = await import('./mcp.js');
    return runMcp(settings, argv.slice(1), { secrets, environment });
  }
  const logger = createLogger(settings, undefined, secrets);
  if (command === 'pair') {
    const { runPair } = await import('./pair.js');
    return runPair(settings, argv.slice(1), process.stdout, process.stderr);
  }
  if (command === 'vault') {
    // The snapshot still holds GNEXUS_NEW_MASTER_KEY and GNEXUS_BACKUP_PASSPHRASE.
    const { runVault } = await import('./vault.js');
    return runVault(settings, argv.slice(1), environment, process);
  }
  if (command === 'model') {
    const { runModel } = await import('./model.js');
    return runModel(settings, argv.slice(1), process);
  }
  if (command === 'llamacpp') {
    const { runLlamacpp } = await import('./llamacpp.js');
    return runLlamacpp(settings, argv.slice(1), process);
  }
  if (command === 'data') {
    const { runData } = await import('./data.js');
    return runData(settings, argv.slice(1), process);
  }
  if (command === 'backup') {
    const { runBackup } = await import('./backup.js');
    return runBackup(settings, argv.slice(1), process);
  }
  if (command === 'restore') {
    const { runRestore } = await import('./restore.js');
    return runRestore(settings, argv.slice(1), process);
  }
  if (command === 'db') {
    const { runDb } = await import('./db/command.js');
    return runDb(argv.slice(1), process);
  }
  if (command === 'service') {
    const { runService } = await import('./service.js');
    return runService(settings, argv.slice(1), environment, process);
  }
  if (command === 'doctor') {
    const { runDoctor } = await import('./doctor.js');
    return runDoctor(settings, process.stdout, secrets);
  }
  return serve(settings, logger, { secrets, environment });
}

/** A bad setting ends the command with what is wrong and exit code 2; other errors go on. */
function refuseSettings(err: unknown): number {
  if (!(err instanceof SettingsError)) throw err;
  process.stderr.write(`navi: ${err.message}\n`);
  return 2;
}

async function serve(settings: Settings, logger: Logger, startEnv: StartEnvironment): Promise<number> {
  const { buildApp } = await import('../server/app.js');
  // An install from before the data folder keeps its data in the working folder; say so each
  // start, with the command that moves it, until it is moved or named by settings.
  const { dataLocation, legacyDataNotice } = await import('../config/data-location.js');
  const notice = legacyDataNotice(dataLocation(settings, settingOrigins(settings)));
  if (notice) logger.warn(notice);
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
  keepRunningOnStrayErrors(logger);
  const services = await startServices(settings, logger, startEnv);
  if (typeof services === 'number') return services;
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
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : settings.NAVI_PORT;
  logger.info(`Navi is serving on http://${settings.NAVI_HOST}:${port}`);
  await announcePairing(services, settings, port, logger);
  // Not awaited: a slow LLM server must not hold up serving; the LLM line comes once it answered.
  const { logLlmAtStart } = await import('../server/first-run.js');
  void logLlmAtStart(services, `http://${settings.NAVI_HOST}:${port}`, logger);
  // Keep running until a signal ends the process.
  await new Promise<never>(() => {});
  return 0;
}

/**
 * Without a token, a browser needs pairing before it may approve anything: one code per start
 * spares the person a second command. With a token, signing in with it is enough.
 */
async function announcePairing(
  services: { consent: ConsentStore },
  settings: Settings,
  port: number,
  logger: Logger,
): Promise<void> {
  if (settings.NAVI_API_TOKEN !== '') return;
  try {
    const { newPairingInstruction } = await import('./pair.js');
    logger.info(
      `${await newPairingInstruction(services.consent, settings.NAVI_HOST, port)} (run npx navi pair for a new link)`,
    );
  } catch (err) {
    logger.error({ err }, 'could not create a pairing code; run npx navi pair to try again');
  }
}
