import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDuckDuckGo, resultTarget } from './duckduckgo.js';
import { ProviderFailure } from './types.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../../../../test/fixtures/search/${name}`, import.meta.url), 'utf8');

function failure(run: () => unknown): ProviderFailure {
  try {
    run();
  } catch (err) {
    if (err instanceof ProviderFailure) return err;
    throw err;
  }
  throw new Error('expected a ProviderFailure');
}

describe('resultTarget', () => {
  it('decodes the uddg redirect to the real target, query string included', () => {
    const href = '//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D%25C3%25A9&rut=abc';
    expect(resultTarget(href)).toBe('https://example.com/a?b=1&c=%C3%A9');
  });

  it('keeps a direct link and drops ad links and DuckDuckGo pages', () => {
    expect(resultTarget('https://example.org/x')).toBe('https://example.org/x');
    expect(resultTarget('https://duckduckgo.com/y.js?ad_domain=ads.example&u3=x')).toBeUndefined();
    expect(resultTarget('/html/?q=next')).toBeUndefined();
    expect(resultTarget('//duckduckgo.com/l/?rut=no-target')).toBeUndefined();
    expect(resultTarget(null)).toBeUndefined();
  });
});

describe('parseDuckDuckGo', () => {
  it('reads titles, decoded links and snippets, without the ad, in page order', () => {
    const results = parseDuckDuckGo(fixture('duckduckgo-ok.html'), 20);
    expect(results.map((r) => r.url)).toEqual([
      'https://tokio.rs/',
      'https://rust-lang.github.io/async-book/01_getting_started/01_chapter.html?lang=en&x=1',
      'https://docs.rs/async-std/latest/async_std/',
      'https://github.com/smol-rs/smol',
      'https://en.wikipedia.org/wiki/Async/await',
      'https://news.example.org/bots',
    ]);
    expect(results[0]).toEqual({
      title: 'Tokio - An asynchronous Rust runtime',
      url: 'https://tokio.rs/',
      snippet:
        'Tokio is an event-driven, non-blocking I/O platform for writing asynchronous applications with the Rust programming language.',
    });
    expect(results.some((r) => /Learn Rust Fast|Sponsored/.test(r.title + r.snippet))).toBe(false);
  });

  it('decodes entities and collapses whitespace in titles and snippets', () => {
    const second = parseDuckDuckGo(fixture('duckduckgo-ok.html'), 20)[1];
    expect(second?.title).toBe('Asynchronous Programming in Rust & the async book');
    expect(second?.snippet).toBe("It's the Rust team's guide to async/await — futures, executors & tasks.");
  });

  it('stops at the limit', () => {
    expect(parseDuckDuckGo(fixture('duckduckgo-ok.html'), 2)).toHaveLength(2);
  });

  it('reads the no-results page as zero results, not as a failure', () => {
    expect(parseDuckDuckGo(fixture('duckduckgo-empty.html'), 5)).toEqual([]);
  });

  it('recognises the bot-check page', () => {
    const err = failure(() => parseDuckDuckGo(fixture('duckduckgo-anomaly.html'), 5));
    expect(err.kind).toBe('captcha');
    expect(err.message).toMatch(/bot check/);
  });

  it('does not take a result quoting the bot check for the bot check itself', () => {
    const results = parseDuckDuckGo(fixture('duckduckgo-ok.html'), 20);
    expect(results.at(-1)?.snippet).toContain('bots use DuckDuckGo too');
  });

  it('fails on a page without the results layout', () => {
    for (const page of ['<html><body><h1>It works!</h1></body></html>', '', '\u0000\u0001<<{ garbage']) {
      const err = failure(() => parseDuckDuckGo(page, 5));
      expect(err.kind).toBe('bad-answer');
      expect(err.message).toMatch(/expected layout/);
    }
  });
});
