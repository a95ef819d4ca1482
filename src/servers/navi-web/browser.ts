/**
 * One headless Chromium shared by the calls of web_view: started on first use, closed after an
 * idle while, started again when it died. Each call gets a context of its own (cookies,
 * storage and cache start empty) and gives it back; a context that will not close (a page
 * stuck in a script) takes the browser down with it, and the next call starts a new one.
 *
 * Playwright loads on the first launch only, so a server that never opens a page stays small.
 */
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import {
  type ChromiumStatus,
  findChromium,
  HEADLESS_CHROMIUM_ARGS,
} from '../../machine/browser/find-chromium.js';

export type { ChromiumStatus };

/**
 * The flags every launch uses. Requests are answered by the page guard; the proxy at port 9
 * (discard, nothing listens) is the backstop for anything that escapes the routing, loopback
 * included (`<-loopback>`), and the resolver rules keep Chromium from making DNS queries of its own.
 */
export const CHROMIUM_ARGS = [
  ...HEADLESS_CHROMIUM_ARGS,
  '--disable-dev-shm-usage',
  '--proxy-server=127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

const LAUNCH_TIMEOUT_MS = 30_000;
/** After a failed launch, calls use the plain fetch for this long before Chromium is tried again. */
const RETRY_AFTER_MS = 60_000;
const CLOSE_GRACE_MS = 5_000;

function race<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A context lent to one call. `release` closes it; it never throws. */
export interface Lease {
  context: BrowserContext;
  release(): Promise<void>;
}

export interface BrowserPoolOptions {
  /** CHROMIUM_PATH ('' = search). */
  chromiumPath: string;
  /** WEB_BROWSER_IDLE_MS: the browser closes when no call has used it for this long. */
  idleMs: number;
}

export class BrowserPool {
  private browser: Browser | undefined;
  private launching: Promise<Browser> | undefined;
  private failure: { reason: string; at: number } | undefined;
  private active = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly found: ChromiumStatus;

  constructor(private readonly options: BrowserPoolOptions) {
    this.found = findChromium(options.chromiumPath);
  }

  /** Whether calls can use Chromium, and if not, why. */
  status(): ChromiumStatus {
    if (!this.found.available) return { ...this.found };
    if (this.failure) return { available: false, path: this.found.path!, reason: this.failure.reason };
    return { available: true, path: this.found.path! };
  }

  /** Whether a browser process is running now. */
  running(): boolean {
    return this.browser?.isConnected() === true;
  }

  /**
   * A fresh context on the shared browser, or undefined when Chromium cannot be used (status()
   * says why). Throws only when `signal` aborts.
   */
  async lease(options: BrowserContextOptions, signal?: AbortSignal): Promise<Lease | undefined> {
    if (!this.found.available) return undefined;
    if (this.failure && Date.now() - this.failure.at < RETRY_AFTER_MS) return undefined;
    this.active++;
    clearTimeout(this.idleTimer);
    try {
      for (let attempt = 0; ; attempt++) {
        signal?.throwIfAborted();
        let browser: Browser;
        let context: BrowserContext;
        try {
          browser = await this.launch();
        } catch (err) {
          this.failure = {
            reason: `Chromium at ${this.found.path} failed to start: ${firstLine(err)}`,
            at: Date.now(),
          };
          this.done();
          return undefined;
        }
        try {
          // Headless Chromium names itself "HeadlessChrome", which some sites turn away.
          const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version().split('.')[0]}.0.0.0 Safari/537.36`;
          context = await browser.newContext({ userAgent, ...options });
        } catch (err) {
          // The browser died between calls: forget it and start another, once.
          this.forget(browser);
          if (attempt > 0) throw err;
          continue;
        }
        // Cancelled while Chromium started: an abort listener added after this would never fire.
        if (signal?.aborted) {
          await race(
            context.close().catch(() => undefined),
            CLOSE_GRACE_MS,
          );
          signal.throwIfAborted();
        }
        return { context, release: () => this.release(context) };
      }
    } catch (err) {
      this.done();
      throw err;
    }
  }

  /** Closes the browser (the server is shutting down). A later lease starts a new one. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const browser = this.browser ?? (await this.launching?.catch(() => undefined));
    this.browser = undefined;
    if (browser)
      await race(
        browser.close().catch(() => undefined),
        CLOSE_GRACE_MS,
      );
  }

  private launch(): Promise<Browser> {
    if (this.browser?.isConnected()) return Promise.resolve(this.browser);
    this.launching ??= (async () => {
      try {
        const { chromium } = await import('playwright-core');
        const browser = await chromium.launch({
          executablePath: this.found.path!,
          args: CHROMIUM_ARGS,
          headless: true,
          chromiumSandbox: false,
          timeout: LAUNCH_TIMEOUT_MS,
          // The server handles its own signals; Playwright still kills Chromium when Node exits.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        });
        browser.on('disconnected', () => this.forget(browser));
        this.browser = browser;
        this.failure = undefined;
        return browser;
      } finally {
        this.launching = undefined;
      }
    })();
    return this.launching;
  }

  private forget(browser: Browser): void {
    if (this.browser === browser) this.browser = undefined;
  }

  private async release(context: BrowserContext): Promise<void> {
    try {
      const closed = await race(
        context.close().catch(() => undefined),
        CLOSE_GRACE_MS,
      );
      if (closed === 'timeout') {
        const browser = context.browser();
        if (browser) {
          this.forget(browser);
          await race(
            browser.close().catch(() => undefined),
            CLOSE_GRACE_MS,
          );
        }
      }
    } finally {
      this.done();
    }
  }

  private done(): void {
    this.active--;
    if (this.active > 0 || !this.browser) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.active === 0) void this.close();
    }, this.options.idleMs);
    this.idleTimer.unref();
  }
}

function firstLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0]!.trim();
}
