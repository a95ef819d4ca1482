/**
 * What every search provider promises: a list of clean results for a query, or a
 * `ProviderFailure` saying in plain words why it gave none, so the next provider can be tried
 * and the model told why.
 */
import type { PrivatePolicy } from '../../../config/private-policy.js';
import type { SearchProviderName } from '../../../config/settings.js';
import type { ResolverFn } from '../../../machine/net/guarded-request.js';

export type { ResolverFn, SearchProviderName };

/** One result as the model reads it: plain text, entities decoded, whitespace collapsed, capped. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** Why a provider gave no answer. */
export type FailureKind =
  | 'not-configured'
  | 'unreachable'
  | 'timeout'
  | 'rate-limited'
  | 'captcha'
  | 'http-error'
  | 'bad-answer'
  | 'refused';

export class ProviderFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}

/** What a provider needs for one search besides the query. */
export interface SearchContext {
  policy: PrivatePolicy;
  resolve?: ResolverFn;
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface SearchProvider {
  name: SearchProviderName;
  /** How the provider reads in messages ("SearXNG"). */
  label: string;
  /** Why the provider cannot be used as configured (e.g. "not configured (set SEARXNG_URL)"), or undefined. */
  unconfigured(): string | undefined;
  /** Up to `limit` results; zero results is an answer. Throws ProviderFailure for anything else. */
  search(query: string, limit: number, context: SearchContext): Promise<SearchResult[]>;
}
