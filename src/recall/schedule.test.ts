import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';
import { describeSchedule, nextAfter, parseWhen } from './schedule.js';

const now = new Date('2026-11-25T12:00:00Z');
const zone = 'Europe/Berlin';

function ok(when: Record<string, unknown>) {
  const parsed = parseWhen(when, now, zone);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

function error(when: Record<string, unknown>): string {
  const parsed = parseWhen(when, now, zone);
  if (!('error' in parsed)) throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.error;
}

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['2 days', 172_800_000],
    ['1 hour and 5 minutes', 3_900_000],
    ['in 20 minutes', 1_200_000],
    ['PT10M', 600_000],
    ['P1DT2H', 93_600_000],
    ['45', 45_000],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ms });
  });

  it('reads a number as seconds', () => {
    expect(parseDuration(30)).toEqual({ ms: 30_000 });
  });

  it.each(['soon', '10 fortnights', '5m extra', '', 'P', 'PT'])(
    'refuses %j with the forms it reads',
    (text) => {
      const parsed = parseDuration(text);
      expect(parsed).toHaveProperty('error');
      expect((parsed as { error: string }).error).toMatch(/"90s"/);
    },
  );

  it('refuses negative and infinite numbers', () => {
    expect(parseDuration(-5)).toHaveProperty('error');
    expect(parseDuration(Number.POSITIVE_INFINITY)).toHaveProperty('error');
  });

  it('formats the two largest units', () => {
    expect(formatDuration(3_900_000)).toBe('1 hour 5 minutes');
    expect(formatDuration(40_000)).toBe('40 seconds');
    expect(formatDuration(2 * 86_400_000 + 3_600_000 + 60_000)).toBe('2 days 1 hour');
    expect(formatDuration(200)).toBe('less than a second');
  });
});

describe('parseWhen', () => {
  it('schedules a one-shot recall after a delay', () => {
    const parsed = ok({ type: 'once', delay: '2h' });
    expect(parsed.next.toISOString()).toBe('2026-11-25T14:00:00.000Z');
    expect(parsed.schedule).toEqual({ kind: 'once', at: '2026-11-25T14:00:00.000Z' });
  });

  it('reads a wall-clock time in the given zone, and an offset as given', () => {
    expect(
      ok({ type: 'once', at: '2026-12-01T09:00', timezone: 'America/New_York' }).next.toISOString(),
    ).toBe('2026-12-01T14:00:00.000Z');
    expect(ok({ type: 'once', at: '2026-12-01T09:00' }).next.toISOString()).toBe('2026-12-01T08:00:00.000Z');
    expect(ok({ type: 'once', at: '2026-12-01T09:00+0530' }).next.toISOString()).toBe(
      '2026-12-01T03:30:00.000Z',
    );
    expect(ok({ type: 'once', at: '2026-12-01 09:00Z' }).next.toISOString()).toBe('2026-12-01T09:00:00.000Z');
  });

  it('refuses a time in the past, naming both times', () => {
    expect(error({ type: 'once', at: '2026-11-25T12:00:00Z' })).toMatch(/in the past .*it is now/);
    expect(error({ type: 'once', at: '2020-01-01T00:00' })).toMatch(/immediate/);
  });

  it('refuses impossible and incomplete times precisely', () => {
    expect(error({ type: 'once', at: '2026-12-01' })).toMatch(/no time; add one, e.g. 2026-12-01T09:00/);
    expect(error({ type: 'once', at: '2026-02-30T09:00' })).toMatch(/no day 30/);
    expect(error({ type: 'once', at: '2026-13-01T09:00' })).toMatch(/not a real date/);
    expect(error({ type: 'once', at: 'tomorrow morning' })).toMatch(/not an ISO date and time/);
    expect(error({ type: 'once', at: 12 })).toMatch(/must be a text/);
  });

  it('needs exactly one of at and delay', () => {
    expect(error({ type: 'once' })).toMatch(/needs when.at .* or when.delay/);
    expect(error({ type: 'once', at: '2026-12-01T09:00', delay: '1h' })).toMatch(/not both/);
    expect(error({ type: 'once', delay: '0s' })).toMatch(/at least 1 second/);
    expect(error({ type: 'once', delay: '20 years' })).toMatch(/not a unit|more than 10 years/);
  });

  it('treats empty fields as absent and refuses fields of another type', () => {
    expect(ok({ type: 'once', delay: '1m', cron: '', every: null }).next.getTime()).toBe(
      now.getTime() + 60_000,
    );
    expect(error({ type: 'once', delay: '1m', cron: '* * * * *' })).toMatch(
      /when.cron does not apply to type "once"/,
    );
  });

  it('refuses unknown types and time zones', () => {
    expect(error({ type: 'weekly' })).toMatch(/once, recurring, immediate/);
    expect(error({})).toMatch(/got null/);
    expect(error({ type: 'once', delay: '1h', timezone: 'Mars/Olympus' })).toMatch(/IANA name/);
  });

  it('schedules an interval from now, at least a minute apart', () => {
    expect(ok({ type: 'recurring', every: '30m' }).next.toISOString()).toBe('2026-11-25T12:30:00.000Z');
    expect(error({ type: 'recurring', every: '10s' })).toMatch(/at least 1 minute; got 10 seconds/);
    expect(error({ type: 'recurring' })).toMatch(/needs when.cron .* or when.every/);
  });

  it('schedules a cron expression in a time zone', () => {
    const parsed = ok({ type: 'recurring', cron: '0 9 * * *', timezone: 'Asia/Tokyo' });
    expect(parsed.schedule).toEqual({ kind: 'recurring', cron: '0 9 * * *', timezone: 'Asia/Tokyo' });
    expect(parsed.next.toISOString()).toBe('2026-11-26T00:00:00.000Z');
  });

  it('stores the default zone with a cron expression given without one', () => {
    expect(ok({ type: 'recurring', cron: '0 9 * * 1-5' }).schedule).toEqual({
      kind: 'recurring',
      cron: '0 9 * * 1-5',
      timezone: zone,
    });
  });

  it('refuses invalid cron expressions with the reason', () => {
    expect(error({ type: 'recurring', cron: '61 * * * *' })).toMatch(/not a valid cron expression: .*minute/);
    expect(error({ type: 'recurring', cron: '* * * * * *' })).toMatch(/has 6 fields; use 5/);
    expect(error({ type: 'recurring', cron: 'every day' })).toMatch(/has 2 fields/);
  });

  it('runs immediate recalls now', () => {
    expect(ok({ type: 'immediate' })).toEqual({ schedule: { kind: 'immediate' }, next: now });
  });
});

describe('nextAfter', () => {
  it('follows a daily cron across the spring DST change in its zone', () => {
    const schedule = { kind: 'recurring' as const, cron: '30 2 * * *', timezone: 'Europe/Berlin' };
    const first = new Date('2026-03-28T01:30:00Z'); // 02:30 CET
    const second = nextAfter(schedule, first, first);
    // 02:30 does not exist on 29 March in Berlin: it runs at the first valid time after the gap.
    expect(second?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(nextAfter(schedule, second!, second!)?.toISOString()).toBe('2026-03-30T00:30:00.000Z');
  });

  it('runs a daily 09:00 at 09:00 local time on both sides of the autumn change', () => {
    const schedule = { kind: 'recurring' as const, cron: '0 9 * * *', timezone: 'America/New_York' };
    const before = new Date('2026-10-31T13:00:00Z'); // 09:00 EDT
    expect(nextAfter(schedule, before, before)?.toISOString()).toBe('2026-11-01T14:00:00.000Z'); // 09:00 EST
  });

  it('does not make up missed occurrences', () => {
    const every = { kind: 'recurring' as const, every_ms: 30 * 60_000 };
    const due = new Date('2026-11-25T08:00:00Z');
    // Three hours late: the next run is the first slot after now, keeping the rhythm.
    expect(nextAfter(every, due, now)?.toISOString()).toBe('2026-11-25T12:30:00.000Z');
    const cron = { kind: 'recurring' as const, cron: '0 * * * *', timezone: 'UTC' };
    expect(nextAfter(cron, due, now)?.toISOString()).toBe('2026-11-25T13:00:00.000Z');
  });

  it('ends one-shot recalls', () => {
    expect(nextAfter({ kind: 'once', at: now.toISOString() }, now, now)).toBeNull();
    expect(nextAfter({ kind: 'immediate' }, now, now)).toBeNull();
  });
});

describe('describeSchedule', () => {
  it('says each kind in words', () => {
    expect(describeSchedule({ kind: 'recurring', every_ms: 7_200_000 }, zone)).toBe('every 2 hours');
    expect(describeSchedule({ kind: 'once', at: '2026-12-01T08:00:00.000Z' }, zone)).toBe(
      'once, at Tue, 1 Dec 2026, 09:00 CET',
    );
    expect(describeSchedule({ kind: 'recurring', cron: '0 9 * * *', timezone: 'UTC' }, zone)).toContain(
      '"0 9 * * *" (UTC)',
    );
    expect(describeSchedule({ kind: 'immediate' }, zone)).toMatch(/as soon as/);
  });
});
