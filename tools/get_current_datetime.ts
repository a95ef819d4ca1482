/** User tool: the current date and time, in the server's time zone or a named one. */
export const name = 'get_current_datetime';

export const description =
  'Get the current date, time, weekday and time zone. Use it whenever the answer depends on "now" ' +
  '(today, tomorrow, how long until…). Optionally for another IANA time zone such as "Europe/Berlin".';

export const parameters = {
  type: 'object',
  properties: {
    timezone: {
      type: 'string',
      description: 'IANA time zone, e.g. "America/New_York". Default: the server\'s.',
    },
  },
  additionalProperties: false,
};

export async function execute(params: { timezone?: string }): Promise<string> {
  const now = new Date();
  const timeZone = params.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  let formatted: string;
  try {
    formatted = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'long',
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'short',
    }).format(now);
  } catch {
    throw new Error(`Unknown time zone "${timeZone}"; use an IANA name such as "Europe/Paris".`);
  }
  return `${formatted} (time zone ${timeZone}; ISO ${now.toISOString()})`;
}
