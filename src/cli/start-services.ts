/** The start `navi serve` and `navi mcp` share: a process that keeps running, and Navi's services. */
import type { Logger } from 'pino';
import { type Settings, SettingsError } from '../config/settings.js';
import type { NaviServices } from '../server/services.js';
import type { SecretMasker } from '../util/secret-masker.js';

export interface StartEnvironment {
  secrets: SecretMasker;
  environment: Readonly<Record<string, string | undefined>>;
}

/**
 * Keeps the process running through errors thrown outside anyone's reach: a user tool's stray
 * timer or forgotten promise must not end every session, so each is logged with its stack.
 */
export function keepRunningOnStrayErrors(logger: Logger): void {
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception (kept running)'));
  process.on('unhandledRejection', (reason) =>
    logger.error({ err: reason }, 'unhandled promise rejection (kept running)'),
  );
}

/** Navi's services, or the exit code after saying on stderr why they cannot start. */
export async function startServices(
  settings: Settings,
  logger: Logger,
  start: StartEnvironment,
): Promise<NaviServices | number> {
  const { createServices } = await import('../server/create-services.js');
  try {
    return await createServices(settings, { logger, ...start });
  } catch (err) {
    // A setting naming a vault secret that cannot be read is a bad setting like any other.
    if (err instanceof SettingsError) {
      process.stderr.write(`navi: ${err.message}\n`);
      return 2;
    }
    // The database cannot be opened (PostgreSQL unreachable, a schema newer than this Navi, a
    // damaged file): its message says what to do. Thrown on, it would reach the handler above,
    // which keeps the process running, and the command would end with 0.
    process.stderr.write(`navi: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
