/** Context provider: the current date, time and time zone, so the agent never guesses "now". */
export const name = 'Current date and time';

/**
 * Building a date formatter costs about a hundred times what formatting with one does, and this
 * runs before every LLM call: one formatter is kept per time zone setting (TZ), built again only
 * when that changes.
 */
let cached: { tz: string | undefined; format: Intl.DateTimeFormat; timeZone: string } | undefined;

export async function provide(): Promise<string> {
  const tz = process.env.TZ;
  if (!cached || cached.tz !== tz) {
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const format = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' });
    cached = { tz, format, timeZone };
  }
  return `${cached.format.format(new Date())} (time zone ${cached.timeZone}).`;
}
