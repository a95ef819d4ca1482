import { afterEach, describe, expect, it, vi } from 'vitest';
import { findProgram, needsProgram } from '../../../test/support/requirements.js';
import { BrowserPool } from './browser.js';

describe('BrowserPool without a usable Chromium', () => {
  it('lends nothing when the binary is missing', async () => {
    const pool = new BrowserPool({ chromiumPath: '/nowhere/chromium', idleMs: 1000 });
    expect(await pool.lease({})).toBeUndefined();
    expect(pool.status().available).toBe(false);
  });

  it('lends nothing when the program does not start as a browser, and says why', async () => {
    const pool = new BrowserPool({ chromiumPath: '/bin/false', idleMs: 1000 });
    expect(pool.status().available).toBe(true); // not tried yet
    expect(await pool.lease({})).toBeUndefined();
    const status = pool.status();
    expect(status).toMatchObject({ available: false, path: '/bin/false' });
    expect(status.reason).toMatch(/^Chromium at \/bin\/false failed to start: /);
  });
});

describe.skipIf(!needsProgram('chromium', 'web_view browser pool'))('BrowserPool with Chromium', () => {
  const chromiumPath = findProgram('chromium') ?? '';
  let pool: BrowserPool | undefined;
  afterEach(async () => {
    await pool?.close();
  });

  async function title(p: BrowserPool): Promise<string> {
    const lease = await p.lease({});
    if (!lease) throw new Error(`no browser: ${p.status().reason}`);
    try {
      const page = await lease.context.newPage();
      await page.setContent('<title>pooled</title>');
      return await page.title();
    } finally {
      await lease.release();
    }
  }

  it('starts on first use, reuses the browser, and gives each lease a fresh context', async () => {
    pool = new BrowserPool({ chromiumPath, idleMs: 60_000 });
    expect(pool.running()).toBe(false);
    const a = await pool.lease({});
    const b = await pool.lease({});
    expect(pool.running()).toBe(true);
    expect(a!.context).not.toBe(b!.context);
    expect(a!.context.browser()).toBe(b!.context.browser());
    await a!.context.addCookies([{ name: 'k', value: 'v', url: 'http://pages.test/' }]);
    expect(await b!.context.cookies()).toEqual([]);
    await a!.release();
    await b!.release();
    expect(await title(pool)).toBe('pooled');
  });

  it('a lease cancelled while Chromium starts rejects and leaves no context open', async () => {
    pool = new BrowserPool({ chromiumPath, idleMs: 60_000 });
    const cancel = new AbortController();
    // lease() runs up to its first await, the launch, before it returns: this abort lands
    // during the launch, after the check made before it.
    const pending = pool.lease({}, cancel.signal);
    cancel.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    const next = await pool.lease({});
    expect(next!.context.browser()!.contexts()).toEqual([next!.context]);
    await next!.release();
  });

  it('closes the browser after the idle time and starts it again on the next use', async () => {
    pool = new BrowserPool({ chromiumPath, idleMs: 200 });
    expect(await title(pool)).toBe('pooled');
    await vi.waitFor(() => expect(pool!.running()).toBe(false), { timeout: 10_000, interval: 50 });
    expect(await title(pool)).toBe('pooled');
    expect(pool.running()).toBe(true);
  });

  it('starts a new browser when the old one died', async () => {
    pool = new BrowserPool({ chromiumPath, idleMs: 60_000 });
    const lease = await pool.lease({});
    await lease!.context.browser()!.close();
    await lease!.release();
    expect(await title(pool)).toBe('pooled');
  });
});
