import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSearxng, searxngEndpoint } from './searxng.js';
import { ProviderFailure } from './types.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../../../test/fixtures/search/${name}`, import.meta.url), 'utf8'));

function failure(run: () => unknown): ProviderFailure {
  try {
    run();
  } catch (err) {
    if (err instanceof ProviderFailure) return err;
    throw err;
  }
  throw new Error('expected a ProviderFailure');
}

describe('searxngEndpoint', () => {
  it('adds /search with the query and format=json to the instance address', () => {
    const url = new URL(searxngEndpoint('http://searx.local:8888', 'a & b?'));
    expect(url.pathname).toBe('/search');
    expect(url.searchParams.get('q')).toBe('a & b?');
    expect(url.searchParams.get('format')).toBe('json');
  });

  it('keeps a sub-path and does not add /search twice', () => {
    expect(new URL(searxngEndpoint('https://home.example/searx', 'x')).pathname).toBe('/searx/search');
    expect(new URL(searxngEndpoint('https://home.example/searx/search', 'x')).pathname).toBe('/searx/search');
  });
});

describe('parseSearxng', () => {
  it('reads results without duplicates or non-web links, entities decoded', () => {
    const results = parseSearxng(fixture('searxng-ok.json'), 20);
    expect(results.map((r) => r.url)).toEqual([
      'https://tokio.rs/',
      'https://rust-lang.github.io/async-book/',
      'https://docs.rs/async-std/latest/async_std/',
      'https://github.com/smol-rs/smol',
      'https://en.wikipedia.org/wiki/Async/await',
      'https://blog.rust-lang.org/2019/11/07/Async-await-stable.html',
    ]);
    expect(results[1]?.title).toBe('Asynchronous Programming in Rust & the async book');
    expect(results[1]?.snippet).toBe(
      "The async book explains how async/await works; it's maintained by the Rust Async Working Group. If a<b then a<b stays.",
    );
  });

  it('stops at the limit', () => {
    expect(parseSearxng(fixture('searxng-ok.json'), 3)).toHaveLength(3);
  });

  it('reads an answer without results as zero results', () => {
    expect(parseSearxng(fixture('searxng-empty.json'), 5)).toEqual([]);
  });

  it('fails when no result came back because every engine behind the instance failed', () => {
    const err = failure(() => parseSearxng(fixture('searxng-engines-down.json'), 5));
    expect(err.kind).toBe('bad-answer');
    expect(err.message).toBe(
      'none of its engines answered (google: CAPTCHA; duckduckgo: timeout; brave: too many requests)',
    );
  });

  it('fails on JSON that is not a SearXNG answer', () => {
    for (const body of [null, [], 'text', { status: 'ok' }, { results: 'nope' }]) {
      const err = failure(() => parseSearxng(body, 5));
      expect(err.kind).toBe('bad-answer');
      expect(err.message).toMatch(/no "results" list/);
    }
  });

  it('keeps only harmless characters of engine names it repeats', () => {
    const err = failure(() =>
      parseSearxng({ results: [], unresponsive_engines: [['evil<<<engine>>>', 'say "hi"\nnow']] }, 5),
    );
    expect(err.message).toBe('none of its engines answered (evilengine: say hi now)');
  });
});
