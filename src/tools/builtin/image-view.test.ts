import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrivatePolicy } from '../../config/private-policy.js';
import type { GuardedRequestOptions } from '../../machine/net/guarded-request.js';
import { testGuard } from '../test-helpers.js';
import { createImageViewTool, type ImageViewToolDeps } from './image-view.js';
import { makeCtx } from './test-support.js';

let base: string;
let root: string;
let outside: string;
let server: Server;
let port = 0;
let png: Buffer;
const ctx = makeCtx();

// Only the name images.test may reach the loopback test server; everything else is judged for real.
const overrides: Pick<GuardedRequestOptions, 'resolve'> = {
  resolve: async (host) => {
    if (host === 'images.test' || host === 'rebind.test') return [{ address: '127.0.0.1', family: 4 }];
    throw new Error(`unknown host ${host}`);
  },
};
const IMAGES_ONLY = parsePrivatePolicy('images.test');

const tool = (over: Partial<ImageViewToolDeps> = {}) =>
  createImageViewTool({
    settings: { FS_ALLOWED_PATHS: [root], HTTP_ALLOW_PRIVATE: IMAGES_ONLY },
    guard: testGuard({ FS_ALLOWED_PATHS: [root] }),
    fetchOverrides: overrides,
    timeoutMs: 5000,
    ...over,
  });

/** A PNG whose header claims `side`×`side` pixels, with almost no data: a decompression bomb. */
function bombPng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(side + 1))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function decoded(base64: unknown) {
  return sharp(Buffer.from(String(base64), 'base64')).metadata();
}

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'navi-image-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  png = await sharp({
    create: { width: 2000, height: 1500, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 0.5 } },
  })
    .png()
    .toBuffer();
  writeFileSync(join(root, 'big.png'), png);
  writeFileSync(
    join(root, 'small.webp'),
    await sharp({ create: { width: 40, height: 30, channels: 3, background: '#00f' } })
      .webp()
      .toBuffer(),
  );
  writeFileSync(join(root, 'corrupt.png'), Buffer.concat([png.subarray(0, 60), Buffer.alloc(200, 7)]));
  writeFileSync(join(root, 'notes.txt'), 'just text, not an image');
  writeFileSync(join(outside, 'secret.png'), png);
  symlinkSync(join(outside, 'secret.png'), join(root, 'leak.png'));

  server = createServer((req, res) => {
    if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    if (req.url === '/to-loopback')
      return res.writeHead(302, { location: `http://127.0.0.1:${port}/cat.png` }).end();
    if (req.url === '/to-mapped')
      return res.writeHead(302, { location: `http://[::ffff:127.0.0.1]:${port}/cat.png` }).end();
    if (req.url === '/to-mapped-hex')
      return res.writeHead(302, { location: `http://[0:0:0:0:0:ffff:7f00:1]:${port}/cat.png` }).end();
    if (req.url === '/to-metadata')
      return res.writeHead(307, { location: 'http://169.254.169.254/latest/' }).end();
    if (req.url === '/to-rebind')
      return res.writeHead(302, { location: `http://rebind.test:${port}/cat.png` }).end();
    if (req.url === '/html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    if (req.url === '/slow') return undefined;
    return res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
  rmSync(base, { recursive: true, force: true });
});

describe('image_view: local files', () => {
  it('shrinks a large image to at most 1024 px JPEG and marks it as an image', async () => {
    const r = await tool().execute({ source: join(root, 'big.png') }, ctx);
    expect(r.success).toBe(true);
    expect(r.output).toBe(`Image ${join(root, 'big.png')} (2000x1500 png) loaded as 1024x768 JPEG.`);
    expect(r.metadata).toMatchObject({ is_image: true, mime_type: 'image/jpeg', width: 1024, height: 768 });
    const meta = await decoded(r.metadata?.base64);
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1024, 768]);
  });

  it('keeps a small image at its size and reads relative paths from the first root', async () => {
    const r = await tool().execute({ source: 'small.webp' }, ctx);
    expect(r.output).toBe(`Image ${join(root, 'small.webp')} (40x30 webp) loaded as 40x30 JPEG.`);
  });

  it('refuses traversal, absolute paths outside the roots and links pointing out, naming the roots', async () => {
    const traversal = await tool().execute({ source: '../../../../etc/passwd' }, ctx);
    expect(traversal.output).toBe(
      `Access denied: "../../../../etc/passwd" resolves to /etc/passwd, which is outside the allowed folders (${root}). Use a path inside one of them.`,
    );
    const absolute = await tool().execute({ source: join(outside, 'secret.png') }, ctx);
    expect(absolute.output).toContain(`which is outside the allowed folders (${root})`);
    const link = await tool().execute({ source: join(root, 'leak.png') }, ctx);
    expect(link.output).toContain(
      `resolves to ${join(outside, 'secret.png')}, which is outside the allowed folders`,
    );
  });

  it('says clearly when the file is corrupt, not an image, missing or too big', async () => {
    const corrupt = await tool().execute({ source: join(root, 'corrupt.png') }, ctx);
    expect(corrupt.success).toBe(false);
    expect(corrupt.output).toMatch(
      /^.*corrupt\.png is not a supported or intact image \(.+\)\. Supported: JPEG, PNG/,
    );
    const text = await tool().execute({ source: join(root, 'notes.txt') }, ctx);
    expect(text.output).toContain('notes.txt is not a supported or intact image');
    const missing = await tool().execute({ source: join(root, 'nope.png') }, ctx);
    expect(missing.output).toBe(`No such file: ${join(root, 'nope.png')}.`);
    const big = await tool({ maxBytes: 1000 }).execute({ source: join(root, 'big.png') }, ctx);
    expect(big.output).toBe(`${join(root, 'big.png')} is ${png.length} bytes, over the 1000-byte limit.`);
  });

  it('refuses a tiny file that claims a gigantic image, with the default limits', async () => {
    writeFileSync(join(root, 'bomb.png'), bombPng(60_000));
    const r = await tool().execute({ source: join(root, 'bomb.png') }, ctx);
    expect(r.output).toBe(
      `Refused: ${join(root, 'bomb.png')} has more than 50000000 pixels (possible decompression bomb).`,
    );
  });

  it('refuses an image with more pixels than the limit before decoding it', async () => {
    const r = await tool({ maxInputPixels: 1_000_000 }).execute({ source: join(root, 'big.png') }, ctx);
    expect(r.output).toBe(
      `Refused: ${join(root, 'big.png')} has more than 1000000 pixels (possible decompression bomb).`,
    );
  });

  it('refuses other URL schemes and an empty source', async () => {
    expect((await tool().execute({ source: 'ftp://example.com/a.png' }, ctx)).output).toBe(
      'Only local paths and http(s) URLs are supported.',
    );
    expect((await tool().execute({ source: '  ' }, ctx)).output).toBe(
      'Parameter "source" must be a path or an http(s) URL.',
    );
  });
});

describe('image_view: URLs', () => {
  const url = (path: string) => `http://images.test:${port}${path}`;

  it('fetches, shrinks and converts an image', async () => {
    const r = await tool().execute({ source: url('/cat.png') }, ctx);
    expect(r.output).toBe(`Image ${url('/cat.png')} (2000x1500 png) loaded as 1024x768 JPEG.`);
    expect(r.metadata?.is_image).toBe(true);
  });

  it('refuses redirects to loopback in every spelling, to metadata and to names that resolve privately', async () => {
    expect((await tool().execute({ source: url('/to-loopback') }, ctx)).output).toBe(
      'Refused: 127.0.0.1 is a loopback address, and HTTP_ALLOW_PRIVATE=images.test does not admit it. ' +
        'To let Navi reach it, add the host or its address to HTTP_ALLOW_PRIVATE (a comma-separated list of hosts and CIDR ranges, or true for all).',
    );
    expect((await tool().execute({ source: url('/to-mapped') }, ctx)).output).toContain(
      'Refused: ::ffff:7f00:1 is a loopback address',
    );
    expect((await tool().execute({ source: url('/to-mapped-hex') }, ctx)).output).toContain(
      'Refused: ::ffff:7f00:1 is a loopback address',
    );
    expect((await tool().execute({ source: url('/to-metadata') }, ctx)).output).toContain(
      'Refused: 169.254.169.254 is a link-local / cloud metadata address',
    );
    expect((await tool().execute({ source: url('/to-rebind') }, ctx)).output).toContain(
      'Refused: 127.0.0.1 (rebind.test resolves to it) is a loopback address',
    );
  });

  it('refuses direct private URLs unless HTTP_ALLOW_PRIVATE is set', async () => {
    const direct = `http://127.0.0.1:${port}/cat.png`;
    expect((await tool().execute({ source: direct }, ctx)).output).toContain(
      'Refused: 127.0.0.1 is a loopback address',
    );
    const allowed = tool({
      settings: { FS_ALLOWED_PATHS: [root], HTTP_ALLOW_PRIVATE: parsePrivatePolicy('true') },
    });
    const r = await allowed.execute({ source: direct }, ctx);
    expect(r.output).toBe(`Image ${direct} (2000x1500 png) loaded as 1024x768 JPEG.`);
  });

  it('enforces the size cap and the timeout, and reports HTTP errors and non-images', async () => {
    expect((await tool({ maxBytes: 1000 }).execute({ source: url('/cat.png') }, ctx)).output).toMatch(
      /^Refused: the response body is (\d+ bytes, )?over the 1000-byte limit\.$/,
    );
    expect((await tool({ timeoutMs: 300 }).execute({ source: url('/slow') }, ctx)).output).toContain(
      'Timed out after 300 ms',
    );
    expect((await tool().execute({ source: url('/missing') }, ctx)).output).toBe(
      `The server answered HTTP 404 for ${url('/missing')}.`,
    );
    expect((await tool().execute({ source: url('/html') }, ctx)).output).toContain(
      'is not a supported or intact image',
    );
  });
});
