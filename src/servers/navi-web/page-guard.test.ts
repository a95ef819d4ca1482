/**
 * The page guard on its own, in a Chromium launched without the dead-proxy backstop and with
 * Chromium's own Local Network Access checks off: a request that escaped the guard would reach
 * the canary. The backstop is tested on its own too.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakePages, startFakePages } from '../../../test/support/fake-pages.js';
import { findProgram, needsProgram } from '../../../test/support/requirements.js';
import { parsePrivatePolicy } from '../../config/private-policy.js';
import { CHROMIUM_ARGS } from './browser.js';
import { type GuardLimits, PageGuard } from './page-guard.js';

/** Chromium refuses a public page's requests to loopback by itself; these tests turn that off. */
const NO_LOCAL_NETWORK_CHECKS =
  '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights';
const UNPROTECTED_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', NO_LOCAL_NETWORK_CHECKS];

const LIMITS: GuardLimits = {
  maxRequests: 100,
  maxTotalBytes: 10_000_000,
  maxResponseBytes: 5_000_000,
  subresourceTimeoutMs: 5_000,
  concurrency: 4,
  maxRedirects: 5,
};

describe.skipIf(!needsProgram('chromium', 'web_view page guard'))('PageGuard in Chromium', () => {
  let pages: FakePages;
  let browser: Browser;
  let backstopped: Browser;

  beforeAll(async () => {
    pages = await startFakePages();
    const { chromium } = await import('playwright-core');
    const executablePath = findProgram('chromium')!;
    browser = await chromium.launch({ executablePath, args: UNPROTECTED_ARGS });
    backstopped = await chromium.launch({
      executablePath,
      args: [...CHROMIUM_ARGS, NO_LOCAL_NETWORK_CHECKS],
    });
  }, 60_000);

  beforeEach(() => {
    pages.canaryHits.length = 0;
  });

  afterAll(async () => {
    await browser?.close();
    await backstopped?.close();
    await pages?.close();
  });

  async function guarded(limits: Partial<GuardLimits> = {}) {
    const context: BrowserContext = await browser.newContext({ serviceWorkers: 'block' });
    let page: Page | undefined;
    const guard = new PageGuard({
      policy: parsePrivatePolicy('pages.test'),
      resolve: pages.resolve,
      limits: { ...LIMITS, ...limits },
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
      isMainDocument: (r) => page !== undefined && r.isNavigationRequest() && r.frame() === page.mainFrame(),
    });
    await guard.install(context);
    page = await context.newPage();
    return { context, page, guard };
  }

  it('refuses every request of a page to a private address, and loads the page itself', async () => {
    const { context, page, guard } = await guarded();
    try {
      await page.goto(pages.url('/canary'), { waitUntil: 'load' });
      await guard.quiet(500, 3_000);
      expect(await page.textContent('article')).toContain('Readers of this page should see this text');
      expect(guard.main).toMatchObject({ status: 200, rendered: true });
      expect(guard.refusedCount).toBeGreaterThanOrEqual(8);
      expect(guard.refusals.join('\n')).toMatch(/127\.0\.0\.1 is a loopback address/);
      expect(guard.refusals.join('\n')).toMatch(/canary\.test resolves to it/);
      expect(guard.refusals.join('\n')).toMatch(/WebSocket/);
      // A worker's WebSocket is beyond Playwright's routing: the dead proxy stops it (tested below).
      expect(pages.canaryHits.filter((hit) => hit !== 'GET /worker-ws')).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stops a top-level redirect and records its target instead of following it', async () => {
    const { context, page, guard } = await guarded();
    try {
      await expect(page.goto(pages.url('/redirect-to-loopback'))).rejects.toThrow(/ERR_ABORTED/);
      expect(guard.takeRedirect()).toEqual({
        from: pages.url('/redirect-to-loopback'),
        to: `${pages.canaryUrl}/redirected`,
      });
      expect(guard.takeRedirect()).toBeUndefined();
      expect(guard.main).toBeUndefined();
      expect(pages.canaryHits).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('hands a non-HTML document to the caller and Chromium an empty page', async () => {
    const { context, page, guard } = await guarded();
    try {
      await page.goto(pages.url('/doc.pdf'));
      expect(guard.main).toMatchObject({ rendered: false, contentType: 'application/pdf', status: 200 });
      expect(guard.main!.body.subarray(0, 5).toString()).toBe('%PDF-');
      expect(await page.content()).not.toContain('Tide');
    } finally {
      await context.close();
    }
  });

  it('makes no request past the budget', async () => {
    const { context, page, guard } = await guarded({ maxRequests: 3 });
    try {
      await page.goto(pages.url('/infinite-scroll'), { waitUntil: 'load' });
      await vi.waitFor(() => expect(guard.limitHit).toBe('requests'), { timeout: 15_000, interval: 50 });
      await guard.quiet(300, 2_000);
      expect(guard.requests).toBeGreaterThan(3);
      // The document and two feed requests: 20 items each.
      expect(await page.locator('li').count()).toBeLessThanOrEqual(41);
    } finally {
      await context.close();
    }
  });

  it('the launch flags alone (dead proxy, no DNS) keep an unrouted Chromium off the network, loopback included', async () => {
    const context = await backstopped.newContext();
    try {
      const page = await context.newPage();
      await expect(page.goto(`${pages.canaryUrl}/direct`, { timeout: 10_000 })).rejects.toThrow(/ERR_/);
      const port = new URL(pages.canaryUrl).port;
      await expect(page.goto(`http://localhost:${port}/`, { timeout: 10_000 })).rejects.toThrow(/ERR_/);
      const ws = pages.canaryUrl.replace('http', 'ws');
      // A worker's WebSocket is the one request the page guard cannot route.
      const outcome = await (await context.newPage()).evaluate(
        `new Promise((resolve) => {
          const code = "const s = new WebSocket('${ws}/worker-ws'); s.onopen = () => postMessage('open'); s.onerror = () => postMessage('error');";
          const worker = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
          worker.onmessage = (event) => resolve(event.data);
          worker.onerror = (event) => resolve('the worker failed: ' + event.message);
        })`,
      );
      expect(outcome).toBe('error');
      expect(pages.canaryHits).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
