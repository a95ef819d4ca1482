/**
 * http_request against a local HTTP server reached under made-up host names (the resolver maps
 * them to 127.0.0.1, and HTTP_ALLOW_PRIVATE admits only `site.test`), so every hop goes through
 * the real SSRF checks. Argument types are checked through a real MCP client and server.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { registerShippedTool } from '../common/serve.js';
import { httpRequestTool, MAX_REQUEST_BODY_BYTES, type ResolverFn } from './http-request.js';

const LIMIT = 4096;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let port: number;
const seen: Seen[] = [];

function route(req: IncomingMessage, body: string, res: import('node:http').ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  switch (path) {
    case '/text':
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-custom': 'yes' })
        .end('hello, world');
      return;
    case '/echo':
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null }));
      return;
    case '/latin1':
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=ISO-8859-1' })
        .end(Buffer.from('café', 'latin1'));
      return;
    case '/meta':
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        Buffer.concat([
          Buffer.from('<html><head><meta charset="windows-1251"></head><body>'),
          Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), // "Привет"
          Buffer.from('</body></html>'),
        ]),
      );
      return;
    case '/weird-charset':
      res.writeHead(200, { 'content-type': 'text/plain; charset=no-such-charset' }).end('plain');
      return;
    case '/png':
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      return;
    case '/untyped-binary':
      res.writeHead(200).end(PNG);
      return;
    case '/untyped-text':
      res.writeHead(200).end('just words');
      return;
    case '/big':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10000' }).end('x'.repeat(10_000));
      return;
    case '/big-json':
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ items: Array.from({ length: 8000 }, (_, i) => ({ i })) }));
      return;
    case '/missing':
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
      return;
    case '/r1':
      res.writeHead(302, { location: '/r2' }).end();
      return;
    case '/r2':
      res.writeHead(301, { location: `http://site.test:${port}/text` }).end();
      return;
    case '/to-loopback':
      res.writeHead(302, { location: `http://127.0.0.1:${port}/text` }).end();
      return;
    case '/to-other-name':
      res.writeHead(307, { location: `http://other.test:${port}/text` }).end();
      return;
    case '/slow':
      return; // never answers
    default:
      res.writeHead(500).end('unknown route');
  }
}

const resolve: ResolverFn = async (hostname) => {
  if (hostname === 'site.test' || hostname === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error(`${hostname} is not a test host`);
};

const tool = httpRequestTool({
  settings: testSettings({ HTTP_ALLOW_PRIVATE: 'site.test', WEB_MAX_RESPONSE_BYTES: String(LIMIT) }),
  resolve,
});

type CallArgs = Parameters<typeof tool.handler>[0];

function call(args: Partial<CallArgs> & { url: string }, signal = new AbortController().signal) {
  return tool.handler({ method: 'GET', timeout_ms: 30_000, ...args } as CallArgs, signal);
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

const at = (path: string, host = 'site.test') => `http://${host}:${port}${path}`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      route(req, body, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

describe('http_request', () => {
  it('declares that it can change things in the open world', () => {
    expect(tool.name).toBe('http_request');
    expect(tool.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    });
  });

  it('returns the status, the headers and the body as untrusted content', async () => {
    const result = await call({ url: at('/text') });
    expect(result.isError).toBeFalsy();
    const out = text(result);
    expect(out.split('\n')[0]).toBe(`GET ${at('/text')} → HTTP 200`);
    expect(out).toContain(`<<<untrusted-web-content source="${at('/text')}">>>`);
    expect(out).toContain('Status: 200 OK');
    expect(out).toContain('  x-custom: yes');
    expect(out).toMatch(
      /Body \(text\/plain, 12 bytes, utf-8\):\nhello, world\n<<<end-untrusted-web-content>>>/,
    );
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('sends %s with its body', async (method) => {
    const result = await call({ method, url: at('/echo'), body: 'payload' });
    expect(result.isError).toBeFalsy();
    expect(seen.at(-1)).toMatchObject({ method, body: 'payload' });
    // Small JSON answers are re-indented for reading.
    expect(text(result)).toContain(`{\n  "method": "${method}",\n  "body": "payload",`);
    expect(text(result)).toContain('HTTP 201');
  });

  it('sends the given headers and guesses a Content-Type when none is given', async () => {
    await call({ method: 'POST', url: at('/echo'), headers: { 'X-Token': 'abc' }, body: '{"a":1}' });
    expect(seen.at(-1)?.headers).toMatchObject({ 'x-token': 'abc', 'content-type': 'application/json' });
    await call({ method: 'POST', url: at('/echo'), body: 'not json' });
    expect(seen.at(-1)?.headers['content-type']).toBe('text/plain; charset=utf-8');
    await call({ method: 'POST', url: at('/echo'), headers: { 'content-type': 'text/csv' }, body: 'a,b' });
    expect(seen.at(-1)?.headers['content-type']).toBe('text/csv');
  });

  it('sends HEAD and shows no body', async () => {
    const result = await call({ method: 'HEAD', url: at('/text') });
    expect(seen.at(-1)?.method).toBe('HEAD');
    expect(text(result)).toContain('content-type: text/plain; charset=utf-8');
    expect(text(result)).toContain('Body: empty');
  });

  it('reports an HTTP error status as an answer, not a failure', async () => {
    const result = await call({ url: at('/missing') });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('Status: 404 Not Found');
    expect(text(result)).toContain('no such page');
  });

  it('decodes text by the charset of the header or of the HTML', async () => {
    expect(text(await call({ url: at('/latin1') }))).toContain('windows-1252):\ncafé');
    expect(text(await call({ url: at('/meta') }))).toContain('Привет');
    const unknown = text(await call({ url: at('/weird-charset') }));
    expect(unknown).toContain('plain');
    expect(unknown).toContain('The charset "no-such-charset" is unknown; the body was decoded as UTF-8.');
  });

  it('returns binary content as base64', async () => {
    const typed = text(await call({ url: at('/png') }));
    expect(typed).toContain(`Body (image/png, ${PNG.length} bytes, base64):\n${PNG.toString('base64')}\n`);
    const untyped = text(await call({ url: at('/untyped-binary') }));
    expect(untyped).toContain(`no Content-Type, ${PNG.length} bytes, base64`);
    expect(text(await call({ url: at('/untyped-text') }))).toContain('utf-8):\njust words');
  });

  it('cuts the body at WEB_MAX_RESPONSE_BYTES and says how much was left out', async () => {
    const out = text(await call({ url: at('/big') }));
    expect(out).toContain(`\n${'x'.repeat(LIMIT)}\n<<<end`);
    expect(out).not.toContain('x'.repeat(LIMIT + 1));
    expect(out).toContain(
      `The body was cut at ${LIMIT} bytes (WEB_MAX_RESPONSE_BYTES): ${10_000 - LIMIT} more bytes (of 10000) left out.`,
    );
  });

  it('leaves a large JSON answer as sent', async () => {
    const roomy = httpRequestTool({
      settings: testSettings({ HTTP_ALLOW_PRIVATE: 'site.test', WEB_MAX_RESPONSE_BYTES: '1000000' }),
      resolve,
    });
    const out = text(
      await roomy.handler(
        { method: 'GET', url: at('/big-json'), timeout_ms: 30_000 },
        new AbortController().signal,
      ),
    );
    expect(out).toContain('{"items":[{"i":0},{"i":1}');
  });

  it('follows redirects and lists every hop', async () => {
    const out = text(await call({ url: at('/r1') }));
    expect(out.split('\n')[0]).toBe(`GET ${at('/r1')} → HTTP 200 after 2 redirect(s)`);
    expect(out).toContain(
      `Redirects followed (each hop checked):\n  ${at('/r1')}\n  ${at('/r2')}\nFinal URL: ${at('/text')}`,
    );
    expect(out).toContain('hello, world');
  });

  it('refuses a redirect to the loopback address', async () => {
    const result = await call({ url: at('/to-loopback') });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Refused: 127.0.0.1 is a loopback address');
    expect(text(result)).toContain('HTTP_ALLOW_PRIVATE');
    expect(seen.some((s) => s.url === '/text' && s.headers.host === `127.0.0.1:${port}`)).toBe(false);
  });

  it('checks the host of every hop, not only the first', async () => {
    const result = await call({ url: at('/to-other-name') });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('other.test resolves to it');
  });

  it('refuses a private address with a message naming HTTP_ALLOW_PRIVATE', async () => {
    const strict = httpRequestTool({ settings: testSettings(), resolve });
    const result = await strict.handler(
      { method: 'GET', url: `http://127.0.0.1:${port}/text`, timeout_ms: 30_000 },
      new AbortController().signal,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('HTTP_ALLOW_PRIVATE=false does not admit it');
    expect(text(result)).toContain('add the host or its address to HTTP_ALLOW_PRIVATE');
  });

  it('gives up at timeout_ms and says what to change', async () => {
    const result = await call({ url: at('/slow'), timeout_ms: 1000 });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Timed out after 1000 ms');
    expect(text(result)).toContain('larger timeout_ms');
  });

  it('stops when the call is cancelled', async () => {
    const controller = new AbortController();
    const pending = call({ url: at('/slow') }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('was cancelled');
  });

  it('says when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const result = await call({ url: `http://site.test:${freePort}/` });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('ECONNREFUSED');
    expect(text(result)).toContain('Check the URL');
  });
});

describe('http_request refuses hostile input before sending anything', () => {
  it.each([
    ['not a url', 'Not a valid URL'],
    ['file:///etc/passwd', 'only http and https URLs can be requested, not file:'],
    ['ftp://site.test/x', 'not ftp:'],
    [`http://user:secret@site.test/`, 'URLs with credentials'],
  ])('refuses the URL %s', async (url, message) => {
    const before = seen.length;
    const result = await call({ url });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(message);
    expect(seen.length).toBe(before);
  });

  it.each(['Host', 'content-length', 'Transfer-Encoding', 'CONNECTION'])(
    'refuses to override %s',
    async (name) => {
      const result = await call({ url: at('/text'), headers: { [name]: 'x' } });
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        `The ${name} header cannot be set: the HTTP client sets it itself from the URL and the body. Leave it out.`,
      );
    },
  );

  it('refuses header values and names that would break the request', async () => {
    const split = await call({ url: at('/text'), headers: { 'X-A': 'a\r\nX-Injected: 1' } });
    expect(text(split)).toContain('contains a line break');
    const name = await call({ url: at('/text'), headers: { 'Bad Name': 'a' } });
    expect(text(name)).toContain('The header name "Bad Name" is not valid');
    const many = await call({
      url: at('/text'),
      headers: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-h${i}`, 'v'])),
    });
    expect(text(many)).toContain('101 headers given; at most 100');
  });

  it('refuses an oversized body and a body on HEAD', async () => {
    const before = seen.length;
    const big = await call({
      method: 'POST',
      url: at('/echo'),
      body: 'é'.repeat(MAX_REQUEST_BODY_BYTES / 2 + 1),
    });
    expect(big.isError).toBe(true);
    expect(text(big)).toContain(
      `The body is ${MAX_REQUEST_BODY_BYTES + 2} bytes; at most ${MAX_REQUEST_BODY_BYTES}`,
    );
    const head = await call({ method: 'HEAD', url: at('/text'), body: 'x' });
    expect(text(head)).toContain('A HEAD request has no body');
    expect(seen.length).toBe(before);
  });
});

describe('http_request arguments through MCP', () => {
  let client: Client;

  beforeAll(async () => {
    const mcp = new McpServer({ name: 'test', version: '0.0.0' });
    registerShippedTool(mcp, tool);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(clientSide);
  });

  afterAll(() => client.close());

  it('publishes the defaults and limits in its schema', async () => {
    const { tools } = await client.listTools();
    const schema = tools.find((t) => t.name === 'http_request')?.inputSchema;
    expect(schema?.required).toEqual(['url']);
    expect(schema?.properties?.timeout_ms).toMatchObject({
      minimum: 1000,
      maximum: 120_000,
      default: 30_000,
    });
  });

  it('applies the defaults', async () => {
    const result = (await client.callTool({
      name: 'http_request',
      arguments: { url: at('/text') },
    })) as CallToolResult;
    expect(text(result)).toContain(`GET ${at('/text')} → HTTP 200`);
  });

  it.each([
    [{}, 'url'],
    [{ url: 42 }, 'url'],
    [{ url: at('/text'), method: 'TRACE' }, 'method'],
    [{ url: at('/text'), headers: { a: 1 } }, 'headers'],
    [{ url: at('/text'), headers: 'Accept: */*' }, 'headers'],
    [{ url: at('/text'), body: { a: 1 } }, 'body'],
    [{ url: at('/text'), timeout_ms: 10 }, 'timeout_ms'],
    [{ url: at('/text'), timeout_ms: 'soon' }, 'timeout_ms'],
    [{ url: 'x'.repeat(9000) }, 'url'],
  ])('refuses %j, naming %s', async (args, field) => {
    const before = seen.length;
    const result = (await client.callTool({ name: 'http_request', arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Input validation error');
    expect(text(result)).toContain(field);
    expect(seen.length).toBe(before);
  });
});
