/** Context provider: the current date, time and time zone, so the agent never guesses "now". */
export const name = 'Current date and time';

export async function provide(): Promise<string> {
  const now = new Date();
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const local = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    dateStyle: 'full',
    timeStyle: 'long',
  }).format(now);
  return `${local} (time zone ${timeZone}).`;
}
