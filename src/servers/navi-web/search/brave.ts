/**
 * Brave Search API (`web.results[].{title,url,description}`), authenticated with the user's key
 * in the X-Subscription-Token header. Its descriptions carry markup (<strong>) and entities.
 */
import type { Settings } from '../../../config/settings.js';
import type { GuardedResponse } from '../../../machine/net/guarded-request.js';
import { cleanResult, firstDistinct } from './clean-text.js';
import { jsonBody, providerRequest } from './provider-request.js';
import { ProviderFailure, type SearchProvider, type SearchResult } from './types.js';

/** Brave returns at most this many web results per request. */
const MAX_COUNT = 20;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Results of a Brave answer. An answer of type "search" without a `web` section is Brave's way
 * of saying it found no web results; anything else without `web.results` is not Brave's format.
 */
export function parseBrave(body: unknown, limit: number): SearchResult[] {
  if (!isObject(body))
    throw new ProviderFailure(
      'bad-answer',
      'its answer is not a Brave Search object: is BRAVE_SEARCH_URL right?',
    );
  if (body.web === undefined && body.type === 'search') return [];
  if (!isObject(body.web) || !Array.isArray(body.web.results))
    throw new ProviderFailure(
      'bad-answer',
      'its answer has no "web.results" list: is BRAVE_SEARCH_URL right?',
    );
  return firstDistinct(
    body.web.results.map((r) =>
      isObject(r) ? cleanResult({ title: r.title, url: r.url, snippet: r.description }, 'html') : undefined,
    ),
    limit,
  );
}

/** The error code of Brave's ErrorResponse (e.g. SUBSCRIPTION_TOKEN_INVALID), with what to do about it. */
export function braveErrorHint(response: GuardedResponse): string | undefined {
  let code: string | undefined;
  try {
    const body: unknown = JSON.parse(response.body.toString('utf8'));
    const raw = isObject(body) && isObject(body.error) ? body.error.code : undefined;
    if (typeof raw === 'string' && /^[A-Z0-9_]{1,60}$/.test(raw)) code = raw;
  } catch {
    // Not Brave's JSON error: the status alone has to do.
  }
  const keyRefused = response.status === 401 || response.status === 403 || /TOKEN|KEY/.test(code ?? '');
  if (keyRefused && response.status !== 429)
    return `${code ?? 'key refused'}: check BRAVE_API_KEY, the key from your Brave Search API dashboard`;
  return code;
}

export function braveProvider(
  settings: Pick<Settings, 'BRAVE_SEARCH_URL' | 'BRAVE_API_KEY'>,
): SearchProvider {
  return {
    name: 'brave',
    label: 'Brave Search',
    unconfigured: () => (settings.BRAVE_API_KEY.trim() ? undefined : 'not configured (set BRAVE_API_KEY)'),
    async search(query, limit, context) {
      const url = new URL(settings.BRAVE_SEARCH_URL);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(Math.min(limit, MAX_COUNT)));
      const response = await providerRequest(
        {
          url: url.href,
          headers: { accept: 'application/json', 'x-subscription-token': settings.BRAVE_API_KEY.trim() },
          setting: 'BRAVE_SEARCH_URL',
        },
        context,
        braveErrorHint,
      );
      return parseBrave(jsonBody(response), limit);
    },
  };
}
