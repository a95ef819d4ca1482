/**
 * web_view against pages served by the test (test/support/fake-pages.ts) under the fake name
 * pages.test, which HTTP_ALLOW_PRIVATE=pages.test admits; the canary on 127.0.0.1 must never
 * be reached. Chromium runs when installed; the fallback without it always runs.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakePages, startFakePages } from '../../../test/support/fake-pages.js';
import { findProgram, needsProgram } from '../../../test/support/requirements.js';
import { testSettings } from '../../config/settings.js';
import { type WebViewTool, webViewTool } from './web-view.js';

const signal = new AbortController().signal;

function makeTool(pages: FakePages, overrides: Record<string, string> = {}, maxChars?: number): WebViewTool {
  const settings = testSettings({
    HTTP_ALLOW_PRIVATE: 'pages.test',
    WEB_VIEW_TIMEOUT_MS: '15000',
    ...overrides,
  });
  return webViewTool({ settings, resolve: pages.resolve, ...(maxChars ? { maxChars } : {}) });
}

function text(result: CallToolResult): string {
  return result.content
    .filter((c) => c.type === 'text')
    .map((c) => (c as { text: string }).text)
    .join('\n');
}

async function view(tool: WebViewTool, url: string, more: { offset?: number; screenshot?: boolean } = {}) {
  return tool.handler({ url, offset: more.offset ?? 0, screenshot: more.screenshot ?? false }, signal);
}

/** The offset the result says to continue from, or undefined at the end of the page. */
function nextOffset(result: CallToolResult): number | undefined {
  const match = /"offset": (\d+)\} to read the next part/.exec(text(result));
  return match ? Number(match[1]) : undefined;
}

describe('web_view input', () => {
  let pages: FakePages;
  let tool: WebViewTool;
  beforeAll(async () => {
    pages = await startFakePages();
    tool = makeTool(pages, { CHROMIUM_PATH: '/nowhere/chromium' });
  });
  afterAll(async () => {
    await tool.close();
    await pages.close();
  });

  it('declares its arguments and refuses wrong types and negative or fractional offsets', () => {
    expect(tool.name).toBe('web_view');
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    const schema = z.object(tool.inputSchema);
    expect(schema.parse({ url: 'https://example.org/' })).toEqual({
      url: 'https://example.org/',
      offset: 0,
      screenshot: false,
    });
    for (const bad of [
      {},
      { url: 42 },
      { url: 'https://example.org/', offset: -1 },
      { url: 'https://example.org/', offset: 1.5 },
      { url: 'https://example.org/', offset: 'ten' },
      { url: 'https://example.org/', screenshot: 'yes' },
      { url: `https://example.org/${'a'.repeat(9000)}` },
    ])
      expect(schema.safeParse(bad).success, JSON.stringify(bad).slice(0, 80)).toBe(false);
  });

  it('refuses what is not an http(s) URL, saying what to give instead', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /url is empty/],
      ['   ', /url is empty/],
      ['not a url', /is not a URL: give the full address, starting with https:\/\//],
      ['example.org/page', /is not a URL/],
      ['file:///etc/passwd', /http:\/\/ and https:\/\/ pages only, not file: URLs/],
      ['javascript:alert(1)', /not javascript: URLs/],
      ['data:text/html,<h1>hi</h1>', /not data: URLs/],
      ['ftp://ftp.example.org/file', /not ftp: URLs/],
      ['chrome://settings', /not chrome: URLs/],
      ['http://user:secret@pages.test/', /user name or password/],
    ];
    for (const [url, message] of cases) {
      const result = await view(tool, url);
      expect(result.isError, url).toBe(true);
      expect(text(result), url).toMatch(message);
    }
  });

  it('refuses an offset past the end of the page, naming the page length', async () => {
    const result = await view(tool, pages.url('/plain'), { offset: 10 ** 12 });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/offset 1000000000000 is past the end of the page: it has \d+ characters/);
  });
});

describe('web_view without Chromium', () => {
  let pages: FakePages;
  let tool: WebViewTool;
  beforeAll(async () => {
    pages = await startFakePages();
    tool = makeTool(pages, { CHROMIUM_PATH: '/nowhere/chromium' });
  });
  afterAll(async () => {
    await tool.close();
    await pages.close();
  });

  it('reports why Chromium is unavailable', () => {
    const status = tool.chromiumStatus();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/CHROMIUM_PATH is \/nowhere\/chromium/);
  });

  it('fetches the page plainly, reads it, and says the page ran no JavaScript', async () => {
    const result = await view(tool, pages.url('/article'), { screenshot: true });
    expect(result.isError).toBeFalsy();
    const out = text(result);
    expect(out).toMatch(
      /Chromium is not available \(CHROMIUM_PATH is \/nowhere\/chromium.*without running its JavaScript/,
    );
    expect(out).toMatch(/no screenshot/);
    expect(out).toContain('trim the wicks');
    expect(out).not.toContain('written by the page script');
    expect(out).toContain(`<<<untrusted-web-content source="${pages.url('/article')}">>>`);
    expect(result.content.some((c) => c.type === 'image')).toBe(false);
  });

  it('keeps the same guard: a redirect to loopback is refused', async () => {
    const result = await view(tool, pages.url('/redirect-to-loopback'));
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Refused: 127\.0\.0\.1 is a loopback address/);
    expect(pages.canaryHits).toEqual([]);
  });

  it('reads PDFs and text without a browser too', async () => {
    expect(text(await view(tool, pages.url('/doc.pdf')))).toContain('High water at 06:12');
    expect(text(await view(tool, pages.url('/notes.txt')))).toContain('<b>not HTML</b>, kept as written');
  });

  it('falls back, saying so, when the program at CHROMIUM_PATH is no browser', async () => {
    const broken = makeTool(pages, { CHROMIUM_PATH: '/bin/false' });
    try {
      const out = text(await view(broken, pages.url('/plain')));
      expect(out).toMatch(/Chromium is not available \(Chromium at \/bin\/false failed to start: /);
      expect(out).toContain('The browser is still working');
      expect(broken.chromiumStatus()).toMatchObject({ available: false, path: '/bin/false' });
    } finally {
      await broken.close();
    }
  });
});

describe.skipIf(!needsProgram('chromium', 'web_view in Chromium'))('web_view in Chromium', () => {
  let pages: FakePages;
  let tool: WebViewTool;
  beforeAll(async () => {
    pages = await startFakePages();
    tool = makeTool(pages, { CHROMIUM_PATH: findProgram('chromium') ?? '' });
  });
  afterAll(async () => {
    await tool?.close();
    await pages?.close();
  });

  it('reads the article from the rendered page, without menus, ads or the cookie banner', async () => {
    const result = await view(tool, pages.url('/article'));
    expect(result.isError).toBeFalsy();
    const out = text(result);
    expect(out).toContain('# How Lighthouses Kept Their Lamps Burning');
    expect(out).toContain('trim the wicks, polish the great lenses');
    expect(out).toContain('This paragraph was written by the page script');
    for (const boilerplate of ['We use cookies', 'Accept all cookies', 'ADVERT', 'casino'])
      expect(out).not.toContain(boilerplate);
    expect(out).toMatch(/Fresnel lens \[(\d+)\]/);
    const n = /Fresnel lens \[(\d+)\]/.exec(out)![1];
    expect(out).toContain(`${n}. Fresnel lens: ${pages.url('/history/fresnel')}`);
    expect(out).not.toMatch(/Chromium is not available/);
    expect(tool.chromiumStatus()).toMatchObject({ available: true });
  });

  it('never lets the page reach a private address, by script, image, frame, beacon or socket', async () => {
    const result = await view(tool, pages.url('/canary'));
    expect(result.isError).toBeFalsy();
    const out = text(result);
    expect(out).toContain('Readers of this page should see this text');
    expect(out).toMatch(
      /\d+ requests of the page were refused, e\.g\. Refused: 127\.0\.0\.1 is a loopback address/,
    );
    expect(pages.canaryHits).toEqual([]);
  });

  it('refuses a redirect chain that ends on loopback or on a name that resolves there', async () => {
    for (const path of ['/redirect-to-loopback', '/redirect-to-canary-name']) {
      const result = await view(tool, pages.url(path));
      expect(result.isError, path).toBe(true);
      expect(text(result), path).toMatch(/Could not load .*Refused: 127\.0\.0\.1 .*is a loopback address/);
    }
    const file = await view(tool, pages.url('/redirect-to-file'));
    expect(text(file)).toMatch(/Refused: the page asked for a file: URL/);
    expect(pages.canaryHits).toEqual([]);
  });

  it("refuses where the page's own meta refresh or script sends it", async () => {
    for (const path of ['/refresh-to-loopback', '/script-to-redirect']) {
      const result = await view(tool, pages.url(path));
      expect(result.isError, path).toBe(true);
      expect(text(result), path).toMatch(/Could not load .*Refused: 127\.0\.0\.1 is a loopback address/);
    }
    expect(pages.canaryHits).toEqual([]);
  });

  it('follows an ordinary redirect chain to the final page and names it', async () => {
    const out = text(await view(tool, pages.url('/hops?n=3')));
    expect(out).toContain(`Page ${pages.url('/article')} (opened from ${pages.url('/hops?n=3')})`);
    expect(out).toContain('trim the wicks');
  });

  it('carries no cookie from one call to the next', async () => {
    await view(tool, pages.url('/cookie-set'));
    // Within the call the cookies work: the page's own image request carried them.
    expect(pages.cookiesSeen.find((c) => c.path === '/cookie-probe')?.cookie).toMatch(
      /navi_probe=from-header/,
    );
    const out = text(await view(tool, pages.url('/cookie-echo')));
    expect(out).toContain('Cookies received: none at all.');
    expect(pages.cookiesSeen.at(-1)).toEqual({ path: '/cookie-echo', cookie: '' });
  });

  it('reads a PDF, by its type or by its first bytes, and says when it is broken', async () => {
    const pdf = text(await view(tool, pages.url('/doc.pdf')));
    expect(pdf).toContain('A PDF of 2 pages');
    expect(pdf).toContain('# Tide Report');
    expect(pdf).toContain('--- page 2 ---\nSecond page: low water at 12:30');
    expect(text(await view(tool, pages.url('/download')))).toContain('A PDF without a proper type');
    const broken = await view(tool, pages.url('/broken.pdf'));
    expect(broken.isError).toBe(true);
    expect(text(broken)).toMatch(/broken\.pdf: The file is not a readable PDF/);
  });

  it('returns text and JSON as text, and explains a binary file', async () => {
    expect(text(await view(tool, pages.url('/notes.txt')))).toContain(
      'Line two: <b>not HTML</b>, kept as written.',
    );
    expect(text(await view(tool, pages.url('/data.json')))).toContain('"station": "Harbour"');
    const image = await view(tool, pages.url('/image.png'));
    expect(image.isError).toBe(true);
    expect(text(image)).toMatch(/is a file of type image\/png \(70 bytes\).*use image_view/);
  });

  it("says when the server answered with an error, and still shows the server's page", async () => {
    const out = text(await view(tool, pages.url('/missing')));
    expect(out).toContain('The server answered HTTP 404 Not Found');
    expect(out).toContain('There is no page here, sorry.');
    const login = text(await view(tool, pages.url('/private')));
    expect(login).toContain('The server answered HTTP 401 Unauthorized');
    expect(login).toContain('Log in to see this page.');
  });

  it('adds a viewport-sized PNG screenshot when asked', async () => {
    const result = await view(tool, pages.url('/article'), { screenshot: true });
    const image = result.content.find((c) => c.type === 'image') as
      | { data: string; mimeType: string }
      | undefined;
    expect(image?.mimeType).toBe('image/png');
    const png = Buffer.from(image!.data, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
  });

  it('stops at once when the call is cancelled, and serves the next call', async () => {
    const cancel = new AbortController();
    const pending = tool.handler(
      { url: pages.url('/slow-drip'), offset: 0, screenshot: false },
      cancel.signal,
    );
    setTimeout(() => cancel.abort(), 300);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('web_view was cancelled before the page was read.');
    expect(text(await view(tool, pages.url('/plain')))).toContain('The browser is still working');
  });

  it('cuts a long page and continues from the offset it names, to the end', async () => {
    const short = makeTool(pages, { CHROMIUM_PATH: findProgram('chromium') ?? '' }, 5_000);
    try {
      const parts: string[] = [];
      let offset: number | undefined = 0;
      while (offset !== undefined && parts.length < 30) {
        const result = await view(short, pages.url('/long'), { offset });
        expect(result.isError).toBeFalsy();
        parts.push(text(result));
        offset = nextOffset(result);
      }
      expect(parts.length).toBeGreaterThan(5);
      expect(parts[0]).toMatch(/Characters 0 to \d+ of \d+\./);
      expect(parts.at(-1)).toContain('THE LAST PARAGRAPH of the survey.');
      expect(parts.at(-1)).toContain('This is the end of the page.');
      const all = parts.join('\n');
      for (const n of [1, 137, 400]) {
        const paragraph = `Paragraph ${String(n).padStart(4, '0')}.`;
        expect(all.split(paragraph).length - 1, paragraph).toBe(1);
      }
    } finally {
      await short.close();
    }
  });
});

describe.skipIf(!needsProgram('chromium', 'web_view against hostile pages'))(
  'web_view against hostile pages',
  () => {
    let pages: FakePages;
    let tool: WebViewTool;
    /** For the pages that must wait out the time limit: 3 s instead of 15. */
    let impatient: WebViewTool;
    beforeAll(async () => {
      pages = await startFakePages();
      const chromium = findProgram('chromium') ?? '';
      tool = makeTool(pages, { CHROMIUM_PATH: chromium });
      impatient = makeTool(pages, { CHROMIUM_PATH: chromium, WEB_VIEW_TIMEOUT_MS: '3000' });
    });
    afterAll(async () => {
      await tool?.close();
      await impatient?.close();
      await pages?.close();
    });

    /** After each hostile page, the shared browser must still serve the next call. */
    async function stillWorks(used = tool): Promise<void> {
      expect(text(await view(used, pages.url('/plain')))).toContain(
        'The browser is still working for the next call.',
      );
    }

    it('endless redirects end in a clear error', async () => {
      const result = await view(tool, pages.url('/loop'));
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/redirected more than 10 times/);
      await stillWorks();
    });

    it('a response that drips in too slowly ends at the time limit', async () => {
      const result = await view(impatient, pages.url('/slow-drip'));
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/did not load within 3 s \(WEB_VIEW_TIMEOUT_MS\)/);
      await stillWorks(impatient);
    });

    it('an alert loop is closed after a few dialogs', async () => {
      const result = await view(tool, pages.url('/alert-loop'));
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/kept opening dialogs/);
      await stillWorks();
    });

    it('a script that never lets go of the page ends in a clear error, screenshot or not', async () => {
      const result = await view(impatient, pages.url('/busy'), { screenshot: true });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/did not finish loading within 3 s and stopped answering/);
      await stillWorks(impatient);
    });

    it('a page that never finishes loading is read as far as it got, with a note', async () => {
      const result = await view(impatient, pages.url('/never-loads'));
      expect(result.isError).toBeFalsy();
      expect(text(result)).toContain('The page was still loading after 3 s');
      expect(text(result)).toContain('A reader should still get this paragraph');
      await stillWorks(impatient);
    });

    it('a huge DOM is cut to its first elements, with a note', async () => {
      const result = await view(tool, pages.url('/huge-dom'));
      expect(result.isError).toBeFalsy();
      expect(text(result)).toMatch(/The page has \d+ elements; only the first 50000 were read/);
      expect(text(result)).toContain('The first paragraph of a page');
      await stillWorks();
    });

    it('an endless feed is read as it stood', async () => {
      const result = await view(tool, pages.url('/infinite-scroll'));
      expect(result.isError).toBeFalsy();
      expect(text(result)).toContain('Feed item 1: the first post of an endless feed.');
      await stillWorks();
    });
  },
);
