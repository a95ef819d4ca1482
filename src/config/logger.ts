/**
 * Structured logging: one JSON object per line in production, readable lines in a terminal.
 * Every line of a run carries `session_id` and `run_id` through child loggers. With a
 * `SecretMasker`, every line is masked as it is written, whoever logged it (a user tool's
 * `ctx.log` included), and secrets registered later are masked from then on.
 */
import { createRequire } from 'node:module';
import { type Logger, pino } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import type { SecretMasker } from '../util/secret-masker.js';
import type { Settings } from './settings.js';

const levels = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' } as const;

export function createLogger(
  settings: Pick<Settings, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  destination?: NodeJS.WritableStream,
  secrets?: SecretMasker,
): Logger {
  const level = levels[settings.LOG_LEVEL];
  // The hook sees the serialised JSON line before any destination or transport does.
  const options: pino.LoggerOptions = secrets
    ? { level, hooks: { streamWrite: (line) => secrets.mask(line) } }
    : { level };
  const pretty =
    settings.LOG_FORMAT === 'pretty' || (settings.LOG_FORMAT === 'auto' && process.stdout.isTTY === true);
  if (destination) return pino(options, destination as pino.DestinationStream);
  if (pretty) {
    // In this thread, not as a pino transport: a transport is a worker thread of its own (a V8
    // isolate, 10–20 MB resident) for a terminal's few lines a second. Loaded only here, since
    // a service (JSON lines) never needs it.
    const prettyStream = createRequire(import.meta.url)('pino-pretty') as (
      options: PrettyOptions,
    ) => pino.DestinationStream;
    return pino(options, prettyStream({ colorize: true, translateTime: 'HH:MM:ss', sync: true }));
  }
  return pino(options);
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
