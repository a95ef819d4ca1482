/**
 * The forecast request of the weather tool and the plain text it makes of the answer: current
 * conditions on one line, then one line a day, with WMO weather codes in words.
 */
import { clean, isObject, type Json, type Service, shapeError, WeatherError } from './open-meteo.js';

export type UnitSystem = 'metric' | 'imperial';

const CURRENT = [
  'temperature_2m',
  'apparent_temperature',
  'relative_humidity_2m',
  'precipitation',
  'weather_code',
  'wind_speed_10m',
  'wind_direction_10m',
  'wind_gusts_10m',
];
const DAILY = [
  'weather_code',
  'temperature_2m_max',
  'temperature_2m_min',
  'precipitation_sum',
  'precipitation_probability_max',
  'wind_speed_10m_max',
  'sunrise',
  'sunset',
];

const UNIT_PARAMS: Record<UnitSystem, Record<string, string>> = {
  metric: { temperature_unit: 'celsius', wind_speed_unit: 'kmh', precipitation_unit: 'mm' },
  imperial: { temperature_unit: 'fahrenheit', wind_speed_unit: 'mph', precipitation_unit: 'inch' },
};
// Used only when the answer does not say which units it is in.
const UNIT_LABELS: Record<UnitSystem, { temp: string; wind: string; rain: string }> = {
  metric: { temp: '°C', wind: 'km/h', rain: 'mm' },
  imperial: { temp: '°F', wind: 'mph', rain: 'inch' },
};

/** WMO weather interpretation codes, as Open-Meteo documents them. */
const WMO: Record<number, string> = {
  0: 'clear sky',
  1: 'mainly clear',
  2: 'partly cloudy',
  3: 'overcast',
  45: 'fog',
  48: 'freezing fog',
  51: 'light drizzle',
  53: 'drizzle',
  55: 'dense drizzle',
  56: 'light freezing drizzle',
  57: 'dense freezing drizzle',
  61: 'light rain',
  63: 'rain',
  65: 'heavy rain',
  66: 'light freezing rain',
  67: 'heavy freezing rain',
  71: 'light snow',
  73: 'snow',
  75: 'heavy snow',
  77: 'snow grains',
  80: 'light rain showers',
  81: 'rain showers',
  82: 'violent rain showers',
  85: 'light snow showers',
  86: 'heavy snow showers',
  95: 'thunderstorm',
  96: 'thunderstorm with light hail',
  99: 'thunderstorm with heavy hail',
};

/** The query of Open-Meteo's forecast API for `days` days at a point, in `units`. */
export function forecastQuery(
  latitude: number,
  longitude: number,
  days: number,
  units: UnitSystem,
): Record<string, string> {
  return {
    latitude: String(latitude),
    longitude: String(longitude),
    current: CURRENT.join(','),
    daily: DAILY.join(','),
    timezone: 'auto',
    forecast_days: String(days),
    ...UNIT_PARAMS[units],
  };
}

function numberAt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function round(n: number, decimals = 1): string {
  const scale = 10 ** decimals;
  return String(Math.round(n * scale) / scale);
}

function compass(degrees: number): string {
  const points = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
  return points[Math.round((((degrees % 360) + 360) % 360) / 45) % 8] ?? 'N';
}

function condition(code: number | undefined): string | undefined {
  if (code === undefined) return undefined;
  return WMO[code] ?? `weather code ${code}`;
}

function clock(iso: unknown): string | undefined {
  return typeof iso === 'string' ? /T(\d{2}:\d{2})/.exec(iso)?.[1] : undefined;
}

function weekday(date: string): string {
  const d = new Date(`${date}T12:00:00Z`);
  if (Number.isNaN(d.getTime())) return '';
  return `${new Intl.DateTimeFormat('en', { weekday: 'short', timeZone: 'UTC' }).format(d)} `;
}

/** The unit the service says it used, written the way people read it. */
function unitLabel(units: unknown, key: string, fallback: string): string {
  const u = isObject(units) ? units[key] : undefined;
  if (typeof u !== 'string' || u.trim() === '') return fallback;
  return u === 'mp/h' ? 'mph' : clean(u, 10);
}

function nowLine(current: Json, time: string, labels: { temp: string; wind: string; rain: string }) {
  const { temp, wind, rain } = labels;
  const parts: string[] = [];
  const code = condition(numberAt(current.weather_code));
  if (code) parts.push(code);
  const t = numberAt(current.temperature_2m);
  if (t !== undefined) parts.push(`${round(t)}${temp}`);
  const feels = numberAt(current.apparent_temperature);
  if (feels !== undefined) parts.push(`feels like ${round(feels)}${temp}`);
  const humidity = numberAt(current.relative_humidity_2m);
  if (humidity !== undefined) parts.push(`humidity ${round(humidity)}%`);
  const speed = numberAt(current.wind_speed_10m);
  if (speed !== undefined) {
    const from = numberAt(current.wind_direction_10m);
    const gusts = numberAt(current.wind_gusts_10m);
    parts.push(
      `wind ${round(speed)} ${wind}${from === undefined ? '' : ` from ${compass(from)}`}` +
        (gusts === undefined ? '' : ` (gusts ${round(gusts)} ${wind})`),
    );
  }
  const precipitation = numberAt(current.precipitation);
  if (precipitation !== undefined) parts.push(`precipitation ${round(precipitation, 2)} ${rain}`);
  return parts.length === 0
    ? undefined
    : `Now (${clean(time.replace('T', ' '), 20)} local time): ${parts.join(', ')}`;
}

/**
 * The forecast answer as lines of text: "Now (…): …", "Forecast:", one line a day, "Units: …".
 * Throws an Error naming the service when the answer lacks current conditions or days, or its
 * daily series do not match its days.
 */
export function forecastLines(body: Json, units: UnitSystem, service: Service): string[] {
  const { current, daily } = body;
  if (!isObject(current) || typeof current.time !== 'string') throw shapeError(service, 'current conditions');
  if (!isObject(daily) || !Array.isArray(daily.time)) throw shapeError(service, 'a daily forecast');
  const days: unknown[] = daily.time;
  if (days.length === 0) {
    throw new WeatherError(
      `The Open-Meteo ${service.label} service at ${service.url} returned no forecast days. Try again later.`,
    );
  }
  if (!days.every((d) => typeof d === 'string')) throw shapeError(service, 'dates for its days');
  const fallback = UNIT_LABELS[units];
  const labels = {
    temp: unitLabel(body.current_units, 'temperature_2m', fallback.temp),
    wind: unitLabel(body.current_units, 'wind_speed_10m', fallback.wind),
    rain: unitLabel(body.current_units, 'precipitation', fallback.rain),
  };
  const now = nowLine(current, current.time, labels);
  if (now === undefined) throw shapeError(service, 'any current values');

  const series = (key: string): unknown[] => {
    const values = daily[key];
    if (values === undefined) return [];
    if (!Array.isArray(values) || values.length !== days.length) {
      throw shapeError(service, 'daily values matching its days');
    }
    return values;
  };
  const dailyTemp = unitLabel(body.daily_units, 'temperature_2m_max', labels.temp);
  const dailyRain = unitLabel(body.daily_units, 'precipitation_sum', labels.rain);
  const dailyWind = unitLabel(body.daily_units, 'wind_speed_10m_max', labels.wind);
  const codes = series('weather_code');
  const highs = series('temperature_2m_max');
  const lows = series('temperature_2m_min');
  const sums = series('precipitation_sum');
  const chances = series('precipitation_probability_max');
  const winds = series('wind_speed_10m_max');
  const sunrises = series('sunrise');
  const sunsets = series('sunset');

  const lines = [now, 'Forecast:'];
  days.forEach((day, i) => {
    const date = clean(String(day), 20);
    const parts: string[] = [];
    const c = condition(numberAt(codes[i]));
    if (c) parts.push(c);
    const low = numberAt(lows[i]);
    const high = numberAt(highs[i]);
    if (low !== undefined && high !== undefined) parts.push(`${round(low)} to ${round(high)}${dailyTemp}`);
    const sum = numberAt(sums[i]);
    const chance = numberAt(chances[i]);
    if (sum !== undefined) {
      parts.push(
        `precipitation ${round(sum, 2)} ${dailyRain}${chance === undefined ? '' : ` (${chance}% chance)`}`,
      );
    }
    const w = numberAt(winds[i]);
    if (w !== undefined) parts.push(`wind up to ${round(w)} ${dailyWind}`);
    const up = clock(sunrises[i]);
    const down = clock(sunsets[i]);
    if (up && down) parts.push(`sunrise ${up}, sunset ${down}`);
    lines.push(`${weekday(date)}${date}: ${parts.length > 0 ? parts.join(', ') : 'no data'}`);
  });
  lines.push(`Units: ${units} (${labels.temp}, ${labels.wind}, ${labels.rain})`);
  return lines;
}
