import { describe, expect, it } from 'vitest';
import { blockedAddressReason, parseIPv4, parseIPv6 } from './ip-address.js';

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
      ['::ffff:0:7f00:1', 'loopback'],
      ['64:ff9b:1::a00:1', 'private'],
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
