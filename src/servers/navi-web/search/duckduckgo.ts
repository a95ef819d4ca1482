/**
 * DuckDuckGo's HTML endpoint: no key, so it works out of the box, but it is a page meant for
 * browsers. Results are read from its markup (`.result__a`, `.result__snippet`), their links
 * arrive as redirects through duckduckgo.com/l/?uddg=… and are decoded to the real target, and
 * the bot check it shows automated clients ("bots use DuckDuckGo too") is recognised as such.
 */

import type { Settings } from '../../../config/settings.js';
import { parseHTML } from '../../common/parse-html.js';
import { cleanResult, firstDistinct } from './clean-text.js';
import { providerRequest } from './provider-request.js';
import { ProviderFailure, type SearchProvider, type SearchResult } from './types.js';

/** DuckDuckGo answers browsers; a client that announces itself as a script is sent the bot check at once. */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const CAPTCHA =
  'answered with its bot check (a CAPTCHA page, "bots use DuckDuckGo too") instead of results: ' +
  'it is limiting automated searches from this address; wait a while or configure SearXNG or Brave';

/**
 * The real target of a result link: `//duckduckgo.com/l/?uddg=<encoded target>` is decoded,
 * a direct http(s) link is kept, and ad links (`/y.js`) give undefined.
 */
export function resultTarget(href: string | null | undefined): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href, 'https://duckduckgo.com/');
  } catch {
    return undefined;
  }
  const onDuckDuckGo = url.hostname === 'duckduckgo.com' || url.hostname.endsWith('.duckduckgo.com');
  if (!onDuckDuckGo) return url.href;
  if (url.pathname === '/l/' || url.pathname === '/l') return url.searchParams.get('uddg') ?? undefined;
  return undefined;
}

/** Results of a DuckDuckGo HTML page; a page with neither results nor a "no results" notice is not one. */
export function parseDuckDuckGo(html: string, limit: number): SearchResult[] {
  const { document } = parseHTML(html);
  const links = [...document.querySelectorAll('.result a.result__a')];
  // The phrase alone counts only on a page without results: a result may quote it.
  const botCheck =
    document.querySelector('#challenge-form, form[action*="anomaly"], [class*="anomaly-modal"]') !== null ||
    (links.length === 0 && /bots use DuckDuckGo too/i.test(document.documentElement?.textContent ?? ''));
  if (botCheck) throw new ProviderFailure('captcha', CAPTCHA);
  const answered = links.length > 0 || document.querySelector('.no-results, #links, .serp__results') !== null;
  if (!answered)
    throw new ProviderFailure(
      'bad-answer',
      'its page has no search results in the expected layout (DuckDuckGo may have changed its page, or DUCKDUCKGO_URL is not its HTML endpoint)',
    );
  const candidates = links.map((link) => {
    const result = link.closest('.result');
    if (!result || result.classList.contains('result--ad')) return undefined;
    return cleanResult(
      {
        title: link.textContent,
        url: resultTarget(link.getAttribute('href')),
        snippet: result.querySelector('.result__snippet')?.textContent,
      },
      'plain',
    );
  });
  return firstDistinct(candidates, limit);
}

export function duckDuckGoProvider(settings: Pick<Settings, 'DUCKDUCKGO_URL'>): SearchProvider {
  return {
    name: 'duckduckgo',
    label: 'DuckDuckGo',
    unconfigured: () => undefined,
    async search(query, limit, context) {
      const endpoint = new URL(settings.DUCKDUCKGO_URL);
      const response = await providerRequest(
        {
          url: endpoint.href,
          method: 'POST',
          body: new URLSearchParams({ q: query, b: '' }).toString(),
          headers: {
            'user-agent': BROWSER_USER_AGENT,
            accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
            'accept-language': 'en-US,en;q=0.9',
            'content-type': 'application/x-www-form-urlencoded',
            referer: `${endpoint.origin}/`,
          },
          setting: 'DUCKDUCKGO_URL',
        },
        context,
      );
      // DuckDuckGo answers 202 with its bot check when it throttles a client.
      if (response.status === 202) throw new ProviderFailure('captcha', CAPTCHA);
      return parseDuckDuckGo(response.body.toString('utf8'), limit);
    },
  };
}
