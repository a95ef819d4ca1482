/**
 * Durations as people and small models write them: "90s", "10 minutes", "1h30m", "2 days",
 * ISO 8601 ("PT10M", "P1D"), or a number of seconds. Months and years are left out on
 * purpose: their length varies, and a recurring calendar rhythm belongs in a cron expression.
 */

const UNIT_MS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

const ISO =
  /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;
const PART = /(\d+(?:\.\d+)?)\s*([a-z]+)/gi;

/** Milliseconds of `value`, or an error saying which forms are understood. */
export function parseDuration(value: string | number): { ms: number } | { error: string } {
  const hint = 'write it like "90s", "10m", "1h30m", "2 days" or "PT10M", or give a number of seconds';
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0
      ? { ms: Math.round(value * 1000) }
      : { error: `${value} is not a usable number of seconds; ${hint}` };
  }
  const text = value.trim().replace(/^in\s+/i, '');
  if (/^\d+(?:\.\d+)?$/.test(text)) return { ms: Math.round(Number(text) * 1000) };
  const iso = ISO.exec(text);
  if (iso && text.length > 1 && !/T$/i.test(text)) {
    const [w, d, h, m, s] = iso.slice(1).map((n) => (n === undefined ? 0 : Number(n)));
    return {
      ms: Math.round(
        ((((w ?? 0) * 7 + (d ?? 0)) * 24 + (h ?? 0)) * 60 + (m ?? 0)) * 60_000 + (s ?? 0) * 1000,
      ),
    };
  }
  let total = 0;
  let consumed = '';
  for (const match of text.matchAll(PART)) {
    const unit = UNIT_MS[match[2]!.toLowerCase()];
    if (unit === undefined) return { error: `"${match[2]}" in "${value}" is not a unit I know; ${hint}` };
    total += Number(match[1]) * unit;
    consumed += match[0];
  }
  // Everything but spaces, commas and "and" must have been read as number-unit pairs.
  const rest = text.replace(PART, '').replace(/\b(and)\b|[\s,]+/gi, '');
  if (consumed === '' || rest !== '') return { error: `"${value}" is not a duration I can read; ${hint}` };
  return { ms: Math.round(total) };
}

/** "2 hours 5 minutes", "40 seconds", "3 days 4 hours": the two largest units, for people. */
export function formatDuration(ms: number): string {
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1000],
  ];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  const parts: string[] = [];
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 && parts.length < 2) {
      parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
      rest -= n * size;
    } else if (parts.length > 0) break;
  }
  return parts.length > 0 ? parts.join(' ') : 'less than a second';
}
