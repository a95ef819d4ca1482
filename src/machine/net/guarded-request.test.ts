import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { needsProgram } from '../../../test/support/requirements.js';
import { NO_PRIVATE, parsePrivatePolicy } from '../../config/private-policy.js';
import {
  type GuardedRequestOptions,
  guardedRequest,
  RequestRefusedError,
  type ResolvedAddress,
} from './guarded-request.js';

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void;

/** Every request the main server (127.0.0.1) and its twin on 127.0.0.2 received, as "METHOD path". */
const hits: string[] = [];
const twinHits: string[] = [];
let port = 0;
let main: Server;
let twin: Server;
/** Called by /hang when the request arrives, so a test can abort at exactly that moment. */
let onHang: () => void = () => {};

const GZIP_BOMB = zlib.gzipSync(Buffer.alloc(50_000_000), { level: 9 });

function echo(req: IncomingMessage, body: Buffer, res: ServerResponse) {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString() }));
}

const routes: Record<string, Handler> = {
  '/ok': (_req, _body, res) => res.end('hello'),
  '/echo': echo,
  '/to-self': (_req, _body, res) => res.writeHead(302, { location: '/ok' }).end(),
  '/loop': (_req, _body, res) => res.writeHead(302, { location: '/loop' }).end(),
  '/to-loopback': (_req, _body, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` }).end(),
  '/to-mapped': (_req, _body, res) =>
    res.writeHead(302, { location: `http://[::ffff:7f00:1]:${port}/ok` }).end(),
  '/to-decimal': (_req, _body, res) => res.writeHead(307, { location: `http://2130706433:${port}/ok` }).end(),
  '/to-other-name': (_req, _body, res) =>
    res.writeHead(301, { location: `http://other.test:${port}/ok` }).end(),
  '/to-file': (_req, _body, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
  '/chain-1': (_req, _body, res) => res.writeHead(302, { location: '/chain-2' }).end(),
  '/chain-2': (_req, _body, res) => res.writeHead(308, { location: `http://0x7f.1:${port}/ok` }).end(),
  '/see-other': (_req, _body, res) => res.writeHead(303, { location: '/echo' }).end(),
  '/found': (_req, _body, res) => res.writeHead(302, { location: '/echo' }).end(),
  '/temporary': (_req, _body, res) => res.writeHead(307, { location: '/echo' }).end(),
  '/permanent': (_req, _body, res) => res.writeHead(308, { location: '/echo' }).end(),
  '/to-search-echo': (_req, _body, res) =>
    res.writeHead(307, { location: `http://search.test:${port}/echo` }).end(),
  '/big': (_req, _body, res) => res.end(Buffer.alloc(5000, 'a')),
  '/big-chunked': (_req, _body, res) => {
    res.write(Buffer.alloc(600, 'a'));
    res.end(Buffer.alloc(600, 'b'));
  },
  '/gzip': (_req, _body, res) =>
    res.writeHead(200, { 'content-encoding': 'gzip' }).end(zlib.gzipSync('zipped')),
  '/deflate': (_req, _body, res) =>
    res.writeHead(200, { 'content-encoding': 'deflate' }).end(zlib.deflateSync('deflated')),
  '/br': (_req, _body, res) =>
    res.writeHead(200, { 'content-encoding': 'br' }).end(zlib.brotliCompressSync('brotli')),
  '/gzip-empty': (_req, _body, res) => res.writeHead(204, { 'content-encoding': 'gzip' }).end(),
  '/bomb': (_req, _body, res) =>
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': GZIP_BOMB.length }).end(GZIP_BOMB),
  '/drip': (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('.'), 50);
    res.on('close', () => clearInterval(timer));
  },
  '/slow-redirect': (_req, _body, res) => {
    const timer = setTimeout(() => res.writeHead(302, { location: '/slow-redirect' }).end(), 150);
    res.on('close', () => clearTimeout(timer));
  },
  '/hang': () => onHang(),
};

function handler(log: string[], name: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      log.push(`${req.method} ${req.url}`);
      const path = (req.url ?? '').split('?')[0] ?? '';
      const route = name === 'twin' ? (routes['/ok'] as Handler) : routes[path];
      if (route) route(req, Buffer.concat(chunks), res);
      else res.writeHead(404).end('not found');
    });
  };
}

beforeAll(async () => {
  main = createServer(handler(hits, 'main'));
  await new Promise<void>((r) => main.listen(0, '127.0.0.1', r));
  port = (main.address() as { port: number }).port;
  // Same port on another loopback address: a request that ends up here went to the wrong address.
  twin = createServer(handler(twinHits, 'twin'));
  await new Promise<void>((resolve, reject) => {
    twin.once('error', reject);
    twin.listen(port, '127.0.0.2', resolve);
  });
});

afterAll(async () => {
  for (const server of [main, twin]) {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

beforeEach(() => {
  hits.length = 0;
  twinHits.length = 0;
  onHang = () => {};
});

/** Fake DNS: every test name lives on the main server's address. */
const names: Record<string, ResolvedAddress[]> = {
  'allowed.test': [{ address: '127.0.0.1', family: 4 }],
  'other.test': [{ address: '127.0.0.1', family: 4 }],
  'search.test': [{ address: '127.0.0.1', family: 4 }],
  'localhost.': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
  'metadata.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
};

const resolve = async (host: string) => {
  const found = names[host];
  if (!found) throw new Error(`unknown host ${host}`);
  return found;
};

const options = (over: Partial<GuardedRequestOptions> = {}): GuardedRequestOptions => ({
  policy: parsePrivatePolicy('allowed.test'),
  resolve,
  maxBytes: 1000,
  timeoutMs: 5000,
  ...over,
});
const url = (path: string, host = 'allowed.test') => `http://${host}:${port}${path}`;

describe('guardedRequest: addresses', () => {
  it('reaches a host the policy lists, and a same-host redirect', async () => {
    const res = await guardedRequest(url('/to-self'), options());
    expect(res).toMatchObject({ status: 200, statusText: 'OK', finalUrl: url('/ok'), address: '127.0.0.1' });
    expect(res.body.toString()).toBe('hello');
    expect(res.redirects).toEqual([url('/to-self')]);
    expect(res.truncated).toBe(false);
  });

  it('refuses loopback, private and metadata addresses in every spelling, before connecting', async () => {
    const literals = [
      '127.0.0.1',
      '127.0.0.1.',
      '2130706433',
      '0177.0.0.1',
      '0x7f.0.0.1',
      '0x7f000001',
      '017700000001',
      '127.1',
      '0x7f.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[0:0:0:0:0:ffff:127.0.0.1]',
      '[::127.0.0.1]',
      '[::ffff:0:7f00:1]',
      '[64:ff9b::127.0.0.1]',
      '[2002:7f00:1::]',
      '0',
      '0x0',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.100.100.200',
      '169.254.169.254',
      '[::ffff:a9fe:a9fe]',
      '[fd00:ec2::254]',
      '[fe80::1]',
    ];
    for (const host of literals) {
      const attempt = guardedRequest(url('/ok', host), options({ policy: NO_PRIVATE }));
      await expect(attempt, host).rejects.toThrow(RequestRefusedError);
      await expect(attempt, host).rejects.toThrow(
        /^Refused: \S+ is a .* address, and HTTP_ALLOW_PRIVATE=false/,
      );
    }
    expect(hits).toEqual([]);
  });

  it('names the address, the reason and the setting in a refusal', async () => {
    await expect(guardedRequest(url('/ok', '0x7f.1'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 is a loopback address, and HTTP_ALLOW_PRIVATE=allowed.test does not admit it. ' +
        'To let Navi reach it, add the host or its address to HTTP_ALLOW_PRIVATE',
    );
    await expect(guardedRequest(url('/ok', 'metadata.test'), options())).rejects.toThrow(
      'Refused: ::ffff:169.254.169.254 (metadata.test resolves to it) is a link-local / cloud metadata address',
    );
    await expect(guardedRequest(url('/ok', 'localhost.'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 (localhost resolves to it) is a loopback address',
    );
  });

  it('checks every address a name resolves to, not just the first', async () => {
    await expect(guardedRequest(url('/ok', 'mixed.test'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 (mixed.test resolves to it) is a loopback address',
    );
    expect(hits).toEqual([]);
  });

  it('lets a listed host name reach its address while the bare address stays refused', async () => {
    const policy = parsePrivatePolicy('allowed.test');
    const res = await guardedRequest(url('/ok'), options({ policy }));
    expect(res.body.toString()).toBe('hello');
    await expect(guardedRequest(url('/ok', '127.0.0.1'), options({ policy }))).rejects.toThrow(
      'Refused: 127.0.0.1 is a loopback address',
    );
    await expect(guardedRequest(url('/ok', 'other.test'), options({ policy }))).rejects.toThrow(
      'Refused: 127.0.0.1 (other.test resolves to it)',
    );
    expect(hits).toEqual(['GET /ok']);
  });

  it('admits listed ranges and addresses, and everything with true', async () => {
    for (const setting of ['127.0.0.0/8', '127.0.0.1', '::ffff:127.0.0.1', 'true']) {
      const res = await guardedRequest(
        url('/ok', '127.0.0.1'),
        options({ policy: parsePrivatePolicy(setting) }),
      );
      expect(res.body.toString(), setting).toBe('hello');
    }
    await expect(
      guardedRequest(url('/ok', '127.0.0.2'), options({ policy: parsePrivatePolicy('127.0.0.1') })),
    ).rejects.toThrow(
      'Refused: 127.0.0.2 is a loopback address, and HTTP_ALLOW_PRIVATE=127.0.0.1 does not admit it',
    );
    expect(twinHits).toEqual([]);
  });

  it('resolves once and connects to the address it checked, whatever DNS answers next (rebinding)', async () => {
    const answers = ['127.0.0.1', '127.0.0.2'];
    const asked: string[] = [];
    const rebinding = async (host: string): Promise<ResolvedAddress[]> => {
      asked.push(host);
      const address = answers[Math.min(asked.length - 1, answers.length - 1)] as string;
      return [{ address, family: 4 }];
    };
    const policy = parsePrivatePolicy('127.0.0.1');
    const res = await guardedRequest(url('/ok', 'rebind.test'), options({ policy, resolve: rebinding }));
    expect(res.body.toString()).toBe('hello');
    expect(res.address).toBe('127.0.0.1');
    expect(asked).toEqual(['rebind.test']);
    expect(hits).toEqual(['GET /ok']);
    expect(twinHits).toEqual([]);
    // The second answer alone is refused: the policy really tells the two apart.
    await expect(
      guardedRequest(url('/ok', 'rebind.test'), options({ policy, resolve: rebinding })),
    ).rejects.toThrow('Refused: 127.0.0.2 (rebind.test resolves to it) is a loopback address');
    expect(twinHits).toEqual([]);
  });
});

describe('guardedRequest: redirects', () => {
  it('refuses a redirect chain from an allowed host that ends on loopback, in any spelling', async () => {
    for (const path of ['/to-loopback', '/to-mapped', '/to-decimal', '/chain-1']) {
      await expect(guardedRequest(url(path), options()), path).rejects.toThrow(
        /^Refused: \S+ is a loopback address/,
      );
    }
    await expect(guardedRequest(url('/to-other-name'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 (other.test resolves to it) is a loopback address',
    );
    expect(hits.filter((h) => h === 'GET /ok')).toEqual([]);
  });

  it('stops endless redirects, and returns the redirect itself when told to follow none', async () => {
    await expect(guardedRequest(url('/loop'), options())).rejects.toThrow('Refused: more than 5 redirects');
    expect(hits).toHaveLength(6);
    await expect(guardedRequest(url('/loop'), options({ maxRedirects: 2 }))).rejects.toThrow(
      'Refused: more than 2 redirects',
    );
    const res = await guardedRequest(url('/loop'), options({ maxRedirects: 0 }));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/loop');
    expect(res.redirects).toEqual([]);
  });

  it('refuses a redirect to another scheme', async () => {
    await expect(guardedRequest(url('/to-file'), options())).rejects.toThrow(
      `Refused: only http and https URLs can be requested, not file: (file:///etc/passwd). (redirected to by ${url('/to-file')})`,
    );
  });

  it('turns POST into GET without body on 301/302/303, and keeps method and body on 307/308', async () => {
    const post = (path: string) =>
      guardedRequest(
        url(path),
        options({
          method: 'POST',
          body: 'payload',
          headers: { 'content-type': 'text/plain', 'x-keep': 'yes' },
        }),
      ).then((r) => JSON.parse(r.body.toString()));
    for (const path of ['/see-other', '/found']) {
      const seen = await post(path);
      expect(seen, path).toMatchObject({ method: 'GET', body: '', headers: { 'x-keep': 'yes' } });
      expect(seen.headers['content-type'], path).toBeUndefined();
    }
    for (const path of ['/temporary', '/permanent']) {
      expect(await post(path), path).toMatchObject({
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain', 'x-keep': 'yes' },
      });
    }
    const put = await guardedRequest(url('/see-other'), options({ method: 'PUT', body: 'x' }));
    expect(JSON.parse(put.body.toString()).method).toBe('GET');
  });

  it('does not carry credentials to another origin', async () => {
    const policy = parsePrivatePolicy('allowed.test,search.test');
    const res = await guardedRequest(
      url('/to-search-echo'),
      options({ policy, headers: { Authorization: 'Bearer secret', 'x-other': '1' } }),
    );
    const seen = JSON.parse(res.body.toString());
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-other']).toBe('1');
  });
});

describe('guardedRequest: trusted endpoints', () => {
  it('reaches the configured host although it is private, but checks redirects to other hosts', async () => {
    const trusted = options({ policy: NO_PRIVATE, trusted: true });
    const res = await guardedRequest(url('/to-self', 'search.test'), trusted);
    expect(res.body.toString()).toBe('hello');
    await expect(guardedRequest(url('/to-other-name', 'search.test'), trusted)).rejects.toThrow(
      'Refused: 127.0.0.1 (other.test resolves to it) is a loopback address, and HTTP_ALLOW_PRIVATE=false',
    );
    await expect(guardedRequest(url('/to-loopback', 'search.test'), trusted)).rejects.toThrow(
      'Refused: 127.0.0.1 is a loopback address',
    );
    await expect(
      guardedRequest(url('/ok', 'search.test'), options({ policy: NO_PRIVATE, trusted: false })),
    ).rejects.toThrow('Refused: 127.0.0.1 (search.test resolves to it)');
  });
});

describe('guardedRequest: methods', () => {
  it('sends POST, PUT, PATCH and DELETE with body and headers', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await guardedRequest(
        url('/echo?x=1'),
        options({
          method,
          body: Buffer.from(`{"m":"${method}"}`),
          headers: { 'content-type': 'application/json' },
        }),
      );
      expect(JSON.parse(res.body.toString()), method).toMatchObject({
        method,
        url: '/echo?x=1',
        body: `{"m":"${method}"}`,
        headers: { 'content-type': 'application/json', 'content-length': String(`{"m":"${method}"}`.length) },
      });
    }
  });

  it('answers HEAD with headers and no body', async () => {
    const res = await guardedRequest(url('/echo'), options({ method: 'HEAD' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.length).toBe(0);
    expect(hits).toEqual(['HEAD /echo']);
  });
});

describe('guardedRequest: bodies', () => {
  it('refuses or truncates a body over the cap', async () => {
    for (const path of ['/big', '/big-chunked']) {
      await expect(guardedRequest(url(path), options()), path).rejects.toThrow(
        /^Refused: the response body is (5000 bytes, )?over the 1000-byte limit\.$/,
      );
      const res = await guardedRequest(url(path), options({ onOversize: 'truncate' }));
      expect(res.truncated, path).toBe(true);
      expect(res.body.length, path).toBe(1000);
    }
    const whole = await guardedRequest(url('/big'), options({ maxBytes: 5000 }));
    expect(whole.truncated).toBe(false);
    expect(whole.body.length).toBe(5000);
  });

  it('decompresses gzip, deflate and br', async () => {
    for (const [path, text] of [
      ['/gzip', 'zipped'],
      ['/deflate', 'deflated'],
      ['/br', 'brotli'],
    ]) {
      const res = await guardedRequest(url(path as string), options());
      expect(res.body.toString(), path).toBe(text);
      expect(res.headers['content-encoding'], path).toBeUndefined();
    }
    const empty = await guardedRequest(url('/gzip-empty'), options());
    expect(empty.status).toBe(204);
    expect(empty.body.length).toBe(0);
  });

  it('applies the cap to decompressed bytes (gzip bomb)', async () => {
    expect(GZIP_BOMB.length).toBeLessThan(1_000_000);
    const limit = { maxBytes: 1_000_000 };
    await expect(guardedRequest(url('/bomb'), options(limit))).rejects.toThrow(
      'Refused: the response body is over the 1000000-byte limit once decompressed.',
    );
    const res = await guardedRequest(url('/bomb'), options({ ...limit, onOversize: 'truncate' }));
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(1_000_000);
  });
});

describe('guardedRequest: time and aborts', () => {
  it('ends a slow-drip body at the timeout with a clear error', async () => {
    await expect(
      guardedRequest(url('/drip'), options({ timeoutMs: 400, maxBytes: 1_000_000 })),
    ).rejects.toThrow(
      `Timed out after 400 ms requesting ${url('/drip')} (the limit covers every redirect and the whole body).`,
    );
  });

  it('counts every redirect hop against one timeout', async () => {
    await expect(
      guardedRequest(url('/slow-redirect'), options({ timeoutMs: 400, maxRedirects: 100 })),
    ).rejects.toThrow('Timed out after 400 ms');
    expect(hits.length).toBeGreaterThan(1);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    onHang = () => controller.abort(new Error('the user stopped it'));
    await expect(guardedRequest(url('/hang'), options({ signal: controller.signal }))).rejects.toThrow(
      'the user stopped it',
    );
    const already = AbortSignal.abort();
    await expect(guardedRequest(url('/ok'), options({ signal: already }))).rejects.toThrow();
    expect(hits).toEqual(['GET /hang']);
  });
});

describe('guardedRequest: bad input', () => {
  it('refuses other schemes, credentials and malformed URLs', async () => {
    for (const bad of [
      'file:///etc/passwd',
      'ftp://allowed.test/',
      'gopher://allowed.test:70/',
      'data:,x',
      'javascript:alert(1)',
    ]) {
      await expect(guardedRequest(bad, options()), bad).rejects.toThrow('Refused: only http and https URLs');
    }
    await expect(guardedRequest(url('/ok', 'u:p@allowed.test'), options())).rejects.toThrow(
      'Refused: URLs with credentials',
    );
    for (const bad of ['', 'not a url', 'http://', '/relative']) {
      await expect(guardedRequest(bad, options()), bad).rejects.toThrow('Not a valid URL');
    }
    expect(hits).toEqual([]);
  });

  it('rejects nonsensical limits', async () => {
    await expect(guardedRequest(url('/ok'), options({ maxBytes: 0 }))).rejects.toThrow(
      'maxBytes must be a positive',
    );
    await expect(guardedRequest(url('/ok'), options({ maxBytes: Number.NaN }))).rejects.toThrow('maxBytes');
    await expect(guardedRequest(url('/ok'), options({ timeoutMs: -1 }))).rejects.toThrow('timeoutMs');
    await expect(guardedRequest(url('/ok'), options({ maxRedirects: 1.5 }))).rejects.toThrow('maxRedirects');
  });

  it('reports a name that does not resolve', async () => {
    await expect(guardedRequest(url('/ok', 'nowhere.test'), options())).rejects.toThrow(
      'Could not resolve nowhere.test: unknown host nowhere.test',
    );
  });
});

describe.skipIf(!needsProgram('openssl', 'guarded HTTPS test'))('guardedRequest: https', () => {
  it('connects to the pinned address and still verifies the certificate against the name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'navi-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=tls.test',
        '-addext',
        'subjectAltName=DNS:tls.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const seen: string[] = [];
    const server = createTlsServer(
      {
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
        SNICallback: (name, done) => {
          seen.push(name);
          done(null);
        },
      },
      (_req, res) => res.end('secure'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const tlsPort = (server.address() as { port: number }).port;
    try {
      const tlsResolve = async () => [{ address: '127.0.0.1', family: 4 as const }];
      // The handshake happens (at the pinned address, with the name as SNI), and the
      // self-signed certificate is refused: verification is never switched off.
      await expect(
        guardedRequest(
          `https://tls.test:${tlsPort}/`,
          options({ policy: parsePrivatePolicy('tls.test'), resolve: tlsResolve }),
        ),
      ).rejects.toThrow(/self[- ]signed certificate/);
      expect(seen).toEqual(['tls.test']);
      await expect(
        guardedRequest(`https://tls.test:${tlsPort}/`, options({ policy: NO_PRIVATE, resolve: tlsResolve })),
      ).rejects.toThrow(RequestRefusedError);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
