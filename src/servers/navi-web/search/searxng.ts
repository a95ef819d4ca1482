/**
 * SearXNG through its JSON API (`/search?q=…&format=json`), usually the user's own instance:
 * no key, no tracking, and results from the engines the instance is set up with.
 */
import type { Settings } from '../../../config/settings.js';
import { cleanResult, collapseWhitespace, firstDistinct } from './clean-text.js';
import { jsonBody, providerRequest } from './provider-request.js';
import { ProviderFailure, type SearchProvider, type SearchResult } from './types.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Engine names and their errors as SearXNG lists them, kept to harmless characters. */
function unresponsive(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.slice(0, 8).map((entry) => {
    const [engine, reason] = Array.isArray(entry) ? entry : [entry, ''];
    const clean = (v: unknown) =>
      collapseWhitespace(String(v ?? ''))
        .replace(/[^\w .:/-]/g, '')
        .slice(0, 40);
    return reason ? `${clean(engine)}: ${clean(reason)}` : clean(engine);
  });
}

/**
 * Results of a SearXNG JSON answer. An answer with no results because every engine behind the
 * instance failed is a failure (the next provider may do better), not an empty answer.
 */
export function parseSearxng(body: unknown, limit: number): SearchResult[] {
  if (!isObject(body) || !Array.isArray(body.results))
    throw new ProviderFailure(
      'bad-answer',
      'its answer has no "results" list: is SEARXNG_URL a SearXNG instance?',
    );
  const results = firstDistinct(
    body.results.map((r) =>
      isObject(r) ? cleanResult({ title: r.title, url: r.url, snippet: r.content }, 'text') : undefined,
    ),
    limit,
  );
  const failed = unresponsive(body.unresponsive_engines);
  if (results.length === 0 && failed.length > 0)
    throw new ProviderFailure('bad-answer', `none of its engines answered (${failed.join('; ')})`);
  return results;
}

/** The search endpoint under SEARXNG_URL, whether the user gave the instance's root or its /search. */
export function searxngEndpoint(base: string, query: string): string {
  const url = new URL(base);
  if (!url.pathname.replace(/\/+$/, '').endsWith('/search'))
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url.href;
}

const HINTS: Record<number, string> = {
  403: 'the instance does not serve format=json: add json to search.formats in its settings.yml',
  429: "the instance's limiter refused: for a private instance, set server.limiter to false in its settings.yml",
};

export function searxngProvider(settings: Pick<Settings, 'SEARXNG_URL'>): SearchProvider {
  return {
    name: 'searxng',
    label: 'SearXNG',
    unconfigured: () => (settings.SEARXNG_URL ? undefined : 'not configured (set SEARXNG_URL)'),
    async search(query, limit, context) {
      const response = await providerRequest(
        {
          url: searxngEndpoint(settings.SEARXNG_URL, query),
          headers: { accept: 'application/json' },
          setting: 'SEARXNG_URL',
        },
        context,
        (r) => HINTS[r.status],
      );
      return parseSearxng(jsonBody(response), limit);
    },
  };
}
