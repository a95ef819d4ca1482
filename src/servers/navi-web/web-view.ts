/**
 * web_view: opens a page in headless Chromium and returns its readable text as Markdown, with
 * its links and, on request, a screenshot. Every request the page makes goes through the page
 * guard, so the page reaches only what Navi itself may reach. Without Chromium the page is
 * fetched plainly (no JavaScript) and the result says so. PDFs and text come back as text.
 */
import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { guardedRequest, type ResolverFn } from '../../machine/net/guarded-request.js';
import { untilAborted } from '../common/abortable.js';
import { type ShippedTool, toolError } from '../common/tool.js';
import { untrusted } from '../common/untrusted.js';
import { BrowserPool, type ChromiumStatus } from './browser.js';
import { type GuardLimits, type MainResponse, PageGuard } from './page-guard.js';
import { pdfToText } from './pdf.js';
import { decodeText, documentKind, pageMarkdown, readablePage } from './readable.js';

export type { ResolverFn };

export interface WebViewDeps {
  settings: Pick<
    Settings,
    | 'HTTP_ALLOW_PRIVATE'
    | 'CHROMIUM_PATH'
    | 'WEB_VIEW_TIMEOUT_MS'
    | 'WEB_BROWSER_IDLE_MS'
    | 'WEB_MAX_RESPONSE_BYTES'
  >;
  /** Name resolution for every request (tests map fake names here). */
  resolve?: ResolverFn;
  /** Characters of page text per call (default 20 000). */
  maxChars?: number;
}

export type WebViewTool = ShippedTool<typeof inputSchema> & {
  /** Closes the browser (server shutdown). */
  close(): Promise<void>;
  chromiumStatus(): ChromiumStatus;
};

const DEFAULT_MAX_CHARS = 20_000;
const VIEWPORT = { width: 1280, height: 800 };
/** Top-level redirects followed, by HTTP or by the page's own script. */
const MAX_NAVIGATION_REDIRECTS = 10;
/** Dialogs dismissed before a page is taken for a dialog loop and closed. */
const MAX_DIALOGS = 20;
/** A DOM past this many elements is cut, so a page of millions of nodes still reads. */
const MAX_ELEMENTS = 50_000;
const MAX_HTML_CHARS = 2_000_000;
/** Longest text kept of one document (PDF or text); the model reads it maxChars at a time. */
const MAX_TEXT_CHARS = 2_000_000;
const MAX_PDF_PAGES = 500;
const MAX_SCREENSHOT_BYTES = 3_000_000;
/** How long the `load` event and a quiet network are waited for once the document is there. */
const LOAD_WAIT_MS = 5_000;
const QUIET_MS = 500;
const QUIET_MAX_MS = 2_000;
/** Time for the screenshot and the DOM copy, after the page's own time is up. */
const EXTRACT_MS = 10_000;
/** The same for a page that never got as far as DOMContentLoaded. */
const STUCK_EXTRACT_MS = 3_000;
const CACHE_ENTRIES = 8;
const CACHE_TTL_MS = 10 * 60_000;
const FALLBACK_USER_AGENT = 'Mozilla/5.0 (compatible; Navi web_view)';

const inputSchema = {
  url: z.string().max(8192).describe('The http:// or https:// address of the page.'),
  offset: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Where to start reading, in characters: the offset a cut page names to continue from.'),
  screenshot: z
    .boolean()
    .default(false)
    .describe('Also return a PNG of the visible part of the page (1280x800), rendered in Chromium.'),
};

/** A failure the model can act on; its message is the whole result. */
class ViewError extends Error {}

/** A page read in full, before it is cut to one call's share. */
interface ViewedPage {
  url: string;
  text: string;
  /** Navi's own remarks (how it was read, what was left out), shown outside the page text. */
  notes: string[];
  screenshot?: Buffer;
}

function checkUrl(text: string): URL {
  const trimmed = text.trim();
  if (!trimmed)
    throw new ViewError('url is empty: give the full address of the page, like https://example.org/.');
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new ViewError(
      `${JSON.stringify(trimmed.slice(0, 200))} is not a URL: give the full address, starting with https:// or http://.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ViewError(
      `web_view opens http:// and https:// pages only, not ${url.protocol} URLs. To read a local file, use the file tools.`,
    );
  if (url.username || url.password)
    throw new ViewError('web_view does not open URLs with a user name or password in them (user:password@).');
  return url;
}

/** Rejects with ViewError(message) when `promise` takes longer than `ms`. */
function bounded<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ViewError(message)), Math.max(1, ms));
  });
  promise.catch(() => undefined);
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const firstLine = (err: unknown) => ((err as Error)?.message ?? String(err)).split('\n')[0]!.trim();

/** Reads a document Chromium was not given (PDF, text, a file) or one fetched without Chromium. */
async function readDocument(
  main: Omit<MainResponse, 'rendered'>,
  limit: number,
  notes: string[],
): Promise<string> {
  const kind = documentKind(main.contentType, main.body);
  const type = main.contentType?.split(';')[0]?.trim() || 'unlabelled';
  if (kind === 'pdf') {
    if (main.truncated)
      throw new ViewError(
        `${main.url} is a PDF larger than ${limit} bytes (WEB_MAX_RESPONSE_BYTES), so it was not read; raise that limit to read it.`,
      );
    const pdf = await pdfToText(main.body, { maxChars: MAX_TEXT_CHARS, maxPages: MAX_PDF_PAGES }).catch(
      (err) => {
        throw new ViewError(`${main.url}: ${firstLine(err)}`);
      },
    );
    notes.push(
      pdf.pagesRead < pdf.pages
        ? `A PDF of ${pdf.pages} pages; the text of the first ${pdf.pagesRead} was read.`
        : `A PDF of ${pdf.pages} page${pdf.pages === 1 ? '' : 's'}, read as text.`,
    );
    return `# ${pdf.title ?? 'PDF document'}\n\n${pdf.text || '(The PDF has no text layer: it may be scanned images.)'}`;
  }
  if (main.truncated) notes.push(`Only the first ${limit} bytes were read (WEB_MAX_RESPONSE_BYTES).`);
  if (kind === 'html')
    return pageMarkdown(await readablePage(decodeText(main.body, main.contentType), main.url));
  if (kind === 'text') {
    let text = decodeText(main.body, main.contentType);
    if (/json/i.test(type)) {
      try {
        text = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // Not valid JSON after all: shown as it came.
      }
    }
    notes.push(`Text of type ${type}, shown as it came.`);
    return text.slice(0, MAX_TEXT_CHARS);
  }
  throw new ViewError(
    `${main.url} is a file of type ${type} (${main.body.length}${main.truncated ? '+' : ''} bytes), not something web_view can read: it reads web pages, PDFs and text. For an image, use image_view.`,
  );
}

function statusNote(status: number, statusText: string, notes: string[]): void {
  if (status >= 400)
    notes.push(`The server answered HTTP ${status} ${statusText}: the text is its error page.`);
}

/** Copies the DOM as HTML, first cutting it down to MAX_ELEMENTS elements and MAX_HTML_CHARS characters. */
const SNAPSHOT = `(() => {
  const all = document.getElementsByTagName('*');
  const elements = all.length;
  if (elements > ${MAX_ELEMENTS}) {
    try {
      const range = document.createRange();
      range.setStartBefore(all[${MAX_ELEMENTS}]);
      range.setEndAfter(document.documentElement.lastChild);
      range.deleteContents();
    } catch (e) {}
  }
  const html = document.documentElement ? document.documentElement.outerHTML : '';
  return { elements, chars: html.length, html: html.slice(0, ${MAX_HTML_CHARS}), url: location.href };
})()`;

interface Snapshot {
  elements: number;
  chars: number;
  html: string;
  url: string;
}

const CONTEXT_OPTIONS = {
  serviceWorkers: 'block',
  acceptDownloads: false,
  viewport: VIEWPORT,
  locale: 'en-US',
  reducedMotion: 'reduce',
} as const;

/** One page being read, with the dialogs it opened. */
interface Session {
  page: Page;
  guard: PageGuard;
  deadline: number;
  timeout: number;
  /** Throws once the page has opened too many dialogs (and was closed for it). */
  checkDialogs(): void;
}

function watch(page: Page, guard: PageGuard, deadline: number, timeout: number): Session {
  let dialogs = 0;
  page.on('dialog', (dialog) => {
    dialogs++;
    void dialog.dismiss().catch(() => undefined);
    // Each dismissal lets a loop open the next one; closing the page is what ends it.
    if (dialogs === MAX_DIALOGS) void page.close().catch(() => undefined);
  });
  return {
    page,
    guard,
    deadline,
    timeout,
    checkDialogs() {
      if (dialogs >= MAX_DIALOGS)
        throw new ViewError(
          `The page kept opening dialogs (alert, confirm or prompt): web_view closed it after ${MAX_DIALOGS}. It cannot be read.`,
        );
    },
  };
}

/**
 * Opens `url` and waits for it to settle: DOMContentLoaded, then `load` and a quiet network for
 * a while. Follows the top-level redirects the guard stopped, by HTTP or by the page's own
 * script or meta refresh, each as a new navigation the guard checks again.
 */
async function navigate(session: Session, url: URL): Promise<{ navError: unknown; stillLoading: boolean }> {
  const { page, guard, deadline, timeout } = session;
  const left = () => Math.max(1, deadline - Date.now());
  let target: string | undefined = url.href;
  let hops = 0;
  let navError: unknown;
  let stillLoading = false;
  while (target) {
    navError = undefined;
    guard.takeRedirect();
    const going = page.goto(target, { waitUntil: 'domcontentloaded', timeout: left() });
    going.catch(() => undefined); // a goto overtaken by the guard's news fails unheard
    try {
      await Promise.race([going, guard.nextMainChange()]);
    } catch (err) {
      navError = err;
    }
    session.checkDialogs();
    target = undefined;
    let redirect = guard.takeRedirect();
    if (!redirect && !navError && guard.main?.rendered) {
      stillLoading = await page.waitForLoadState('load', { timeout: Math.min(left(), LOAD_WAIT_MS) }).then(
        () => false,
        () => true,
      );
      await guard.quiet(QUIET_MS, QUIET_MAX_MS);
      redirect = guard.takeRedirect();
    }
    if (!redirect) break;
    if (++hops > MAX_NAVIGATION_REDIRECTS)
      throw new ViewError(
        `The page redirected more than ${MAX_NAVIGATION_REDIRECTS} times (the last hop went from ${redirect.from} to ${redirect.to}); it cannot be read.`,
      );
    if (Date.now() >= deadline)
      throw new ViewError(`The page was still redirecting after ${seconds(timeout)} (WEB_VIEW_TIMEOUT_MS).`);
    target = redirect.to;
  }
  return { navError, stillLoading };
}

/** A PNG of the viewport, or undefined with a note saying why there is none. */
async function capture(
  page: Page,
  ms: number,
  unresponsive: string,
  notes: string[],
): Promise<Buffer | undefined> {
  let shot: Buffer;
  try {
    shot = await bounded(page.screenshot({ type: 'png', timeout: ms }), ms, unresponsive);
  } catch (err) {
    if (err instanceof ViewError) throw err;
    notes.push(`No screenshot: ${firstLine(err)}`);
    return undefined;
  }
  if (shot.length <= MAX_SCREENSHOT_BYTES) return shot;
  notes.push(
    `The screenshot was left out: at ${shot.length} bytes it is over the ${MAX_SCREENSHOT_BYTES}-byte limit.`,
  );
  return undefined;
}

/** What the guard held back from the page, in the result's words. */
function guardNotes(guard: PageGuard, limits: GuardLimits): string[] {
  const notes: string[] = [];
  if (guard.limitHit === 'requests')
    notes.push(`The page made more than ${limits.maxRequests} requests; the rest were not made.`);
  if (guard.limitHit === 'bytes')
    notes.push(
      `The page loaded more than ${limits.maxTotalBytes} bytes; its further requests were not made.`,
    );
  const n = guard.refusedCount;
  if (n > 0)
    notes.push(
      `${n} request${n === 1 ? '' : 's'} of the page ${n === 1 ? 'was' : 'were'} refused, e.g. ${guard.refusals[0]}`,
    );
  return notes;
}

/** The web_view tool: one instance per server, one browser shared by its calls. */
export function webViewTool(deps: WebViewDeps): WebViewTool {
  const { settings } = deps;
  const maxChars = deps.maxChars ?? DEFAULT_MAX_CHARS;
  const pool = new BrowserPool({
    chromiumPath: settings.CHROMIUM_PATH,
    idleMs: settings.WEB_BROWSER_IDLE_MS,
  });
  const cache = new Map<string, { page: ViewedPage; at: number }>();
  const limits: GuardLimits = {
    maxRequests: 300,
    maxTotalBytes: 4 * settings.WEB_MAX_RESPONSE_BYTES,
    maxResponseBytes: settings.WEB_MAX_RESPONSE_BYTES,
    subresourceTimeoutMs: 15_000,
    concurrency: 8,
    maxRedirects: 5,
  };

  async function render(url: URL, screenshot: boolean, signal: AbortSignal): Promise<ViewedPage | undefined> {
    const lease = await pool.lease(CONTEXT_OPTIONS, signal);
    if (!lease) return undefined;
    const stop = new AbortController();
    const onAbort = () => {
      stop.abort();
      void lease.context.close().catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    const timeout = settings.WEB_VIEW_TIMEOUT_MS;
    const deadline = Date.now() + timeout;
    let page: Page | undefined;
    const guard = new PageGuard({
      policy: settings.HTTP_ALLOW_PRIVATE,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
      limits,
      deadline,
      signal: stop.signal,
      isMainDocument: (request) =>
        page !== undefined && request.isNavigationRequest() && request.frame() === page.mainFrame(),
    });
    try {
      await guard.install(lease.context);
      page = await lease.context.newPage();
      const session = watch(page, guard, deadline, timeout);
      // Pop-ups are pages of their own, and nobody reads them.
      lease.context.on('page', (other) => {
        if (other !== session.page) void other.close().catch(() => undefined);
      });
      const { navError, stillLoading } = await navigate(session, url);

      const notes: string[] = [];
      const main = guard.main;
      if (!main) {
        const why = guard.mainError ?? firstLine(navError);
        if (/timeout|timed out/i.test(why) || (!guard.mainError && Date.now() >= deadline))
          throw new ViewError(
            `${url.href} did not load within ${seconds(timeout)} (WEB_VIEW_TIMEOUT_MS): the server answered too slowly or not at all.`,
          );
        throw new ViewError(`Could not load ${url.href}: ${why}`);
      }
      statusNote(main.status, main.statusText, notes);
      if (!main.rendered)
        return { url: main.url, text: await readDocument(main, limits.maxResponseBytes, notes), notes };

      const unresponsive = `The page did not finish loading within ${seconds(timeout)} and stopped answering (a script on it keeps it busy); it cannot be read.`;
      // A page closed for its dialogs fails what follows; the dialogs are the story to tell.
      const dialogsFirst = (err: unknown): never => {
        session.checkDialogs();
        throw err;
      };
      // A page that never reached DOMContentLoaded is likely stuck in a script: less time for it.
      const extractMs = navError ? STUCK_EXTRACT_MS : EXTRACT_MS;
      const shot = screenshot
        ? await capture(session.page, extractMs, unresponsive, notes).catch(dialogsFirst)
        : undefined;
      const snap = await takeSnapshot(session.page, extractMs, unresponsive).catch(dialogsFirst);
      session.checkDialogs();
      if (stillLoading || navError)
        notes.push(
          `The page was still loading after ${seconds(timeout)}; this is what had appeared by then.`,
        );
      if (snap.elements > MAX_ELEMENTS)
        notes.push(`The page has ${snap.elements} elements; only the first ${MAX_ELEMENTS} were read.`);
      if (snap.chars > MAX_HTML_CHARS)
        notes.push(
          `The page's HTML is ${snap.chars} characters; only the first ${MAX_HTML_CHARS} were read.`,
        );
      if (main.truncated)
        notes.push(
          `The page is larger than ${limits.maxResponseBytes} bytes (WEB_MAX_RESPONSE_BYTES); it was cut there.`,
        );
      notes.push(...guardNotes(guard, limits));
      const text = pageMarkdown(await readablePage(snap.html, snap.url));
      return { url: snap.url, text, notes, ...(shot ? { screenshot: shot } : {}) };
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
      await lease.release();
    }
  }

  async function fetchPlain(url: URL, signal: AbortSignal, reason: string): Promise<ViewedPage> {
    let response: Awaited<ReturnType<typeof guardedRequest>>;
    try {
      response = await guardedRequest(url.href, {
        policy: settings.HTTP_ALLOW_PRIVATE,
        ...(deps.resolve ? { resolve: deps.resolve } : {}),
        headers: {
          'user-agent': FALLBACK_USER_AGENT,
          accept: 'text/html,application/xhtml+xml,application/pdf;q=0.9,text/*;q=0.8,*/*;q=0.5',
        },
        maxRedirects: MAX_NAVIGATION_REDIRECTS,
        maxBytes: settings.WEB_MAX_RESPONSE_BYTES,
        onOversize: 'truncate',
        timeoutMs: settings.WEB_VIEW_TIMEOUT_MS,
        signal,
      });
    } catch (err) {
      throw new ViewError(
        `Could not load ${url.href} (fetched without Chromium: ${reason}): ${firstLine(err)}`,
      );
    }
    const notes = [
      `Chromium is not available (${reason}), so the page was fetched without running its JavaScript: text that scripts add is missing, and there is no screenshot.`,
    ];
    statusNote(response.status, response.statusText, notes);
    const main = {
      url: response.finalUrl,
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers['content-type'],
      body: response.body,
      truncated: response.truncated,
    };
    return { url: main.url, text: await readDocument(main, settings.WEB_MAX_RESPONSE_BYTES, notes), notes };
  }

  async function view(url: URL, screenshot: boolean, signal: AbortSignal): Promise<ViewedPage> {
    const rendered = await render(url, screenshot, signal);
    if (rendered) return rendered;
    return fetchPlain(url, signal, pool.status().reason ?? 'it could not be started');
  }

  function remember(key: string, page: ViewedPage): void {
    cache.delete(key);
    cache.set(key, { page: { url: page.url, text: page.text, notes: page.notes }, at: Date.now() });
    for (const old of cache.keys()) {
      if (cache.size <= CACHE_ENTRIES) break;
      cache.delete(old);
    }
  }

  return {
    name: 'web_view',
    description:
      'Opens a web page in a browser and returns its readable text as Markdown: the title, the article without menus, ads or cookie banners, and a numbered list of its links (absolute URLs; links in the text point into it as [n]). PDFs and text files come back as text. A long page is cut; the result gives the offset to continue from. screenshot: true adds a PNG of the visible part of the page.',
    inputSchema,
    annotations: { title: 'View a web page', readOnlyHint: true, openWorldHint: true },
    async handler(args, signal) {
      try {
        const url = checkUrl(args.url);
        const offset = args.offset ?? 0;
        const key = url.href;
        const cached = cache.get(key);
        let page: ViewedPage;
        if (offset > 0 && !args.screenshot && cached && Date.now() - cached.at < CACHE_TTL_MS)
          page = cached.page;
        else {
          // The call answers the moment it is cancelled; the page is closed behind it.
          page = await untilAborted(view(url, args.screenshot ?? false, signal), signal);
          if (page.text.length > maxChars) remember(key, page);
        }
        return present(page, url.href, offset, maxChars);
      } catch (err) {
        if (signal.aborted) return toolError('web_view was cancelled before the page was read.');
        if (err instanceof ViewError) return toolError(err.message);
        return toolError(`web_view failed on ${args.url}: ${firstLine(err)}`);
      }
    },
    close: async () => {
      cache.clear();
      await pool.close();
    },
    chromiumStatus: () => pool.status(),
  };
}

async function takeSnapshot(page: Page, ms: number, unresponsive: string): Promise<Snapshot> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await bounded(page.evaluate(SNAPSHOT) as Promise<Snapshot>, ms, unresponsive);
    } catch (err) {
      // The page navigated while it was being copied; copy the new one once it is there.
      if (err instanceof ViewError || attempt >= 2 || !/context was destroyed|navigat/i.test(firstLine(err)))
        throw err instanceof ViewError ? err : new ViewError(`The page could not be read: ${firstLine(err)}`);
      await page.waitForLoadState('domcontentloaded', { timeout: ms }).catch(() => undefined);
    }
  }
}

/** One call's share of the page: the part from `offset`, cut at a line end near maxChars. */
function present(page: ViewedPage, requested: string, offset: number, maxChars: number) {
  const total = page.text.length;
  if (offset > 0 && offset >= total)
    return toolError(
      `offset ${offset} is past the end of the page: it has ${total} characters. Use an offset below ${total}, or 0 to read it from the start.`,
    );
  let end = Math.min(total, offset + maxChars);
  if (end < total) {
    const lineEnd = page.text.lastIndexOf('\n', end - 1);
    if (lineEnd > offset + maxChars * 0.8) end = lineEnd + 1;
    // Never split a character written as two UTF-16 units.
    const code = page.text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
  }
  const lines = [
    `Page ${page.url}${page.url === requested ? '' : ` (opened from ${requested})`}.`,
    ...page.notes,
  ];
  if (offset > 0 || end < total) lines.push(`Characters ${offset} to ${end} of ${total}.`);
  lines.push(untrusted(page.url, page.text.slice(offset, end)));
  if (end < total)
    lines.push(
      `The page goes on: call web_view with {"url": ${JSON.stringify(requested)}, "offset": ${end}} to read the next part.`,
    );
  else if (offset > 0) lines.push('This is the end of the page.');
  const content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }> = [
    { type: 'text', text: lines.join('\n') },
  ];
  if (page.screenshot)
    content.push({ type: 'image', data: page.screenshot.toString('base64'), mimeType: 'image/png' });
  return { content };
}
