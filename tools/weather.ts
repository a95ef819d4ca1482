/**
 * User tool: current weather and a daily forecast from Open-Meteo (no API key). A place name is
 * looked up with Open-Meteo's geocoding API first; "lat,lon" skips that step. Its helpers live
 * in tools/weather/ (a folder, so the loader does not take them for tools).
 *
 * Settings come from the call's context, and their defaults apply when the tool runs outside
 * Navi: WEATHER_GEOCODING_URL, WEATHER_FORECAST_URL and WEATHER_UNITS. `auto` units follow the
 * measurement locale (LC_ALL, else LC_MEASUREMENT, else LANG): the United States, Liberia and
 * Myanmar (en_US, es_US, en_LR, my_MM…) get imperial units, everywhere else metric.
 */
import { loadSettings, type Settings } from '../src/config/settings.js';
import { forecastLines, forecastQuery, type UnitSystem } from './weather/forecast.js';
import { coordinate, describePlace, geocode } from './weather/geocoding.js';
import { clean, getJson, type Service, WeatherError } from './weather/open-meteo.js';

export const name = 'weather';

// No `risk` export, so calls are logged like any undeclared user tool: `{ network: true }` would
// make them silent but would also put the tool into group:web, which server_admin enables
// wholesale. Profiles that fit name it instead (smart_home; secretary has "*").

export const description =
  'Current weather and a daily forecast (1 to 16 days) for a place. Give a city, optionally with ' +
  'its region or country ("Springfield, Missouri", "Paris, France"), or coordinates as "lat,lon". ' +
  'Use it whenever the user asks about weather, temperature, rain, snow or wind.';

const MAX_LOCATION = 200;
const MAX_DAYS = 16;

export const parameters = {
  type: 'object',
  properties: {
    location: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_LOCATION,
      description:
        'City (optionally ", region" or ", country") or coordinates "lat,lon", e.g. "52.52,13.41".',
    },
    days: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_DAYS,
      default: 3,
      description: 'Days of forecast, today included (1 to 16).',
    },
    units: {
      type: 'string',
      enum: ['metric', 'imperial'],
      description: "Leave out to use Navi's setting (WEATHER_UNITS).",
    },
  },
  required: ['location'],
  additionalProperties: false,
};

type WeatherSettings = Pick<
  Settings,
  'WEATHER_GEOCODING_URL' | 'WEATHER_FORECAST_URL' | 'WEATHER_UNITS' | 'TOOL_TIMEOUT_MS'
>;

/** What the tool reads from its context: a ToolContext fits, and so does nothing at all. */
interface WeatherContext {
  signal?: AbortSignal;
  settings?: Partial<WeatherSettings>;
}

// Outside Navi (no settings in the context) the tool runs on Navi's own defaults.
const DEFAULTS: WeatherSettings = loadSettings({});

const MAX_WAIT_MS = 15_000;

/** Territories whose locales measure in Fahrenheit and inches (LC_MEASUREMENT 2 in glibc). */
const IMPERIAL_TERRITORIES = new Set(['US', 'LR', 'MM']);

/** The units of `auto`: those of the measurement locale's territory, as the C library reads it. */
function unitsFromLocale(env: NodeJS.ProcessEnv): UnitSystem {
  const locale = env.LC_ALL || env.LC_MEASUREMENT || env.LANG || '';
  const territory = /^[a-z]{2,3}_([a-z]{2})\b/i.exec(locale)?.[1]?.toUpperCase();
  return territory !== undefined && IMPERIAL_TERRITORIES.has(territory) ? 'imperial' : 'metric';
}

function settingsOf(ctx: WeatherContext | undefined): WeatherSettings {
  const given = Object.entries(ctx?.settings ?? {}).filter(([, v]) => v !== undefined);
  return { ...DEFAULTS, ...Object.fromEntries(given) };
}

function parseCoordinates(location: string): { latitude: number; longitude: number } | undefined {
  const m = /^([+-]?\d{1,3}(?:\.\d+)?)\s*,\s*([+-]?\d{1,3}(?:\.\d+)?)$/.exec(location);
  if (!m) return undefined;
  const latitude = Number(m[1]);
  const longitude = Number(m[2]);
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
    throw new WeatherError(
      `"${location}" is not a place on Earth: latitude goes from -90 to 90 and longitude from -180 to 180 ` +
        '(give "lat,lon", e.g. "52.52,13.41").',
    );
  }
  return { latitude, longitude };
}

// Navi's executor has already checked the arguments against `parameters`; a tool run outside
// Navi has not, so the same limits are checked again here.
function checkArguments(params: { location?: unknown; days?: unknown; units?: unknown }): {
  location: string;
  days: number;
  units: UnitSystem | undefined;
} {
  const hint = 'give a city (e.g. "Berlin" or "Paris, France") or coordinates as "lat,lon".';
  if (typeof params.location !== 'string') throw new WeatherError(`"location" is missing; ${hint}`);
  const location = clean(params.location, Number.POSITIVE_INFINITY);
  if (location === '') throw new WeatherError(`"location" is empty; ${hint}`);
  if (location.length > MAX_LOCATION) {
    throw new WeatherError(
      `"location" is ${location.length} characters long; give just a place name or "lat,lon" ` +
        `(at most ${MAX_LOCATION} characters).`,
    );
  }
  const days = params.days ?? 3;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
    throw new WeatherError(
      `"days" must be a whole number from 1 to ${MAX_DAYS}; got ${JSON.stringify(days)}.`,
    );
  }
  const units = params.units;
  if (units !== undefined && units !== 'metric' && units !== 'imperial') {
    throw new WeatherError(`"units" must be "metric" or "imperial"; got ${JSON.stringify(units)}.`);
  }
  return { location, days, units };
}

/**
 * Returns the weather for `params.location` as a few plain lines: the place (and, for an
 * ambiguous name, the other matches), the current conditions, one line per forecast day and
 * the units. Throws an Error that says what went wrong and what to do for bad arguments, an
 * unknown place and every failure of the two services.
 */
export async function execute(
  params: { location: string; days?: number; units?: UnitSystem },
  ctx?: WeatherContext,
): Promise<string> {
  const args = checkArguments(params);
  const settings = settingsOf(ctx);
  const stop = ctx?.signal;
  if (stop?.aborted) throw new WeatherError('The weather request was stopped.');
  const units: UnitSystem =
    args.units ?? (settings.WEATHER_UNITS === 'auto' ? unitsFromLocale(process.env) : settings.WEATHER_UNITS);
  // Two requests in a row, each allowed 40% of the tool's time limit: a slow service ends in
  // this tool's own message, which names it, rather than in the executor's generic timeout.
  const waitMs = Math.max(1, Math.min(MAX_WAIT_MS, Math.floor(settings.TOOL_TIMEOUT_MS * 0.4)));

  const lines: string[] = [];
  let point = parseCoordinates(args.location);
  if (point) {
    lines.push(`Weather at ${coordinate(point.latitude)}, ${coordinate(point.longitude)}`);
  } else {
    const geocoding: Service = {
      label: 'geocoding',
      setting: 'WEATHER_GEOCODING_URL',
      url: settings.WEATHER_GEOCODING_URL,
      instead: 'Or give the place as "lat,lon" to skip the name lookup.',
    };
    const { best, others } = await geocode(args.location, geocoding, waitMs, stop);
    point = best;
    lines.push(`Weather for ${describePlace(best)}`);
    if (others.length > 0) {
      lines.push(
        `Best of several places called "${args.location}"; others: ${others.map(describePlace).join('; ')}. ` +
          'Add the region or country to pick another.',
      );
    }
  }

  const forecast: Service = {
    label: 'forecast',
    setting: 'WEATHER_FORECAST_URL',
    url: settings.WEATHER_FORECAST_URL,
  };
  const query = forecastQuery(point.latitude, point.longitude, args.days, units);
  const body = await getJson(forecast, query, waitMs, stop);
  if (typeof body.timezone === 'string' && body.timezone.trim() !== '') {
    lines[0] = `${lines[0]}, time zone ${clean(body.timezone, 60)}`;
  }
  lines.push(...forecastLines(body, units, forecast));
  return lines.join('\n');
}
