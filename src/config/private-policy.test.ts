import { describe, expect, it } from 'vitest';
import {
  allowedIPv4Ranges,
  allowsPrivate,
  describePolicy,
  NO_PRIVATE,
  parsePrivatePolicy,
} from './private-policy.js';
import { loadSettings, settingText } from './settings.js';

describe('parsePrivatePolicy', () => {
  it('reads true and false in their usual spellings', () => {
    for (const yes of ['true', 'TRUE', ' 1 ', 'yes', 'on'])
      expect(parsePrivatePolicy(yes), yes).toEqual({ kind: 'all' });
    for (const no of ['false', '0', 'no', 'off', '', '   ', ',', ' , '])
      expect(parsePrivatePolicy(no), no).toBe(NO_PRIVATE);
  });

  it('reads a list of host names, addresses and CIDR ranges', () => {
    const policy = parsePrivatePolicy(
      ' NAS.lan. , 192.168.1.10,10.0.0.0/8, [fd00::1], [fd00::]/8, ::ffff:172.16.0.0/108 ',
    );
    expect(policy.kind).toBe('list');
    if (policy.kind !== 'list') return;
    expect(policy.hosts).toEqual(['nas.lan']);
    expect(policy.ranges.map(([net, bits]) => `${net.toString()}/${bits}`)).toEqual([
      '192.168.1.10/32',
      '10.0.0.0/8',
      'fd00::1/128',
      'fd00::/8',
      '::ffff:ac10:0/108',
    ]);
    expect(policy.text).toBe(
      'NAS.lan. , 192.168.1.10,10.0.0.0/8, [fd00::1], [fd00::]/8, ::ffff:172.16.0.0/108',
    );
  });

  it('names the wrong entry and says how to write it', () => {
    const cases: Array<[string, string]> = [
      ['10.0.0.0/33', '"10.0.0.0/33" is not a CIDR range (write it like 192.168.1.0/24 or fd00::/8)'],
      ['nas.lan,10.0.0.0/x', '"10.0.0.0/x" is not a CIDR range'],
      ['0x7f.1/8', '"0x7f.1/8" is not a CIDR range'],
      ['192.168.1.300', '"192.168.1.300" is not an IP address as written here'],
      ['127.1', '"127.1" is not an IP address as written here: spell IPv4 addresses as four numbers'],
      ['nas.lan,2130706433', '"2130706433" is not an IP address as written here'],
      ['0x7f000001', '"0x7f000001" is not an IP address as written here'],
      ['true,nas.lan', '"true" cannot be part of a list: write true or false alone'],
      ['nas.lan:8080', '"nas.lan:8080" is neither a host name, an IP address nor a CIDR range'],
      ['http://nas.lan', '"http://nas.lan" is a URL: write the host name alone (nas.lan)'],
      ['https://10.0.0.1/x', '"https://10.0.0.1/x" is a URL: write the host name alone (10.0.0.1)'],
      ['*.lan', '"*.lan" is neither a host name'],
      ['a..b', '"a..b" is neither a host name'],
      [`${'a'.repeat(64)}.lan`, 'is neither a host name'],
    ];
    for (const [text, message] of cases) expect(() => parsePrivatePolicy(text), text).toThrow(message);
  });
});

describe('allowsPrivate', () => {
  it('admits nothing with false and everything with true', () => {
    expect(allowsPrivate(NO_PRIVATE, 'nas.lan', '192.168.1.10')).toBe(false);
    expect(allowsPrivate(parsePrivatePolicy('true'), 'anything', '127.0.0.1')).toBe(true);
  });

  it('admits a listed host name whatever it resolves to, in any case and with a trailing dot', () => {
    const policy = parsePrivatePolicy('nas.lan');
    for (const host of ['nas.lan', 'NAS.LAN', 'nas.lan.'])
      expect(allowsPrivate(policy, host, '192.168.1.10'), host).toBe(true);
    expect(allowsPrivate(policy, 'other.lan', '192.168.1.10')).toBe(false);
    expect(allowsPrivate(policy, 'sub.nas.lan', '192.168.1.10')).toBe(false);
    // The literal address is not the name.
    expect(allowsPrivate(policy, '192.168.1.10', '192.168.1.10')).toBe(false);
  });

  it('admits addresses inside a listed range, in IPv4 and IPv4-mapped spellings alike', () => {
    const policy = parsePrivatePolicy('192.168.1.0/24,fd00::/8,::ffff:10.0.0.0/104');
    expect(allowsPrivate(policy, 'x', '192.168.1.200')).toBe(true);
    expect(allowsPrivate(policy, 'x', '::ffff:192.168.1.200')).toBe(true);
    expect(allowsPrivate(policy, 'x', '::ffff:c0a8:1c8')).toBe(true);
    expect(allowsPrivate(policy, 'x', '192.168.2.1')).toBe(false);
    expect(allowsPrivate(policy, 'x', 'fd12::1')).toBe(true);
    expect(allowsPrivate(policy, 'x', 'fe80::1%eth0')).toBe(false);
    expect(allowsPrivate(policy, 'x', '10.9.8.7')).toBe(true);
    expect(allowsPrivate(policy, 'x', '11.0.0.1')).toBe(false);
  });

  it('admits exactly the listed address, whichever family spells it', () => {
    for (const text of ['127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1/128']) {
      const policy = parsePrivatePolicy(text);
      expect(allowsPrivate(policy, 'x', '127.0.0.1'), text).toBe(true);
      expect(allowsPrivate(policy, 'x', '::ffff:127.0.0.1'), text).toBe(true);
      expect(allowsPrivate(policy, 'x', '127.0.0.2'), text).toBe(false);
      expect(allowsPrivate(policy, 'x', '::1'), text).toBe(false);
      expect(allowsPrivate(policy, 'x', '::127.0.0.1'), text).toBe(false);
    }
  });

  it('admits nothing for an address it cannot read', () => {
    const policy = parsePrivatePolicy('192.168.1.0/24');
    for (const bad of ['', 'nas.lan', '192.168.1', '300.1.1.1', '::g'])
      expect(allowsPrivate(policy, 'x', bad), bad).toBe(false);
  });
});

describe('allowedIPv4Ranges', () => {
  it('gives the IPv4 ranges with host bits cleared, without names, IPv6 or duplicates', () => {
    const policy = parsePrivatePolicy(
      'nas.lan,192.168.1.10,10.1.2.3/8,10.0.0.0/8,fd00::/8,::ffff:172.16.5.0/120,::ffff:0:0/80',
    );
    expect(allowedIPv4Ranges(policy)).toEqual(['192.168.1.10/32', '10.0.0.0/8', '172.16.5.0/24']);
    expect(allowedIPv4Ranges(NO_PRIVATE)).toEqual([]);
    expect(allowedIPv4Ranges(parsePrivatePolicy('true'))).toEqual([]);
  });
});

describe('HTTP_ALLOW_PRIVATE as a setting', () => {
  it('is parsed, described and spelt back', () => {
    expect(loadSettings({}).HTTP_ALLOW_PRIVATE).toEqual(NO_PRIVATE);
    const settings = loadSettings({ HTTP_ALLOW_PRIVATE: 'nas.lan, 192.168.1.0/24' });
    expect(describePolicy(settings.HTTP_ALLOW_PRIVATE)).toBe('HTTP_ALLOW_PRIVATE=nas.lan, 192.168.1.0/24');
    expect(settingText(settings, 'HTTP_ALLOW_PRIVATE')).toBe('nas.lan, 192.168.1.0/24');
    expect(describePolicy(loadSettings({ HTTP_ALLOW_PRIVATE: 'yes' }).HTTP_ALLOW_PRIVATE)).toBe(
      'HTTP_ALLOW_PRIVATE=true',
    );
    expect(describePolicy(NO_PRIVATE)).toBe('HTTP_ALLOW_PRIVATE=false');
  });

  it('refuses a bad list at start-up, naming the entry', () => {
    expect(() => loadSettings({ HTTP_ALLOW_PRIVATE: 'nas.lan,10.0.0.0/99' })).toThrow(
      '"10.0.0.0/99" is not a CIDR range (write it like 192.168.1.0/24 or fd00::/8); accepts true, false, or a comma-separated list of hosts and CIDR ranges',
    );
  });
});
