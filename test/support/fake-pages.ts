/**
 * Web pages for web_view's tests, served on 127.0.0.1 and reached under the fake name
 * `pages.test` (the resolver below maps it; HTTP_ALLOW_PRIVATE=pages.test admits it). Beside it
 * runs a canary server on a 127.0.0.1 literal that no page may reach: every request it receives
 * is recorded, and the tests assert there is none. `canary.test` also resolves to the canary,
 * and is not admitted either.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ResolverFn } from '../../src/servers/navi-web/web-view.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'pages');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

/** A 1x1 transparent PNG. */
export const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A small valid PDF with one text line per entry of each page (Helvetica, no compression). */
export function minimalPdf(pages: string[][], title?: string): Buffer {
  const objects: string[] = [];
  const add = (text: string) => objects.push(text);
  add(''); // 1: catalog, written once the page objects are numbered
  add(''); // 2: page tree
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'); // 3
  const kids: number[] = [];
  for (const lines of pages) {
    const escaped = lines.map((line) => `(${line.replace(/[\\()]/g, (c) => `\\${c}`)}) '`);
    const stream = `BT /F1 12 Tf 72 720 Td 14 TL ${escaped.join(' ')} ET`;
    add(`<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`);
    const contents = objects.length;
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contents} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
    );
    kids.push(objects.length);
  }
  objects[0] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  if (title) add(`<< /Title (${title}) >>`);
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  const info = title ? ` /Info ${objects.length} 0 R` : '';
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${info} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A long article of numbered paragraphs, to be read in several calls. */
export function longArticle(paragraphs: number): string {
  const body = Array.from(
    { length: paragraphs },
    (_, i) =>
      `<p>Paragraph ${String(i + 1).padStart(4, '0')}. The tide came in over the flats and went out again, as it had every day of the long survey, and the surveyors wrote down its height.</p>`,
  ).join('\n');
  return `<!doctype html><html><head><title>The Long Survey</title></head><body><article><h1>The Long Survey</h1>${body}<p>THE LAST PARAGRAPH of the survey.</p></article></body></html>`;
}

export interface FakePages {
  port: number;
  /** http://pages.test:<port><path> */
  url(path: string): string;
  /** http://127.0.0.1:<canary port> */
  canaryUrl: string;
  /** Every request the canary received (method and path): must stay empty. */
  canaryHits: string[];
  /** The Cookie header of each request to /cookie-probe and /cookie-echo ('' when none). */
  cookiesSeen: Array<{ path: string; cookie: string }>;
  /** Maps pages.test and canary.test to 127.0.0.1; other names do not resolve. */
  resolve: ResolverFn;
  close(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function html(res: ServerResponse, body: string, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
}

export async function startFakePages(): Promise<FakePages> {
  const canaryHits: string[] = [];
  const cookiesSeen: FakePages['cookiesSeen'] = [];
  const canary = createServer((req, res) => {
    canaryHits.push(`${req.method} ${req.url}`);
    res.end('canary');
  });
  const canaryPort = await listen(canary);
  const canaryUrl = `http://127.0.0.1:${canaryPort}`;

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => void> =
    {
      '/article': (_q, res) => html(res, fixture('article.html')),
      '/plain': (_q, res) =>
        html(
          res,
          '<!doctype html><title>Plain page</title><p>The browser is still working for the next call.</p>',
        ),
      '/canary': (_q, res) =>
        html(
          res,
          fixture('canary.html')
            .replaceAll('{{CANARY}}', canaryUrl)
            .replaceAll('{{CANARY_NAME}}', `http://canary.test:${canaryPort}`),
        ),
      '/redirect-to-loopback': (_q, res) => {
        res.writeHead(302, { location: `${canaryUrl}/redirected` });
        res.end();
      },
      '/redirect-to-canary-name': (_q, res) => {
        res.writeHead(301, { location: `http://canary.test:${canaryPort}/redirected` });
        res.end();
      },
      '/redirect-to-file': (_q, res) => {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
      },
      '/refresh-to-loopback': (_q, res) =>
        html(
          res,
          `<!doctype html><title>Moved</title><meta http-equiv="refresh" content="0; url=${canaryUrl}/refresh"><p>Moved.</p>`,
        ),
      '/script-to-redirect': (_q, res) =>
        html(
          res,
          "<!doctype html><title>Leaving</title><p>Leaving.</p><script>location.href = '/redirect-to-loopback?from=script';</script>",
        ),
      '/hops': (_q, res, query) => {
        const n = Number(query.get('n') ?? 0);
        res.writeHead(302, { location: n > 1 ? `/hops?n=${n - 1}` : '/article' });
        res.end();
      },
      '/loop': (_q, res, query) => {
        res.writeHead(302, { location: `/loop?n=${Number(query.get('n') ?? 0) + 1}` });
        res.end();
      },
      '/slow-drip': (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<!doctype html><title>Slow</title><p>');
        const timer = setInterval(() => res.write('.'), 100);
        res.on('close', () => clearInterval(timer));
      },
      // Never answers; the connection is dropped when the server closes.
      '/hang': () => undefined,
      '/never-loads': (_q, res) => html(res, fixture('never-loads.html')),
      '/busy': (_q, res) => html(res, fixture('busy.html')),
      '/alert-loop': (_q, res) => html(res, fixture('alert-loop.html')),
      '/huge-dom': (_q, res) => html(res, fixture('huge-dom.html')),
      '/infinite-scroll': (_q, res) => html(res, fixture('infinite-scroll.html')),
      '/more': (_q, res, query) => {
        const n = Number(query.get('n') ?? 1);
        const items = Array.from(
          { length: 20 },
          (_, i) => `Feed item ${n + i + 1}: more of the endless feed.`,
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(items));
      },
      '/cookie-set': (_q, res) =>
        html(
          res,
          '<!doctype html><title>Cookie jar</title><p>This page sets cookies.</p><script>document.cookie = "js_probe=from-script; path=/";</script><img src="/cookie-probe">',
          200,
          { 'set-cookie': 'navi_probe=from-header; Path=/' },
        ),
      '/cookie-probe': (req, res) => {
        cookiesSeen.push({ path: '/cookie-probe', cookie: req.headers.cookie ?? '' });
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PIXEL_PNG);
      },
      '/cookie-echo': (req, res) => {
        const cookie = req.headers.cookie ?? '';
        cookiesSeen.push({ path: '/cookie-echo', cookie });
        html(
          res,
          `<!doctype html><title>Cookie echo</title><p>Cookies received: ${cookie || 'none at all'}.</p>`,
        );
      },
      '/doc.pdf': (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(
          minimalPdf(
            [['Quarterly tide report', 'High water at 06:12'], ['Second page: low water at 12:30']],
            'Tide Report',
          ),
        );
      },
      '/download': (_q, res) => {
        // A PDF sent as an anonymous download: recognised by its first bytes.
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment',
        });
        res.end(minimalPdf([['A PDF without a proper type']]));
      },
      '/broken.pdf': (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end('%PDF-1.4\nthis is not really a PDF');
      },
      '/notes.txt': (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Plain notes.\nLine two: <b>not HTML</b>, kept as written.\n');
      },
      '/data.json': (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ station: 'Harbour', readings: [1.2, 3.4] }));
      },
      '/image.png': (_q, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PIXEL_PNG);
      },
      '/long': (_q, res) => html(res, longArticle(400)),
      '/private': (_q, res) =>
        html(res, '<!doctype html><title>Members only</title><p>Log in to see this page.</p>', 401, {
          'www-authenticate': 'Basic realm="members"',
        }),
      '/missing': (_q, res) =>
        html(res, '<!doctype html><title>Not found</title><p>There is no page here, sorry.</p>', 404),
    };

  const pages = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pages.test');
    const route = routes[url.pathname];
    if (route) route(req, res, url.searchParams);
    else html(res, '<!doctype html><title>Nothing</title><p>Nothing here.</p>', 404);
  });
  const port = await listen(pages);

  const resolve: ResolverFn = async (hostname) => {
    if (hostname === 'pages.test' || hostname === 'canary.test') return [{ address: '127.0.0.1', family: 4 }];
    throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  };

  return {
    port,
    url: (path) => `http://pages.test:${port}${path}`,
    canaryUrl,
    canaryHits,
    cookiesSeen,
    resolve,
    async close() {
      for (const server of [pages, canary]) {
        server.closeAllConnections();
        await new Promise((done) => server.close(done));
      }
    },
  };
}
