/**
 * What the services log while `navi doctor` checks them (a profile file skipped, an MCP server
 * down). Doctor prints lines for people, so these come out as plain sentences after the checks,
 * each once, instead of JSON log lines (or a pretty-printer's lines) mixed in among them.
 */
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../config/logger.js';
import type { SecretMasker } from '../util/secret-masker.js';

/** Fields every log line has, or that say nothing to a person reading doctor's output. */
const UNSAID = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'session_id', 'run_id']);

/** At most this many notes are printed; a server that keeps failing must not flood the output. */
const MAX_NOTES = 20;

/** One log line as a sentence: its message, then its text fields ("reason: …"). */
export function logLineSentence(line: string): string | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return text;
  const record = parsed as Record<string, unknown>;
  const message =
    typeof record.msg === 'string' && record.msg !== '' ? record.msg : 'a log line without text';
  const details = Object.entries(record).flatMap(([key, value]) => {
    if (UNSAID.has(key)) return [];
    if (typeof value === 'string') return [`${key.replace(/_/g, ' ')}: ${value}`];
    // An error's message is what a person can act on; its stack is for the log file.
    if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string')
      return [`${key === 'err' ? 'error' : key}: ${(value as { message: string }).message}`];
    return [];
  });
  return details.length === 0 ? message : `${message} (${details.join('; ')})`;
}

export class DoctorNotes {
  /** Warnings and errors only: doctor's own lines already say what went right. */
  readonly logger: Logger;
  private readonly notes = new Set<string>();

  constructor(secrets?: SecretMasker) {
    const sink = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        for (const line of chunk.toString().split('\n')) {
          const sentence = logLineSentence(line);
          if (sentence !== undefined) this.notes.add(sentence);
        }
        done();
      },
    });
    // The masker's hook sees each line before the sink does, as in every other Navi log.
    this.logger = createLogger({ LOG_LEVEL: 'WARNING', LOG_FORMAT: 'json' }, sink, secrets);
  }

  /** The notes as lines to print after the checks; none when nothing was logged. */
  lines(): string[] {
    if (this.notes.size === 0) return [];
    const all = [...this.notes];
    const shown = all.slice(0, MAX_NOTES).map((note) => `  ${note}`);
    if (all.length > MAX_NOTES) shown.push(`  … and ${all.length - MAX_NOTES} more`);
    return ['Logged while checking:', ...shown];
  }
}
