/**
 * What the model reads back from a search: the results as a numbered list inside an untrusted
 * block (titles and snippets are written by whoever made the pages), which provider answered,
 * and why earlier ones did not; or, when none answered, every reason and what to configure.
 */
import { untrusted } from '../../common/untrusted.js';
import type { FailureReport } from './run-search.js';
import type { SearchProvider, SearchProviderName, SearchResult } from './types.js';

function failureLines(failures: readonly FailureReport[]): string[] {
  return failures.map((f) => `- ${f.label} (${f.provider}): ${f.reason}`);
}

/** The numbered list: title, URL and snippet of each result. */
export function resultList(results: readonly SearchResult[]): string {
  return results
    .map((r, i) =>
      [`${i + 1}. ${r.title}`, `   ${r.url}`, ...(r.snippet ? [`   ${r.snippet}`] : [])].join('\n'),
    )
    .join('\n');
}

/** The answer of the provider that answered, with the providers passed over before it. */
export function answerText(
  query: string,
  provider: SearchProvider,
  results: readonly SearchResult[],
  failures: readonly FailureReport[],
): string {
  const lines: string[] = [];
  if (results.length === 0) {
    lines.push(`${provider.label} found no results for ${JSON.stringify(query)}. Try other or fewer words.`);
  } else {
    const count = results.length === 1 ? '1 result' : `${results.length} results`;
    lines.push(`Web search for ${JSON.stringify(query)}: ${count} from ${provider.label}.`);
  }
  if (failures.length > 0) lines.push(`Tried before ${provider.label}:`, ...failureLines(failures));
  if (results.length > 0) {
    lines.push(untrusted(provider.name, resultList(results)));
    lines.push(
      'Open a result with web_view to read the page itself; snippets are short and may be out of date.',
    );
  }
  return lines.join('\n');
}

const SETUP: Record<SearchProviderName, string> = {
  searxng:
    'SEARXNG_URL: the address of a SearXNG instance with the JSON format enabled (json in search.formats of its settings.yml); a self-hosted instance is the most reliable provider.',
  duckduckgo:
    'DUCKDUCKGO_URL: DuckDuckGo needs no key, but it may show automated clients a bot check for a while.',
  brave: 'BRAVE_API_KEY: a Brave Search API key (there is a free plan).',
};

/** The error when no provider answered: each reason, then what the user can configure. */
export function failureText(
  query: string,
  failures: readonly FailureReport[],
  enabled: readonly SearchProviderName[],
  forced: boolean,
): string {
  const lines = [
    forced
      ? `Web search for ${JSON.stringify(query)} failed: the provider asked for did not answer. Search without "provider" to try every configured one.`
      : `Web search for ${JSON.stringify(query)} failed: no search provider answered.`,
    ...failureLines(failures),
    '',
    'What can be configured (settings in Navi’s environment or .env; tell the user, you cannot change them):',
  ];
  const unconfigured = failures.filter((f) => f.kind === 'not-configured').map((f) => f.provider);
  for (const name of unconfigured) lines.push(`- ${SETUP[name]}`);
  const missing = (['searxng', 'duckduckgo', 'brave'] as const).filter((name) => !enabled.includes(name));
  if (missing.length > 0)
    lines.push(`- Add ${missing.join(' or ')} to WEB_SEARCH_PROVIDERS to have it tried as well.`);
  lines.push(`- WEB_SEARCH_PROVIDERS sets which providers are tried, in order (now: ${enabled.join(',')}).`);
  lines.push('If a provider was only rate-limited or timed out, searching again later may work.');
  return lines.join('\n');
}
