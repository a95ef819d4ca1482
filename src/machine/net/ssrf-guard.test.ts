import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedAddressReason, parseIPv4, parseIPv6 } from './ip-address.js';
import { type GuardedFetchOptions, guardedFetch } from './ssrf-guard.js';

describe('address classification', () => {
  it('parses every IPv4 spelling', () => {
    const loop = 0x7f000001;
    for (const s of [
      '127.0.0.1',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '0x7f.0.0.1',
      '127.1',
      '0x7f.1',
      '017700000001',
    ]) {
      expect(parseIPv4(s), s).toBe(loop);
    }
    expect(parseIPv4('256.0.0.1')).toBeUndefined();
    expect(parseIPv4('example.com')).toBeUndefined();
  });

  it('parses IPv6 with compression, embedded IPv4 and brackets', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('[0:0:0:0:0:ffff:7f00:1]')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6('::ffff:127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('1::2::3')).toBeUndefined();
  });

  it('blocks loopback, private, link-local, CGNAT, ULA, multicast and metadata in every spelling', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'],
      ['2130706433', 'loopback'],
      ['0177.0.0.1', 'loopback'],
      ['0x7f.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.20.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['169.254.169.254', 'link-local / cloud metadata'],
      ['168.63.129.16', 'cloud metadata'],
      ['0.0.0.0', 'unspecified ("this network")'],
      ['224.0.0.1', 'multicast'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
      ['::ffff:a9fe:a9fe', 'link-local / cloud metadata'],
      ['64:ff9b::10.0.0.1', 'private'],
      ['2002:7f00:1::', 'loopback'],
      ['fd00:ec2::254', 'unique-local'],
      ['fc00::1', 'unique-local'],
      ['fe80::1', 'link-local'],
      ['ff02::1', 'multicast'],
      ['::8.8.8.8', 'IPv4-compatible (deprecated)'],
      ['::127.0.0.1', 'loopback'],
      ['fe80::1%eth0', 'link-local'],
      ['::ffff:0177.0.0.1', 'not an IP address'],
    ];
    for (const [address, reason] of cases) expect(blockedAddressReason(address), address).toBe(reason);
    for (const ok of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(blockedAddressReason(ok), ok).toBeUndefined();
    }
  });
});

describe('guardedFetch against a local server', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/ok') return res.end('hello');
      if (req.url === '/to-loopback')
        return res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` }).end();
      if (req.url === '/to-mapped')
        return res.writeHead(302, { location: `http://[::ffff:7f00:1]:${port}/ok` }).end();
      if (req.url === '/to-decimal')
        return res.writeHead(302, { location: `http://2130706433:${port}/ok` }).end();
      if (req.url === '/to-name')
        return res.writeHead(301, { location: `http://rebind.test:${port}/ok` }).end();
      if (req.url === '/to-self') return res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/big') return res.end(Buffer.alloc(5000));
      if (req.url === '/slow') return; // never answers
      return res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  // Only the first hop's name may reach the test server on loopback.
  const options = (over: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({
    allowPrivate: false,
    resolve: async (host) => {
      if (host === 'images.test' || host === 'rebind.test') return [{ address: '127.0.0.1', family: 4 }];
      throw new Error(`unknown host ${host}`);
    },
    allowAddress: (host, address) => host === 'images.test' && address === '127.0.0.1',
    maxBytes: 1000,
    timeoutMs: 5000,
    ...over,
  });
  const url = (path: string) => `http://images.test:${port}${path}`;

  it('fetches from an allowed host and follows a same-host redirect', async () => {
    const res = await guardedFetch(url('/to-self'), options());
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('hello');
    expect(res.finalUrl).toBe(url('/ok'));
  });

  it('refuses a redirect to a loopback address in any spelling', async () => {
    await expect(guardedFetch(url('/to-loopback'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 is a loopback address; Navi does not fetch from private networks (HTTP_ALLOW_PRIVATE=false).',
    );
    await expect(guardedFetch(url('/to-mapped'), options())).rejects.toThrow(
      'Refused: ::ffff:7f00:1 is a loopback address',
    );
    await expect(guardedFetch(url('/to-decimal'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 is a loopback address',
    );
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    await expect(guardedFetch(url('/to-name'), options())).rejects.toThrow(
      'Refused: 127.0.0.1 (rebind.test resolves to it) is a loopback address',
    );
  });

  it('refuses direct private URLs, and allows them with HTTP_ALLOW_PRIVATE', async () => {
    await expect(guardedFetch(`http://127.0.0.1:${port}/ok`, options())).rejects.toThrow(
      'is a loopback address',
    );
    await expect(guardedFetch(`http://[::1]:${port}/ok`, options())).rejects.toThrow(
      'Refused: ::1 is a loopback address',
    );
    await expect(guardedFetch('http://169.254.169.254/latest/meta-data', options())).rejects.toThrow(
      'cloud metadata',
    );
    const res = await guardedFetch(`http://127.0.0.1:${port}/to-loopback`, options({ allowPrivate: true }));
    expect(res.body.toString()).toBe('hello');
  });

  it('stops after five redirects', async () => {
    await expect(guardedFetch(url('/loop'), options())).rejects.toThrow('Refused: more than 5 redirects');
  });

  it('enforces the size limit and the timeout', async () => {
    await expect(guardedFetch(url('/big'), options())).rejects.toThrow('over the 1000-byte limit');
    await expect(guardedFetch(url('/slow'), options({ timeoutMs: 300 }))).rejects.toThrow(
      'Timed out after 300 ms',
    );
  });

  it('refuses other schemes and credentials', async () => {
    await expect(guardedFetch('file:///etc/passwd', options())).rejects.toThrow('only http and https');
    await expect(guardedFetch(`http://u:p@images.test:${port}/ok`, options())).rejects.toThrow('credentials');
  });
});
