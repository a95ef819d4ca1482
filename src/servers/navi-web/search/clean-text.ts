/**
 * Turns what search engines send (HTML fragments, entities, runs of whitespace, URLs of any
 * scheme) into short plain text the model can read, whatever the size of the input.
 */
import { parseHTML } from '../../common/parse-html.js';
import type { SearchResult } from './types.js';

export const TITLE_CHARS = 200;
export const SNIPPET_CHARS = 400;
export const URL_CHARS = 2000;

/** Markup is parsed from at most this much of a field: a multi-megabyte snippet costs no more than a short one. */
const PARSE_FACTOR = 20;

/** Collapses every run of whitespace (including non-breaking and zero-width spaces) to one space. */
export function collapseWhitespace(text: string): string {
  return text
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

/** Cuts `text` to at most `max` characters, marking the cut with an ellipsis, never splitting a surrogate pair. */
export function cap(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

/**
 * How a field arrives: `html` is an HTML fragment (tags dropped, scripts and styles with their
 * content, entities decoded); `text` is text in which only entities are decoded, so "a<b" stays
 * as written; `plain` is text already decoded (read from a parsed page).
 */
export type FieldFormat = 'html' | 'text' | 'plain';

/** Plain text of a field, whitespace collapsed, at most `max` characters. */
export function fieldText(raw: unknown, max: number, format: FieldFormat): string {
  if (typeof raw !== 'string' || raw.length === 0) return '';
  const source = raw.slice(0, max * PARSE_FACTOR);
  if (format === 'plain' || !/[<&]/.test(source)) return cap(collapseWhitespace(source), max);
  const fragment = format === 'html' ? source : source.replaceAll('<', '&lt;');
  const { document } = parseHTML('<!doctype html><html><body></body></html>');
  const holder = document.createElement('div');
  holder.innerHTML = fragment;
  for (const hidden of holder.querySelectorAll('script, style, noscript, template')) hidden.remove();
  return cap(collapseWhitespace(holder.textContent ?? ''), max);
}

/** The URL if it is an absolute http(s) URL, normalised; undefined otherwise (javascript:, relative…). */
export function webUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const text = url.href;
  return text.length <= URL_CHARS ? text : undefined;
}

/** A result from raw fields, or undefined when it has no usable URL. A missing title falls back to the URL. */
export function cleanResult(
  raw: { title: unknown; url: unknown; snippet: unknown },
  format: FieldFormat,
): SearchResult | undefined {
  const url = webUrl(raw.url);
  if (!url) return undefined;
  const title = fieldText(raw.title, TITLE_CHARS, format) || cap(url, TITLE_CHARS);
  return { title, url, snippet: fieldText(raw.snippet, SNIPPET_CHARS, format) };
}

/** Results without repeated URLs, at most `limit`. */
export function firstDistinct(results: Iterable<SearchResult | undefined>, limit: number): SearchResult[] {
  const seen = new Set<string>();
  const out: SearchResult[] = [];
  for (const result of results) {
    if (out.length >= limit) break;
    if (!result || seen.has(result.url)) continue;
    seen.add(result.url);
    out.push(result);
  }
  return out;
}
