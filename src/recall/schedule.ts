/**
 * A recall's `when`: reading what the agent asked for into a stored `RecallSchedule`, with an
 * error that says exactly what was wrong, and the fire times that follow from it. Cron
 * expressions and time zones are croner's job (it handles DST gaps and repeated hours).
 */
import { Cron } from 'croner';
import type { RecallSchedule } from '../protocol/rest.js';
import { formatDuration, parseDuration } from './duration.js';

/** What the agent may send as `when`; empty strings and nulls count as absent. */
export interface WhenInput {
  type?: unknown;
  at?: unknown;
  delay?: unknown;
  cron?: unknown;
  every?: unknown;
  timezone?: unknown;
}

export const MIN_INTERVAL_MS = 60_000;
const MAX_AHEAD_MS = 10 * 366 * 86_400_000;
const TYPES = ['once', 'recurring', 'immediate'] as const;
const FIELDS_OF: Record<(typeof TYPES)[number], readonly string[]> = {
  once: ['at', 'delay', 'timezone'],
  recurring: ['cron', 'every', 'timezone'],
  immediate: ['timezone'],
};

export type ParsedWhen = { schedule: RecallSchedule; next: Date } | { error: string };

/** The machine's time zone, the default for times and cron expressions given without one. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** True when `zone` is an IANA time zone this Node knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
}

/** Reads `when` at `now`; `zone` applies when it names no time zone. */
export function parseWhen(when: WhenInput, now: Date, zone: string): ParsedWhen {
  const type = typeof when.type === 'string' ? when.type.trim().toLowerCase() : when.type;
  if (!TYPES.includes(type as (typeof TYPES)[number])) {
    return {
      error: `when.type must be one of ${TYPES.join(', ')}; got ${JSON.stringify(when.type ?? null)}.`,
    };
  }
  const kind = type as (typeof TYPES)[number];
  const stray = Object.keys(FIELDS_OF)
    .flatMap((t) => FIELDS_OF[t as typeof kind])
    .filter((f, i, all) => all.indexOf(f) === i && !FIELDS_OF[kind].includes(f))
    .filter((f) => present((when as Record<string, unknown>)[f]));
  if (stray.length > 0) {
    return {
      error: `when.${stray[0]} does not apply to type "${kind}" (it takes ${FIELDS_OF[kind].join(', ') || 'nothing else'}); remove it.`,
    };
  }
  let tz = zone;
  if (present(when.timezone)) {
    if (typeof when.timezone !== 'string' || !isTimeZone(when.timezone.trim())) {
      return {
        error: `when.timezone ${JSON.stringify(when.timezone)} is not a time zone I know; use an IANA name such as Europe/Berlin, America/New_York or UTC.`,
      };
    }
    tz = when.timezone.trim();
  }
  if (kind === 'immediate') return { schedule: { kind: 'immediate' }, next: now };
  if (kind === 'once') return parseOnce(when, now, tz, present(when.timezone));
  return parseRecurring(when, now, tz);
}

function parseOnce(when: WhenInput, now: Date, tz: string, zoneGiven: boolean): ParsedWhen {
  const hasAt = present(when.at);
  const hasDelay = present(when.delay);
  if (hasAt === hasDelay) {
    return {
      error: hasAt
        ? 'Give when.at or when.delay for a "once" recall, not both.'
        : 'A "once" recall needs when.at (an ISO date and time, e.g. 2026-12-01T09:00) or when.delay (e.g. "20m", "2h").',
    };
  }
  if (hasDelay) {
    if (typeof when.delay !== 'string' && typeof when.delay !== 'number') {
      return { error: 'when.delay must be a text such as "20m" or a number of seconds.' };
    }
    const parsed = parseDuration(when.delay);
    if ('error' in parsed) return { error: `when.delay: ${parsed.error}.` };
    if (parsed.ms < 1000)
      return {
        error: 'when.delay must be at least 1 second; use type "immediate" to run right after this run.',
      };
    if (parsed.ms > MAX_AHEAD_MS) return { error: 'when.delay is more than 10 years; give a nearer time.' };
    const at = new Date(now.getTime() + parsed.ms);
    return { schedule: { kind: 'once', at: at.toISOString() }, next: at };
  }
  if (typeof when.at !== 'string')
    return { error: 'when.at must be a text: an ISO date and time such as 2026-12-01T09:00.' };
  const at = parseIsoTime(when.at.trim(), tz);
  if ('error' in at) return at;
  if (at.date.getTime() <= now.getTime()) {
    return {
      error: `when.at ${when.at} is in the past (${describeTime(at.date, tz)}; it is now ${describeTime(now, tz)}). Give a future time, or use type "immediate" to run as soon as this run ends.`,
    };
  }
  if (at.date.getTime() - now.getTime() > MAX_AHEAD_MS)
    return { error: 'when.at is more than 10 years away; give a nearer time.' };
  return {
    schedule: {
      kind: 'once',
      at: at.date.toISOString(),
      ...(zoneGiven || !at.hadOffset ? { timezone: tz } : {}),
    },
    next: at.date,
  };
}

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO date-time; without an offset it is read as wall-clock time in `tz`. */
function parseIsoTime(text: string, tz: string): { date: Date; hadOffset: boolean } | { error: string } {
  const m = ISO_TIME.exec(text);
  if (!m) {
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
    return {
      error: dateOnly
        ? `when.at "${text}" has a date but no time; add one, e.g. ${text}T09:00.`
        : `when.at "${text}" is not an ISO date and time; write it like 2026-12-01T09:00 (optionally with Z or an offset such as +01:00).`,
    };
  }
  const [, y, mo, d, h, mi, s] = m.map((v) => (v === undefined ? undefined : v));
  const fields = {
    month: Number(mo),
    day: Number(d),
    hour: Number(h),
    minute: Number(mi),
    second: Number(s ?? 0),
  };
  if (
    fields.month < 1 ||
    fields.month > 12 ||
    fields.day < 1 ||
    fields.day > 31 ||
    fields.hour > 23 ||
    fields.minute > 59 ||
    fields.second > 59
  ) {
    return {
      error: `when.at "${text}" is not a real date and time (check the month, day, hour and minute).`,
    };
  }
  const probe = new Date(Date.UTC(Number(y), fields.month - 1, fields.day));
  if (probe.getUTCDate() !== fields.day)
    return { error: `when.at "${text}": that month has no day ${fields.day}.` };
  if (m[7]) {
    const date = new Date(text.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    return Number.isNaN(date.getTime())
      ? { error: `when.at "${text}" is not a valid time.` }
      : { date, hadOffset: true };
  }
  const local = `${y}-${mo}-${d}T${h}:${mi}:${String(fields.second).padStart(2, '0')}`;
  // croner turns wall-clock time in a zone into an instant (a time in a DST gap moves past it).
  const date = new Cron(local, { timezone: tz, paused: true }).nextRun(new Date(0));
  if (!date) return { error: `when.at "${text}" cannot be placed in time zone ${tz}.` };
  return { date, hadOffset: false };
}

function parseRecurring(when: WhenInput, now: Date, tz: string): ParsedWhen {
  const hasCron = present(when.cron);
  const hasEvery = present(when.every);
  if (hasCron === hasEvery) {
    return {
      error: hasCron
        ? 'Give when.cron or when.every for a "recurring" recall, not both.'
        : 'A "recurring" recall needs when.cron (5 fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5") or when.every (e.g. "30m", "6h").',
    };
  }
  if (hasEvery) {
    if (typeof when.every !== 'string' && typeof when.every !== 'number') {
      return { error: 'when.every must be a text such as "30m" or a number of seconds.' };
    }
    const parsed = parseDuration(when.every);
    if ('error' in parsed) return { error: `when.every: ${parsed.error}.` };
    if (parsed.ms < MIN_INTERVAL_MS)
      return { error: `when.every must be at least 1 minute; got ${formatDuration(parsed.ms)}.` };
    if (parsed.ms > MAX_AHEAD_MS) return { error: 'when.every is more than 10 years.' };
    return {
      schedule: { kind: 'recurring', every_ms: parsed.ms },
      next: new Date(now.getTime() + parsed.ms),
    };
  }
  if (typeof when.cron !== 'string') return { error: 'when.cron must be a text such as "0 9 * * 1-5".' };
  const cron = when.cron.trim().replace(/\s+/g, ' ');
  const fields = cron.split(' ').length;
  if (fields !== 5 && !cron.startsWith('@')) {
    return {
      error: `when.cron "${cron}" has ${fields} fields; use 5: minute hour day-of-month month day-of-week (e.g. "0 9 * * 1-5" for 09:00 on weekdays).`,
    };
  }
  let job: Cron;
  try {
    job = new Cron(cron, { timezone: tz, paused: true, mode: '5-part' });
  } catch (err) {
    return { error: `when.cron "${cron}" is not a valid cron expression: ${cronMessage(err)}.` };
  }
  const next = job.nextRun(now);
  if (!next) return { error: `when.cron "${cron}" never fires after now; check the date fields.` };
  return { schedule: { kind: 'recurring', cron, timezone: tz }, next };
}

function cronMessage(err: unknown): string {
  return String((err as Error).message ?? err).replace(/^Cron\w*:\s*/, '');
}

/**
 * When a recall fires next, after the occurrence due at `due` fired (or was skipped) at `now`.
 * Null for one-shot recalls. Missed occurrences are not made up: the next one lies after `now`.
 */
export function nextAfter(schedule: RecallSchedule, due: Date, now: Date): Date | null {
  if (schedule.kind === 'once' || schedule.kind === 'immediate') return null;
  const from = now.getTime() > due.getTime() ? now : due;
  if ('every_ms' in schedule) {
    const behind = Math.max(0, from.getTime() - due.getTime());
    const steps = Math.floor(behind / schedule.every_ms) + 1;
    return new Date(due.getTime() + steps * schedule.every_ms);
  }
  return new Cron(schedule.cron, { timezone: schedule.timezone, paused: true, mode: '5-part' }).nextRun(from);
}

/** "Thu 26 Nov 2026, 09:00 CET": a time for people, in `zone`. */
export function describeTime(date: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(date);
}

/** The schedule in plain words. */
export function describeSchedule(schedule: RecallSchedule, zone: string): string {
  switch (schedule.kind) {
    case 'immediate':
      return 'once, as soon as the run that scheduled it ends';
    case 'once':
      return `once, at ${describeTime(new Date(schedule.at), schedule.timezone ?? zone)}`;
    case 'recurring':
      return 'every_ms' in schedule
        ? `every ${formatDuration(schedule.every_ms)}`
        : `on the cron schedule "${schedule.cron}" (${schedule.timezone})`;
  }
}

/** The zone a schedule's times are shown in. */
export function zoneOf(schedule: RecallSchedule, fallback: string): string {
  return 'timezone' in schedule && schedule.timezone ? schedule.timezone : fallback;
}
