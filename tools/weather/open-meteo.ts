/**
 * One GET to an Open-Meteo endpoint for the weather tool: JSON back, or an Error whose message
 * names the service and says what to do. The endpoints come from the user's settings and are
 * trusted, so they are fetched directly, but every answer is bounded in size and time.
 */

/** A JSON object as parsed; fields are checked where they are read. */
export type Json = Record<string, unknown>;

/** One of the two Open-Meteo APIs, as the messages name it. */
export interface Service {
  /** "geocoding" or "forecast". */
  label: string;
  /** The setting that holds `url`, named in messages about a wrong endpoint. */
  setting: 'WEATHER_GEOCODING_URL' | 'WEATHER_FORECAST_URL';
  url: string;
  /** Said after a failure of this service: what the model can do instead, if anything. */
  instead?: string;
}

// A 16-day forecast is a few kilobytes; anything near this is not Open-Meteo answering.
const MAX_RESPONSE_BYTES = 1_000_000;

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Text from a service or the user, made safe for one line of output and cut at `max`. */
export function clean(text: string, max = 100): string {
  const oneLine = text
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

/**
 * A failure the tool foresaw (an unknown place, a service down). Its message is the whole story,
 * so it carries no stack: the executor appends a user tool's stack to what the model reads,
 * and frames of this file would only distract a small model from the advice.
 */
export class WeatherError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WeatherError';
    this.stack = '';
  }
}

/** The message for an answer that is JSON but not what `service` sends: it lacks `what`. */
export function shapeError(service: Service, what: string): WeatherError {
  return new WeatherError(
    `The Open-Meteo ${service.label} service at ${service.url} answered without ${what}. ` +
      `Check ${service.setting}: it should be Open-Meteo's ${service.label} API.`,
  );
}

class TooLarge extends Error {}

function also(service: Service): string {
  return service.instead ? ` ${service.instead}` : '';
}

/**
 * GETs `service.url` with `query` and returns the parsed JSON object. Gives up after `waitMs`
 * or when `stop` aborts. Every failure (unreachable, too slow, HTTP error, HTML, not JSON, too
 * large, an `{"error": true}` answer) throws an Error naming the service and what to do.
 */
export async function getJson(
  service: Service,
  query: Record<string, string>,
  waitMs: number,
  stop: AbortSignal | undefined,
): Promise<Json> {
  const who = `The Open-Meteo ${service.label} service at ${service.url}`;
  const fix = `Check ${service.setting}: it should be Open-Meteo's ${service.label} API`;
  const timeout = AbortSignal.timeout(waitMs);
  const signal = stop ? AbortSignal.any([stop, timeout]) : timeout;
  let status: number;
  let type: string;
  let body: string;
  try {
    const res = await fetch(`${service.url}?${new URLSearchParams(query)}`, {
      signal,
      headers: { accept: 'application/json' },
    });
    status = res.status;
    type = res.headers.get('content-type') ?? '';
    body = await readBounded(res, `${who} sent more than ${MAX_RESPONSE_BYTES / 1_000_000} MB. ${fix}.`);
  } catch (err) {
    if (stop?.aborted) throw new WeatherError('The weather request was stopped.');
    if (timeout.aborted) {
      throw new WeatherError(
        `${who} did not answer within ${Math.ceil(waitMs / 1000)} s. Try again in a minute.${also(service)}`,
      );
    }
    if (err instanceof TooLarge) throw new WeatherError(err.message);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new WeatherError(
      `${who} could not be reached (${clean(String(reason))}). Check the network and ` +
        `${service.setting}.${also(service)}`,
    );
  }
  const looksHtml = /html/i.test(type) || /^\s*</.test(body);
  let parsed: unknown;
  try {
    parsed = looksHtml ? undefined : JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  // Open-Meteo explains refusals as {"error": true, "reason": "…"}.
  const reason =
    isObject(parsed) && typeof parsed.reason === 'string' ? `: ${clean(parsed.reason, 200)}` : '';
  if (status === 429) {
    throw new WeatherError(
      `${who} refused the request: too many requests (HTTP 429${reason}). Wait a minute before asking again.`,
    );
  }
  if (status >= 500) {
    throw new WeatherError(
      `${who} failed (HTTP ${status}${reason}). It is probably down for a moment; try again in a few ` +
        `minutes.${also(service)}`,
    );
  }
  if (status >= 400) throw new WeatherError(`${who} rejected the request (HTTP ${status}${reason}). ${fix}.`);
  if (status !== 200) throw new WeatherError(`${who} answered HTTP ${status} instead of 200. ${fix}.`);
  if (looksHtml) throw new WeatherError(`${who} answered with an HTML page instead of JSON. ${fix}.`);
  if (!isObject(parsed))
    throw new WeatherError(`${who} answered with something that is not a JSON object. ${fix}.`);
  if (parsed.error === true) throw new WeatherError(`${who} reported an error${reason}. ${fix}.`);
  return parsed;
}

async function readBounded(res: Response, tooLarge: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw new TooLarge(tooLarge);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      throw new TooLarge(tooLarge);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
