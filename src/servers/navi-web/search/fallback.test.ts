/**
 * How web_search falls back: every way a provider can fail, named with its reason while the
 * next provider answers, and the one error when none does. Fake engines on 127.0.0.1.
 */
import { createServer } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type EngineMode,
  type FakeSearchEngines,
  type SearchEngine,
  startFakeSearchEngines,
} from '../../../../test/support/fake-search-engines.js';
import { type SettingName, testSettings } from '../../../config/settings.js';
import { webSearchTool } from '../web-search.js';
import type { ResolverFn } from './types.js';

let engines: FakeSearchEngines;
beforeAll(async () => {
  engines = await startFakeSearchEngines();
});
afterAll(() => engines.close());
afterEach(() => engines.reset());

function tool(overrides: Partial<Record<SettingName, string>> = {}, deps: { resolve?: ResolverFn } = {}) {
  return webSearchTool({
    settings: testSettings({ ...engines.env(), BRAVE_API_KEY: engines.braveKey, ...overrides }),
    timeoutMs: 500,
    ...deps,
  });
}

async function search(t: ReturnType<typeof tool>, args: Record<string, unknown> = { query: 'rust' }) {
  return t.handler(z.object(t.inputSchema).parse(args), new AbortController().signal);
}

const text = (result: CallToolResult) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

interface Structured {
  provider: string | null;
  failures: { provider: string; kind: string; reason: string }[];
}
const structured = (result: CallToolResult) => result.structuredContent as unknown as Structured;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const LABELS: Record<SearchEngine, string> = {
  searxng: 'SearXNG',
  duckduckgo: 'DuckDuckGo',
  brave: 'Brave Search',
};

const CASES: [SearchEngine, EngineMode, string, RegExp][] = [
  ['searxng', '500', 'http-error', /^HTTP 500 Internal Server Error$/],
  [
    'searxng',
    '429',
    'rate-limited',
    /^rate-limited \(HTTP 429\) \(the instance's limiter refused: .*server\.limiter/,
  ],
  ['searxng', 'captcha', 'rate-limited', /^rate-limited \(HTTP 429\)/],
  ['searxng', 'garbage', 'bad-answer', /^its answer is not JSON \(\d+ bytes of application\/json\)/],
  ['searxng', 'shapeless', 'bad-answer', /no "results" list: is SEARXNG_URL a SearXNG instance\?/],
  [
    'searxng',
    'engines-down',
    'bad-answer',
    /^none of its engines answered \(google: CAPTCHA; duckduckgo: timeout/,
  ],
  ['searxng', 'hang', 'timeout', /^no answer within 0\.5 s from http:\/\/127\.0\.0\.1:\d+ \(SEARXNG_URL\)$/],
  ['duckduckgo', 'captcha', 'captcha', /bot check \(a CAPTCHA page, "bots use DuckDuckGo too"\)/],
  ['duckduckgo', '429', 'rate-limited', /^rate-limited \(HTTP 429\): .*configure another provider$/],
  ['duckduckgo', '500', 'http-error', /^HTTP 500 Internal Server Error$/],
  ['duckduckgo', 'garbage', 'bad-answer', /no search results in the expected layout/],
  ['duckduckgo', 'shapeless', 'bad-answer', /no search results in the expected layout/],
  ['duckduckgo', 'hang', 'timeout', /^no answer within 0\.5 s .*\(DUCKDUCKGO_URL\)$/],
  ['brave', 'captcha', 'rate-limited', /^rate-limited \(HTTP 429\) \(RATE_LIMITED\)/],
  ['brave', '500', 'http-error', /^HTTP 500/],
  ['brave', 'garbage', 'bad-answer', /^its answer is not JSON/],
  ['brave', 'shapeless', 'bad-answer', /no "web\.results" list: is BRAVE_SEARCH_URL right\?/],
  ['brave', 'hang', 'timeout', /^no answer within 0\.5 s .*\(BRAVE_SEARCH_URL\)$/],
];

describe('web_search: each failure is named and the next provider tried', () => {
  it.each(CASES)('%s answering %s: %s', async (engine, mode, kind, reason) => {
    const next: SearchEngine = engine === 'duckduckgo' ? 'brave' : 'duckduckgo';
    engines.setMode(engine, mode);
    const result = await search(tool({ WEB_SEARCH_PROVIDERS: `${engine},${next}` }));
    expect(result.isError).toBeFalsy();
    const { provider, failures } = structured(result);
    expect(provider).toBe(next);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ provider: engine, kind });
    expect(failures[0]?.reason).toMatch(reason);
    const out = text(result);
    expect(out).toContain(
      `Tried before ${LABELS[next]}:\n- ${LABELS[engine]} (${engine}): ${failures[0]?.reason}`,
    );
    expect(engines.requests.map((r) => r.engine)).toEqual([engine, next]);
  });

  it('names a provider that cannot be reached', async () => {
    const port = await closedPort();
    const result = await search(tool({ SEARXNG_URL: `http://127.0.0.1:${port}` }));
    expect(structured(result).failures[0]).toEqual({
      provider: 'searxng',
      kind: 'unreachable',
      reason: `unreachable at http://127.0.0.1:${port} (SEARXNG_URL): ECONNREFUSED`,
    });
    expect(structured(result).provider).toBe('duckduckgo');
  });

  it('names a host that does not resolve, and uses the resolver it is given', async () => {
    const port = new URL(engines.url).port;
    const resolve: ResolverFn = async (host) => {
      if (host === 'searx.home.arpa') return [{ address: '127.0.0.1', family: 4 }];
      throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    };
    const settings = {
      SEARXNG_URL: `http://searx.home.arpa:${port}/searxng`,
      DUCKDUCKGO_URL: `http://nowhere.invalid:${port}/duckduckgo/html/`,
      WEB_SEARCH_PROVIDERS: 'duckduckgo,searxng',
    };
    const result = await search(tool(settings, { resolve }));
    expect(structured(result).provider).toBe('searxng');
    expect(structured(result).failures[0]).toMatchObject({ provider: 'duckduckgo', kind: 'unreachable' });
    expect(structured(result).failures[0]?.reason).toMatch(
      /^unreachable at http:\/\/nowhere\.invalid:\d+ \(DUCKDUCKGO_URL\): Could not resolve nowhere\.invalid/,
    );
  });

  it('names a refused Brave key', async () => {
    const result = await search(
      tool({ WEB_SEARCH_PROVIDERS: 'brave,duckduckgo', BRAVE_API_KEY: 'wrong-key' }),
    );
    expect(structured(result).failures[0]).toEqual({
      provider: 'brave',
      kind: 'http-error',
      reason:
        'HTTP 422 Unprocessable Entity (SUBSCRIPTION_TOKEN_INVALID: check BRAVE_API_KEY, the key from your Brave Search API dashboard)',
    });
    expect(text(result)).not.toContain('wrong-key');
  });

  it('names an answer larger than WEB_MAX_RESPONSE_BYTES', async () => {
    engines.setMode('searxng', 'huge');
    const result = await search(tool({ WEB_MAX_RESPONSE_BYTES: '100000' }));
    expect(structured(result).failures[0]).toEqual({
      provider: 'searxng',
      kind: 'refused',
      reason: 'its answer is larger than WEB_MAX_RESPONSE_BYTES (100000 bytes)',
    });
    expect(structured(result).provider).toBe('duckduckgo');
  });

  it('names unconfigured providers without asking them', async () => {
    const result = await search(
      tool({ SEARXNG_URL: '', BRAVE_API_KEY: '', WEB_SEARCH_PROVIDERS: 'searxng,brave,duckduckgo' }),
    );
    expect(structured(result).provider).toBe('duckduckgo');
    expect(text(result)).toContain(
      [
        'Tried before DuckDuckGo:',
        '- SearXNG (searxng): not configured (set SEARXNG_URL)',
        '- Brave Search (brave): not configured (set BRAVE_API_KEY)',
      ].join('\n'),
    );
    expect(engines.requests.map((r) => r.engine)).toEqual(['duckduckgo']);
  });
});

describe('web_search: when no provider answers', () => {
  it('gives one error listing why each failed and what to configure', async () => {
    engines.setMode('searxng', '500');
    engines.setMode('duckduckgo', 'captcha');
    engines.setMode('brave', '429');
    const result = await search(tool(), { query: 'rust async' });
    expect(result.isError).toBe(true);
    const out = text(result);
    expect(out.split('\n').slice(0, 4)).toEqual([
      'Web search for "rust async" failed: no search provider answered.',
      '- SearXNG (searxng): HTTP 500 Internal Server Error',
      expect.stringMatching(/^- DuckDuckGo \(duckduckgo\): answered with its bot check/),
      expect.stringMatching(/^- Brave Search \(brave\): rate-limited \(HTTP 429\) \(RATE_LIMITED\)/),
    ]);
    expect(out).toContain(
      'WEB_SEARCH_PROVIDERS sets which providers are tried, in order (now: searxng,duckduckgo,brave).',
    );
    expect(structured(result)).toMatchObject({ provider: null });
    expect(structured(result).failures.map((f) => f.kind)).toEqual(['http-error', 'captcha', 'rate-limited']);
    expect(engines.requests.map((r) => r.engine)).toEqual(['searxng', 'duckduckgo', 'brave']);
  });

  it('says which settings to fill in when providers are not configured', async () => {
    engines.setMode('duckduckgo', 'captcha');
    const result = await search(tool({ SEARXNG_URL: '', BRAVE_API_KEY: '' }));
    expect(result.isError).toBe(true);
    const out = text(result);
    expect(out).toContain('- SearXNG (searxng): not configured (set SEARXNG_URL)');
    expect(out).toContain('- Brave Search (brave): not configured (set BRAVE_API_KEY)');
    expect(out).toContain('- SEARXNG_URL: the address of a SearXNG instance with the JSON format enabled');
    expect(out).toContain('- BRAVE_API_KEY: a Brave Search API key');
    expect(out).toContain('tell the user, you cannot change them');
  });

  it('suggests adding the providers left out of WEB_SEARCH_PROVIDERS', async () => {
    engines.setMode('duckduckgo', 'hang');
    const out = text(await search(tool({ WEB_SEARCH_PROVIDERS: 'duckduckgo' })));
    expect(out).toContain('- DuckDuckGo (duckduckgo): no answer within 0.5 s');
    expect(out).toContain('- Add searxng or brave to WEB_SEARCH_PROVIDERS to have it tried as well.');
  });
});
