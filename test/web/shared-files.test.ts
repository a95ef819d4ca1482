/**
 * The files a tool saved (web/src/lib/shared-files.ts): which metadata entries the chat shows,
 * how each is shown, and the check that bytes are an STL before the 3D viewer parses them.
 */
import { describe, expect, it } from 'vitest';
import {
  fileKind,
  formatSize,
  isSessionFileUrl,
  MAX_STL_BYTES,
  readModelBytes,
  sharedFilesOf,
  stlProblem,
} from '../../web/src/lib/shared-files.js';

const file = (name: string, mime_type: string) => ({
  name,
  url: `/sessions/s1/files/${name}`,
  size: 10,
  mime_type,
});

describe('sharedFilesOf', () => {
  it('reads shared_file and shared_files together, each address once', () => {
    const one = file('a.stl', 'model/stl');
    const files = sharedFilesOf({
      shared_file: one,
      shared_files: [one, file('a.png', 'IMAGE/PNG'), file('a.scad', 'text/plain')],
    });
    expect(files.map((f) => f.name)).toEqual(['a.stl', 'a.png', 'a.scad']);
    expect(files[1]?.mime_type).toBe('image/png');
  });

  it('drops entries that do not point at a file of this server, or are not files at all', () => {
    const files = sharedFilesOf({
      shared_files: [
        { ...file('x.png', 'image/png'), url: 'https://tracker.example/x.png' },
        { ...file('y.png', 'image/png'), url: '//tracker.example/y.png' },
        { ...file('z.png', 'image/png'), url: 'javascript:alert(1)' },
        { ...file('w.png', 'image/png'), url: '/sessions/s1/files/w.png\n' },
        { ...file('v.png', 'image/png'), name: '' },
        { ...file('u.png', 'image/png'), url: 42 },
        'not an object',
        null,
      ],
      shared_file: 'nope',
    });
    expect(files).toEqual([]);
  });

  it('fills a missing size and type with safe values', () => {
    const [only] = sharedFilesOf({ shared_files: [{ name: 'm.stl', url: '/sessions/s1/files/m.stl' }] });
    expect(only).toEqual({
      name: 'm.stl',
      url: '/sessions/s1/files/m.stl',
      size: 0,
      mime_type: 'application/octet-stream',
    });
  });

  it('finds nothing in metadata without files', () => {
    expect(sharedFilesOf({})).toEqual([]);
    expect(sharedFilesOf({ shared_files: 'a.stl' })).toEqual([]);
  });
});

describe('fileKind', () => {
  it('sends STL to the viewer by name or type, shows raster images, downloads the rest', () => {
    expect(fileKind(file('part.STL', 'application/octet-stream'))).toBe('model');
    expect(fileKind(file('part', 'model/stl'))).toBe('model');
    expect(fileKind(file('view.png', 'image/png'))).toBe('image');
    expect(fileKind(file('logo.svg', 'image/svg+xml'))).toBe('other');
    expect(fileKind(file('part.scad', 'text/plain'))).toBe('other');
  });
});

describe('isSessionFileUrl', () => {
  it('accepts only this server’s session paths', () => {
    expect(isSessionFileUrl('/sessions/s1/files/a.stl')).toBe(true);
    expect(isSessionFileUrl('/files/a.stl')).toBe(false);
    expect(isSessionFileUrl('https://example.com/sessions/a.stl')).toBe(false);
    expect(isSessionFileUrl(undefined)).toBe(false);
  });

  it('refuses paths the browser would resolve to another address of this server', () => {
    expect(isSessionFileUrl('/sessions/s%201/files/my%20part.stl')).toBe(true);
    expect(isSessionFileUrl('/sessions/../files/a.stl')).toBe(false);
    expect(isSessionFileUrl('/sessions/%2e%2E/api/settings')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/files/..')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/files/.%2e')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/files/a/../../../api/settings')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/files/a.stl?x=1')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/other/a.stl')).toBe(false);
    expect(isSessionFileUrl('/sessions/s1/files/')).toBe(false);
  });
});

/** A body that never ends, counting the chunks anyone pulled from it. */
function endless(chunk: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls += 1;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
  return { stream, pulled: () => pulls };
}

describe('readModelBytes', () => {
  it('returns the whole body of a model within the limit', async () => {
    const read = await readModelBytes(new Response(new Uint8Array([1, 2, 3, 4, 5])), 8);
    expect('bytes' in read && [...new Uint8Array(read.bytes)]).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses a body announced over the limit without reading it', async () => {
    const body = endless(1024);
    const read = await readModelBytes(
      new Response(body.stream, { headers: { 'content-length': String(100 * 1024 * 1024) } }),
    );
    expect(read).toEqual({ problem: 'the model is 100 MB, more than the 64 MB this view draws' });
    expect(body.pulled()).toBeLessThanOrEqual(1);
  });

  it('stops reading a body without a length as soon as it passes the limit', async () => {
    const body = endless(1000);
    const read = await readModelBytes(new Response(body.stream), 10_000);
    expect(read).toEqual({ problem: 'the model is larger than the 9.8 KB this view draws' });
    expect(body.pulled()).toBeLessThan(20);
  });
});

describe('formatSize', () => {
  it('writes bytes for people', () => {
    expect(formatSize(684)).toBe('684 B');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(20 * 1024 * 1024)).toBe('20 MB');
  });
});

function binary(triangles: number, extra = 0): ArrayBuffer {
  const bytes = new ArrayBuffer(84 + triangles * 50 + extra);
  new DataView(bytes).setUint32(80, triangles, true);
  return bytes;
}

describe('stlProblem', () => {
  it('accepts a binary STL whose size matches its triangle count, even with a "solid" header', () => {
    expect(stlProblem(binary(12))).toBeNull();
    const named = binary(1);
    new Uint8Array(named).set(new TextEncoder().encode('solid exported by a CAD tool'));
    expect(stlProblem(named)).toBeNull();
  });

  it('accepts a text STL with facets', () => {
    const text =
      'solid cube\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n   vertex 0 1 0\n  endloop\n endfacet\nendsolid cube\n';
    expect(stlProblem(new TextEncoder().encode(text).buffer as ArrayBuffer)).toBeNull();
  });

  it('refuses empty models, other files, cut-off files and huge ones, saying which', () => {
    expect(stlProblem(binary(0))).toBe('the model has no triangles');
    expect(stlProblem(new TextEncoder().encode('solid empty\nendsolid empty\n').buffer as ArrayBuffer)).toBe(
      'the model has no triangles',
    );
    expect(
      stlProblem(new TextEncoder().encode('<!doctype html><p>Not found</p>').buffer as ArrayBuffer),
    ).toMatch(/not an STL model/);
    expect(stlProblem(binary(12, -7))).toMatch(/not an STL model/);
    expect(stlProblem(new ArrayBuffer(0))).toMatch(/not an STL model/);
    expect(stlProblem(new ArrayBuffer(MAX_STL_BYTES + 1))).toMatch(/more than the 64 MB this view draws/);
  });
});
