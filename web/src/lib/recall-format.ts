/**
 * Recall times and outcomes in words a person reads at a glance: clock times in the browser's
 * own zone and format, distances in time ("in 2 hours"), lateness, how a run ended.
 */
import type { RecallOutcome, RecallStamp, RecallStatus } from '@protocol/rest.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const clock = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const weekdayClock = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  hour: 'numeric',
  minute: '2-digit',
});
const dateClock = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

function sameDay(a: Date, b: Date): boolean {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/**
 * `iso` as local time, as short as is still unambiguous from `now`: the time alone today, the
 * weekday within the coming or past six days, else the date. Empty for a value that is no time.
 */
export function localTime(iso: string, now: Date): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  if (sameDay(at, now)) return clock.format(at);
  if (Math.abs(at.getTime() - now.getTime()) < 6 * DAY) return weekdayClock.format(at);
  return dateClock.format(at);
}

/** `iso` with its date, time and zone spelled out, for a tooltip. */
export function fullTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : full.format(at);
}

/** How far `iso` is from `now`: "in 2 hours", "5 minutes ago", "now". */
export function fromNow(iso: string, now: Date): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '';
  const diff = at - now.getTime();
  const size = Math.abs(diff);
  if (size < 10_000) return 'now';
  if (size < 45_000) return relative.format(Math.round(diff / 1000), 'second');
  if (size < 45 * MINUTE) return relative.format(Math.round(diff / MINUTE), 'minute');
  if (size < 22 * HOUR) return relative.format(Math.round(diff / HOUR), 'hour');
  return relative.format(Math.round(diff / DAY), 'day');
}

/** A delay in the largest unit that keeps it readable: "40 s", "12 min", "3 h 5 min". */
export function lateness(ms: number): string {
  if (ms < MINUTE) return `${Math.max(1, Math.round(ms / 1000))} s`;
  if (ms < HOUR) return `${Math.round(ms / MINUTE)} min`;
  const hours = Math.floor(ms / HOUR);
  const minutes = Math.round((ms % HOUR) / MINUTE);
  return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
}

/** The badge text of a recall run's prompt: when it was due, and how late it ran if it was. */
export function stampText(stamp: RecallStamp, now: Date): string {
  const due = localTime(stamp.scheduled_for, now);
  const late = stamp.late_ms !== undefined ? ` · ran ${lateness(stamp.late_ms)} late` : '';
  return `${due ? `due ${due}` : 'scheduled'}${late}`;
}

const outcomeWords: Record<RecallOutcome['status'], string> = {
  completed: 'completed',
  failed: 'failed',
  stopped: 'stopped',
  not_run: 'not run',
};

/** How a recall's last run went, in a few words (the error or reason after a colon). */
export function outcomeText(outcome: RecallOutcome): string {
  const words = outcomeWords[outcome.status];
  return outcome.message ? `${words}: ${outcome.message}` : words;
}

export const statusWords: Record<RecallStatus, string> = {
  active: 'Active',
  done: 'Done',
  cancelled: 'Cancelled',
};
