/**
 * Tries providers one after another until one answers. Every provider that does not answer is
 * kept with its reason, so the model (and the user) can see why a later one was used, or why
 * none was.
 */
import {
  type FailureKind,
  ProviderFailure,
  type SearchContext,
  type SearchProvider,
  type SearchProviderName,
  type SearchResult,
} from './types.js';

export interface FailureReport {
  provider: SearchProviderName;
  label: string;
  kind: FailureKind;
  reason: string;
}

export type SearchOutcome =
  | { answered: true; provider: SearchProvider; results: SearchResult[]; failures: FailureReport[] }
  | { answered: false; failures: FailureReport[] };

function report(provider: SearchProvider, kind: FailureKind, reason: string): FailureReport {
  return { provider: provider.name, label: provider.label, kind, reason };
}

/**
 * Searches with each provider in order and returns the first answer (zero results included).
 * Throws only when `context.signal` aborts: a cancelled search does not go on to the next provider.
 */
export async function searchInOrder(
  providers: readonly SearchProvider[],
  query: string,
  limit: number,
  context: SearchContext,
): Promise<SearchOutcome> {
  const failures: FailureReport[] = [];
  for (const provider of providers) {
    context.signal.throwIfAborted();
    const unconfigured = provider.unconfigured();
    if (unconfigured) {
      failures.push(report(provider, 'not-configured', unconfigured));
      continue;
    }
    try {
      const results = await provider.search(query, limit, context);
      return { answered: true, provider, results, failures };
    } catch (err) {
      if (context.signal.aborted) throw err;
      if (err instanceof ProviderFailure) failures.push(report(provider, err.kind, err.message));
      // A page that breaks the parser is the provider's odd answer, not a reason to stop searching.
      else
        failures.push(
          report(provider, 'bad-answer', `its answer could not be read (${String(err).slice(0, 200)})`),
        );
    }
  }
  return { answered: false, failures };
}
