/**
 * What a fetched document is, and the readable Markdown of an HTML page: Readability picks the
 * article out of the page (menus, ads and cookie banners stay behind), Turndown writes it as
 * Markdown, and every link becomes a number into one list of absolute URLs, so a long URL costs
 * the model its characters once. The DOM libraries load on first use: the idle server stays small.
 */
import { parseHTML } from '../common/parse-html.js';
import { charsetOf, isHtmlType, isTextType, mediaType } from './media-type.js';

export type DocumentKind = 'html' | 'pdf' | 'text' | 'binary';

/** Whether the bytes read as text: no NUL and few control characters in the first 4 KB. */
function looksLikeText(body: Buffer): boolean {
  const head = body.subarray(0, 4096);
  let control = 0;
  for (const byte of head) {
    if (byte === 0) return false;
    if (byte < 9 || (byte > 13 && byte < 32)) control++;
  }
  return control <= head.length / 100;
}

/** The kind of a response, from its content type, or from its first bytes when the type is missing or vague. */
export function documentKind(contentType: string | undefined, body: Buffer): DocumentKind {
  const { type } = mediaType(contentType);
  // Servers label PDFs wrongly often enough that the magic number wins.
  if (type === 'application/pdf' || body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (isHtmlType(type)) return 'html';
  if (isTextType(type)) return 'text';
  if (type === '' || type === 'application/octet-stream' || type === 'unknown/unknown') {
    if (body.subarray(0, 1024).includes('%PDF-')) return 'pdf';
    if (!looksLikeText(body)) return 'binary';
    const start = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
    return /^(<!doctype html|<html|<head|<body|<!--|<meta|<title|<p>|<div)/.test(start) ? 'html' : 'text';
  }
  return 'binary';
}

/** The body as text, in the character set its headers or its own <meta> name (UTF-8 otherwise). */
export function decodeText(body: Buffer, contentType?: string): string {
  let decoder: TextDecoder;
  try {
    // A page fetched without Chromium may name its encoding only in a <meta>, whatever its type.
    decoder = new TextDecoder(charsetOf(body, mediaType(contentType).charset, true));
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(body);
}

interface PageLink {
  url: string;
  text: string;
}

/** What readableMarkdown keeps of a page. */
export interface ReadablePage {
  title: string;
  /** The article as Markdown; links read `text [n]`, n numbering `links`. */
  markdown: string;
  links: PageLink[];
  /** False when Readability found no article and the whole body was converted instead. */
  article: boolean;
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The page's address for relative links: its <base href> when it has one. */
function baseOf(document: Document, pageUrl: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

function absolute(href: string | null, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The page's http(s) links in document order, once each, without anchors into the page itself. */
function collectLinks(document: Document, base: string, pageUrl: string, max: number): PageLink[] {
  const here = pageUrl.replace(/#.*$/, '');
  const seen = new Set<string>();
  const links: PageLink[] = [];
  for (const a of document.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href');
    if (href?.trim().startsWith('#')) continue;
    const url = absolute(href, base);
    if (!url || url.replace(/#.*$/, '') === here || seen.has(url)) continue;
    seen.add(url);
    const text =
      squash(a.textContent ?? '') || squash(a.getAttribute('aria-label') ?? a.getAttribute('title') ?? '');
    links.push({ url, text: text.length > 80 ? `${text.slice(0, 79)}…` : text });
    if (links.length >= max) break;
  }
  return links;
}

/** Elements with nothing to read in them. */
const DROPPED_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'svg',
  'canvas',
  'object',
  'embed',
]);

async function markdownWriter(base: string, numbers: Map<string, number>) {
  const { default: TurndownService } = await import('turndown');
  const writer = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
  });
  writer.remove((node) => DROPPED_TAGS.has(node.nodeName.toLowerCase()));
  writer.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const alt = squash((node as HTMLElement).getAttribute('alt') ?? '');
      return alt ? `[image: ${alt}]` : '';
    },
  });
  writer.addRule('link', {
    filter: 'a',
    replacement: (content, node) => {
      const text = content.trim();
      if (!text) return '';
      const url = absolute((node as HTMLElement).getAttribute('href'), base);
      const n = url === undefined ? undefined : numbers.get(url);
      return n === undefined ? text : `${text} [${n}]`;
    },
  });
  return writer;
}

/** What may come before a page's body when the page leaves out <head> and <body>, as HTML allows. */
const HEAD_PART =
  /^(?:\s+|<!doctype[^>]*>|<!--[\s\S]*?-->|<\/?html[^>]*>|<\/?head[^>]*>|<title[^>]*>[\s\S]*?<\/title>|<(?:meta|link|base)\b[^>]*>|<style[^>]*>[\s\S]*?<\/style>|<script[^>]*>[\s\S]*?<\/script>)*/i;
const STRUCTURE_TAGS = /<!doctype[^>]*>|<\/?html[^>]*>|<\/?head[^>]*>|<\/?body[^>]*>/gi;

/**
 * `html` with explicit <html>, <head> and <body>: linkedom does not add them the way a browser
 * does, and without them a page's title or body goes missing. Chromium's DOM always has them;
 * a page fetched without Chromium may not.
 */
function wellFormed(html: string): string {
  if (/<html[\s>]/i.test(html) && /<body[\s>]/i.test(html)) return html;
  const head = HEAD_PART.exec(html)?.[0] ?? '';
  const strip = (part: string) => part.replace(STRUCTURE_TAGS, '');
  return `<!doctype html><html><head>${strip(head)}</head><body>${strip(html.slice(head.length))}</body></html>`;
}

function parse(html: string): Document {
  // linkedom's document is close enough to the DOM for Readability; its types are its own.
  return parseHTML(wellFormed(html)).document as unknown as Document;
}

/**
 * The readable part of `html` (a page at `pageUrl`) as Markdown, with up to `maxLinks` of the
 * page's links. Pages with no article (a list, a form, a short note) are converted whole.
 */
export async function readablePage(html: string, pageUrl: string, maxLinks = 100): Promise<ReadablePage> {
  const { Readability } = await import('@mozilla/readability');
  const document = parse(html);
  const base = baseOf(document, pageUrl);
  const links = collectLinks(document, base, pageUrl, maxLinks);
  const numbers = new Map(links.map((link, i) => [link.url, i + 1]));
  const pageTitle = squash(document.title ?? '');
  const writer = await markdownWriter(base, numbers);

  let parsed: ReturnType<InstanceType<typeof Readability<string>>['parse']> = null;
  try {
    parsed = new Readability<string>(document, { charThreshold: 200 }).parse();
  } catch {
    parsed = null; // a page Readability cannot walk is converted whole below
  }
  if (parsed?.content && squash(parsed.textContent ?? '').length >= 100) {
    return {
      title: squash(parsed.title ?? '') || pageTitle,
      markdown: writer.turndown(parsed.content).trim(),
      links,
      article: true,
    };
  }
  // Readability changed the document it read; start again from the HTML.
  const fresh = parse(html);
  const body = fresh.body?.innerHTML ?? html;
  return { title: pageTitle, markdown: writer.turndown(body).trim(), links, article: false };
}

/** The page as one Markdown text: title, article, then the numbered list of links. */
export function pageMarkdown(page: ReadablePage): string {
  const parts = [`# ${page.title || '(untitled page)'}`, page.markdown || '(The page has no readable text.)'];
  if (page.links.length > 0) {
    const list = page.links.map((link, i) => `${i + 1}. ${link.text || '(no text)'}: ${link.url}`);
    parts.push(`## Links\n${list.join('\n')}`);
  }
  return parts.join('\n\n');
}
