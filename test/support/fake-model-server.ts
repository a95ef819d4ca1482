/**
 * A real HTTP server on a loopback port serving fake GGUF files the way Hugging Face does:
 * `Range` requests answered 206 (416 past the end), optional `x-linked-etag` checksums on a
 * redirect hop, and, for the tests of what goes wrong, connections cut in the middle of the
 * body, bodies that stall, servers that ignore `Range`, and fixed error statuses.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFile {
  body: Buffer;
  /** Sent as `x-linked-etag: "<value>"` (HF sends the file's SHA-256 there). */
  etag?: string;
  /** The first `cuts` answers stop halfway through what they send and close the connection. */
  cuts?: number;
  /** Answer every request with the whole file (200), as a server without `Range` support. */
  ignoreRange?: boolean;
  /** Send this many bytes, then nothing more (the connection stays open). */
  stallAfter?: number;
  /** Answer with this status and no file. */
  status?: number;
}

export interface RecordedFileRequest {
  path: string;
  range: string | undefined;
}

/** Deterministic bytes that start like a GGUF file: the magic, then a pattern. */
export function fakeGguf(size: number, seed = 7): Buffer {
  const body = Buffer.alloc(size);
  body.write('GGUF', 0, 'latin1');
  let x = seed;
  for (let i = 4; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    body[i] = x >>> 16;
  }
  return body;
}

export function sha256Of(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

export class FakeModelServer {
  readonly files = new Map<string, FakeFile>();
  /** `from` path → `{to, etag}`: a 302 to `to`, carrying `x-linked-etag` like HF's resolve URLs. */
  readonly redirects = new Map<string, { to: string; etag?: string }>();
  readonly requests: RecordedFileRequest[] = [];
  private server: Server | undefined;
  private readonly cutsDone = new Map<string, number>();
  private readonly open = new Set<ServerResponse>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  /** Requests for `path` that asked for a range. */
  rangeRequests(path: string): RecordedFileRequest[] {
    return this.requests.filter((r) => r.path === path && r.range !== undefined);
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const range = req.headers.range;
    this.requests.push({ path, range });
    const redirect = this.redirects.get(path);
    if (redirect) {
      res.writeHead(302, {
        location: redirect.to,
        ...(redirect.etag ? { 'x-linked-etag': `"${redirect.etag}"` } : {}),
      });
      res.end();
      return;
    }
    const file = this.files.get(path);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    if (file.status !== undefined) {
      res.writeHead(file.status, { 'content-type': 'text/plain' });
      res.end('refused');
      return;
    }
    const size = file.body.length;
    const etag = file.etag ? { 'x-linked-etag': `"${file.etag}"` } : {};
    let start = 0;
    const asked = /^bytes=(\d+)-$/.exec(range ?? '');
    if (asked && !file.ignoreRange) {
      start = Number(asked[1]);
      if (start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}`, ...etag });
        res.end();
        return;
      }
      res.writeHead(206, {
        'content-range': `bytes ${start}-${size - 1}/${size}`,
        'content-length': String(size - start),
        'accept-ranges': 'bytes',
        ...etag,
      });
    } else {
      res.writeHead(200, { 'content-length': String(size), 'accept-ranges': 'bytes', ...etag });
    }
    const rest = file.body.subarray(start);
    const cutsDone = this.cutsDone.get(path) ?? 0;
    if ((file.cuts ?? 0) > cutsDone) {
      this.cutsDone.set(path, cutsDone + 1);
      res.write(rest.subarray(0, Math.floor(rest.length / 2)), () => res.destroy());
      return;
    }
    if (file.stallAfter !== undefined) {
      this.open.add(res);
      res.write(rest.subarray(0, file.stallAfter));
      return;
    }
    res.end(rest);
  }
}
