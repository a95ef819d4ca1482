/**
 * Place names to coordinates for the weather tool, through Open-Meteo's geocoding API.
 *
 * The API matches the name alone ("Paris, France" finds nothing), so a location with a comma is
 * split: the part before it is searched, and the rest must name the place's region or country.
 */
import { clean, getJson, isObject, type Service, shapeError, WeatherError } from './open-meteo.js';

/** A place as the geocoding API describes it (the fields the tool uses). */
export interface Place {
  name: string;
  latitude: number;
  longitude: number;
  admin1?: string;
  admin2?: string;
  country?: string;
  country_code?: string;
}

const COUNT = 5;
// A qualified name ("Springfield, Missouri") is filtered here, so ask for more candidates.
const QUALIFIED_COUNT = 30;
const OTHERS_SHOWN = 3;

const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'us',
  'u.s.': 'us',
  'u.s.a.': 'us',
  'united states of america': 'us',
  america: 'us',
  uk: 'gb',
  'u.k.': 'gb',
  britain: 'gb',
  'great britain': 'gb',
};

function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().trim();
}

/** A coordinate with at most four decimals (about 10 m). */
export function coordinate(n: number): string {
  return String(Math.round(n * 10_000) / 10_000);
}

/** "Name, region, country (lat, lon)", without repeating a region named like the place. */
export function describePlace(p: Place): string {
  const parts = [p.name];
  for (const part of [p.admin1, p.country]) if (part && !parts.includes(part)) parts.push(part);
  return `${parts.join(', ')} (${coordinate(p.latitude)}, ${coordinate(p.longitude)})`;
}

function toPlace(v: unknown): Place | undefined {
  if (!isObject(v)) return undefined;
  const { name, latitude, longitude } = v;
  if (typeof name !== 'string' || typeof latitude !== 'number' || typeof longitude !== 'number') {
    return undefined;
  }
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return undefined;
  const place: Place = { name: clean(name), latitude, longitude };
  for (const key of ['admin1', 'admin2', 'country', 'country_code'] as const) {
    const text = v[key];
    if (typeof text === 'string' && text.trim() !== '') place[key] = clean(text);
  }
  return place;
}

/** Whether every comma-separated part of `qualifier` names the place's region or country. */
function matchesQualifier(place: Place, qualifier: string): boolean {
  const fields = [place.admin1, place.admin2, place.country, place.country_code]
    .filter((f): f is string => f !== undefined)
    .map(fold);
  return qualifier
    .split(',')
    .map(fold)
    .filter((part) => part !== '')
    .every((part) => fields.includes(part) || fields.includes(COUNTRY_ALIASES[part] ?? ''));
}

/**
 * The best match for `location` and up to three other matches, in the service's order (most
 * relevant first). Throws "No place called …" when nothing matches, and the service's own
 * failures as `getJson` describes them.
 */
export async function geocode(
  location: string,
  service: Service,
  waitMs: number,
  stop: AbortSignal | undefined,
): Promise<{ best: Place; others: Place[] }> {
  const comma = location.indexOf(',');
  const name = comma < 0 ? location : location.slice(0, comma).trim();
  const qualifier = comma < 0 ? '' : location.slice(comma + 1).trim();
  if (name === '') {
    throw new WeatherError(
      `"${location}" has no place name before the comma; put it first, e.g. "Paris, France".`,
    );
  }
  const body = await getJson(
    service,
    { name, count: String(qualifier === '' ? COUNT : QUALIFIED_COUNT), language: 'en', format: 'json' },
    waitMs,
    stop,
  );
  // Open-Meteo leaves `results` out altogether when nothing matches.
  if (body.results !== undefined && !Array.isArray(body.results))
    throw shapeError(service, 'a list of results');
  const raw: unknown[] = body.results ?? [];
  const places = raw.map(toPlace).filter((p): p is Place => p !== undefined);
  if (raw.length > 0 && places.length === 0)
    throw shapeError(service, 'names and coordinates in its results');
  const matching = qualifier === '' ? places : places.filter((p) => matchesQualifier(p, qualifier));
  const [best, ...others] = matching;
  if (!best) {
    throw new WeatherError(
      `No place called "${location}" was found; try a nearby city or add the country ` +
        '(e.g. "Springfield, Missouri" or "Paris, France"), or give coordinates as "lat,lon".',
    );
  }
  return { best, others: others.slice(0, OTHERS_SHOWN) };
}
