/**
 * Every request a page makes in Chromium is answered by Navi, never by Chromium's own network
 * stack: the context routes all URLs here, and each one is made by `guardedRequest` (which
 * refuses private destinations the policy does not admit) and handed back with `route.fulfill`.
 *
 * Playwright does not route the hops of a redirect it was handed, it lets Chromium fetch them
 * itself; so no redirect is ever handed to it. A sub-resource's redirects are followed inside
 * `guardedRequest`, each hop checked. A redirect of the top-level document is not followed
 * here at all: the navigation is stopped and its target recorded, and the caller navigates
 * there anew, which routes (and checks) it like the first.
 *
 * A call has budgets: requests, bytes and time. Past them the page's requests fail, so a page
 * that loads forever cannot keep the call alive.
 */
import type { BrowserContext, Request, Route } from 'playwright-core';
import type { PrivatePolicy } from '../../config/private-policy.js';
import {
  type GuardedRequestOptions,
  type GuardedResponse,
  guardedRequest,
  type HttpMethod,
  RequestRefusedError,
  RequestTimeoutError,
} from '../../machine/net/guarded-request.js';
import { documentKind } from './readable.js';

export interface GuardLimits {
  /** Requests a page may make in one call, the document included. */
  maxRequests: number;
  /** Body bytes over all of them. */
  maxTotalBytes: number;
  /** Body bytes of one response (WEB_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  /** Time a sub-resource may take (until the call ends, at most); the document may use all the call has left. */
  subresourceTimeoutMs: number;
  /** Requests made at the same time; the others wait their turn. */
  concurrency: number;
  /** Redirects a sub-resource may follow. */
  maxRedirects: number;
}

export interface PageGuardOptions {
  policy: PrivatePolicy;
  resolve?: GuardedRequestOptions['resolve'];
  limits: GuardLimits;
  /** Epoch ms at which the call's time is up. */
  deadline: number;
  /** Aborts every request in flight (the call ended or was cancelled). */
  signal: AbortSignal;
  /** Whether `request` loads the top-level document of the page being read. */
  isMainDocument(request: Request): boolean;
}

/** The top-level document as it was fetched. */
export interface MainResponse {
  url: string;
  status: number;
  statusText: string;
  contentType: string | undefined;
  body: Buffer;
  truncated: boolean;
  /** Whether Chromium was given the document; other kinds are read by the caller. */
  rendered: boolean;
}

const ALLOWED_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
/** Streams and extras a reading needs none of: they would only hold the call open or cost bytes. */
const SKIPPED_TYPES = new Set(['media', 'eventsource', 'websocket', 'manifest', 'texttrack', 'ping']);
/** Request headers that belong to Chromium's own connection, not to the request. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
]);
/** Response headers that describe the original transfer, which the fulfilled answer no longer is. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'alt-svc',
]);
const MAX_REFUSALS_KEPT = 5;

/** Where a URL points, without the path and query a page could fill with words for the model. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an unreadable URL';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function responseHeaders(headers: GuardedResponse['headers'], main: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name)) continue;
    // A page is to be read, not saved.
    if (main && name === 'content-disposition') continue;
    // Playwright splits set-cookie on newlines into separate headers.
    out[name] = Array.isArray(value) ? value.join('\n') : value;
  }
  return out;
}

export class PageGuard {
  requests = 0;
  bytes = 0;
  refusedCount = 0;
  /** The first few refusal messages, for the result's notes. */
  readonly refusals: string[] = [];
  /** Which budget ran out, when one did. */
  limitHit: 'requests' | 'bytes' | undefined;
  /** The last top-level document fetched. */
  main: MainResponse | undefined;
  /** Why the last top-level document could not be fetched. */
  mainError: string | undefined;
  /** Where the top-level document redirected to, waiting for the caller to navigate there. */
  private redirect: { from: string; to: string } | undefined;
  private mainChanged: (() => void) | undefined;
  private inFlight = 0;
  private lastActivity = Date.now();
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: PageGuardOptions) {}

  /** Routes every request and WebSocket of `context` through the guard. */
  async install(context: BrowserContext): Promise<void> {
    await context.route('**/*', (route) => this.handle(route));
    await context.routeWebSocket(/.*/, (ws) => {
      this.refuse(
        `Refused: the page opened a WebSocket to ${origin(ws.url())}; web_view does not open WebSockets.`,
      );
      void ws.close({ code: 1008, reason: 'Navi does not open WebSockets' }).catch(() => undefined);
    });
  }

  /** The top-level redirect waiting to be followed, if any; the caller follows it (or gives up). */
  takeRedirect(): { from: string; to: string } | undefined {
    const redirect = this.redirect;
    this.redirect = undefined;
    return redirect;
  }

  /**
   * Resolves when the top-level document next redirects or fails. A navigation the page's own
   * script started and the guard stopped is one Playwright's `goto` may wait on for ever.
   */
  nextMainChange(): Promise<void> {
    return new Promise((resolve) => {
      this.mainChanged = resolve;
    });
  }

  /** Resolves once no request has been in flight for `quietMs`, or after `maxMs` at most. */
  async quiet(quietMs: number, maxMs: number): Promise<void> {
    const until = Math.min(Date.now() + maxMs, this.options.deadline);
    while (Date.now() < until && !this.options.signal.aborted) {
      if (this.inFlight === 0 && Date.now() - this.lastActivity >= quietMs) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The tab now shows Chromium's error page, not the document fetched before: forget that one. */
  private mainFailed(message: string): void {
    this.main = undefined;
    this.mainError = message;
    this.signalMainChange();
  }

  private signalMainChange(): void {
    this.mainChanged?.();
    this.mainChanged = undefined;
  }

  private refuse(message: string): void {
    this.refusedCount++;
    if (this.refusals.length < MAX_REFUSALS_KEPT && !this.refusals.includes(message))
      this.refusals.push(message);
  }

  private async handle(route: Route): Promise<void> {
    const request = route.request();
    this.lastActivity = Date.now();
    let main = false;
    try {
      main = this.options.isMainDocument(request);
    } catch {
      main = false;
    }
    try {
      const refusal = this.precheck(request, main);
      if (refusal !== undefined) {
        if (refusal) this.refuse(refusal);
        if (main)
          this.mainFailed(refusal || 'the page went past its limit of requests or bytes before this one.');
        await route.abort(refusal ? 'blockedbyclient' : 'aborted');
        return;
      }
      await this.turn();
      try {
        await this.answer(route, request, main);
      } finally {
        this.inFlight--;
        this.lastActivity = Date.now();
        this.waiting.shift()?.();
      }
    } catch {
      // The context closed while the request was in flight: nothing is waiting for it.
    }
  }

  /** Why the request is not made ('' to drop it without a note), or undefined to make it. */
  private precheck(request: Request, main: boolean): string | undefined {
    const url = request.url();
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
    if (scheme !== 'http' && scheme !== 'https')
      return `Refused: the page asked for a ${scheme ?? 'non-http'}: URL; web_view loads only http and https.`;
    if (!main && SKIPPED_TYPES.has(request.resourceType())) return '';
    if (!ALLOWED_METHODS.includes(request.method().toUpperCase()))
      return `Refused: the page sent an HTTP ${request.method()} request, which web_view does not make.`;
    if (this.limitHit) return '';
    if (++this.requests > this.options.limits.maxRequests) {
      this.limitHit = 'requests';
      return '';
    }
    if (this.bytes >= this.options.limits.maxTotalBytes) {
      this.limitHit = 'bytes';
      return '';
    }
    return undefined;
  }

  /** Waits for a free slot, so a page asking for a thousand images at once holds only a few in memory. */
  private async turn(): Promise<void> {
    while (this.inFlight >= this.options.limits.concurrency)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
  }

  private async answer(route: Route, request: Request, main: boolean): Promise<void> {
    const { limits, deadline, signal } = this.options;
    const left = deadline - Date.now();
    if (left <= 0 || signal.aborted) {
      await route.abort('timedout');
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers()))
      if (!DROPPED_REQUEST_HEADERS.has(name.toLowerCase())) headers[name] = value;
    const body = request.postDataBuffer();
    let response: GuardedResponse;
    try {
      response = await guardedRequest(request.url(), {
        method: request.method().toUpperCase() as HttpMethod,
        headers,
        ...(body ? { body } : {}),
        policy: this.options.policy,
        ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
        maxRedirects: main ? 0 : limits.maxRedirects,
        maxBytes: Math.max(1, Math.min(limits.maxResponseBytes, limits.maxTotalBytes - this.bytes)),
        // A document cut short still reads; a cut image or script is worse than none.
        onOversize: main ? 'truncate' : 'error',
        // Not cut at the deadline: a sub-resource failing then would fire `load` just as the
        // caller decides whether the page finished loading. The call's end aborts it anyway.
        timeoutMs: main ? left : limits.subresourceTimeoutMs,
        signal,
      });
    } catch (err) {
      const message = (err as Error).message;
      if (main) this.mainFailed(message);
      if (err instanceof RequestRefusedError) {
        this.refuse(message);
        await route.abort('blockedbyclient');
      } else await route.abort(err instanceof RequestTimeoutError ? 'timedout' : 'failed');
      return;
    }
    this.bytes += response.body.length;
    if (this.bytes >= limits.maxTotalBytes) this.limitHit = 'bytes';
    const location = response.headers.location;
    if (main && REDIRECTS.has(response.status) && location) {
      let to: string;
      try {
        to = new URL(location, response.finalUrl).href;
      } catch {
        this.mainFailed(`The page redirected to ${JSON.stringify(location)}, which is not a URL.`);
        await route.abort('failed');
        return;
      }
      this.redirect = { from: response.finalUrl, to };
      this.signalMainChange();
      await route.abort('aborted');
      return;
    }
    if (main) {
      const contentType = response.headers['content-type'];
      const rendered = documentKind(contentType, response.body) === 'html';
      this.main = {
        url: response.finalUrl,
        status: response.status,
        statusText: response.statusText,
        contentType,
        body: response.body,
        truncated: response.truncated,
        rendered,
      };
      this.mainError = undefined;
      if (!rendered) {
        // A PDF, text or a file: the caller reads the bytes itself; Chromium gets an empty page.
        await route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<!doctype html><title></title>',
        });
        return;
      }
    }
    await route.fulfill({
      status: response.status,
      headers: responseHeaders(response.headers, main),
      body: response.body,
    });
  }
}
