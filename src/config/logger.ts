/**
 * Structured logging: one JSON object per line in production, readable lines in a terminal.
 * Every line of a run carries `session_id` and `run_id` through child loggers.
 */
import { type Logger, pino } from 'pino';
import type { Settings } from './settings.js';

const levels = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' } as const;

export function createLogger(
  settings: Pick<Settings, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  destination?: NodeJS.WritableStream,
): Logger {
  const level = levels[settings.LOG_LEVEL];
  const pretty =
    settings.LOG_FORMAT === 'pretty' || (settings.LOG_FORMAT === 'auto' && process.stdout.isTTY === true);
  if (destination) return pino({ level }, destination as pino.DestinationStream);
  if (pretty) {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss' } },
    });
  }
  return pino({ level });
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
