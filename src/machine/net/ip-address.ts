/**
 * IP address parsing and classification for the SSRF guard. Parsing is ipaddr.js, which reads
 * every spelling a URL or a resolver may produce: dotted, decimal (`2130706433`), octal
 * (`0177.0.0.1`), hex (`0x7f.1`), short forms (`127.1`), IPv6 with `::`, embedded IPv4 and
 * IPv4-mapped addresses (`::ffff:127.0.0.1`, `::ffff:7f00:1`) and zone ids; brackets are
 * removed here. The blocked ranges and their labels are ours, so a refusal can say why.
 */
import ipaddr from 'ipaddr.js';

type V4 = ipaddr.IPv4;
type V6 = ipaddr.IPv6;

function toV4(text: string): V4 | undefined {
  return ipaddr.IPv4.isValid(text) ? ipaddr.IPv4.parse(text) : undefined;
}

function toV6(input: string): V6 | undefined {
  let text = input.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!text.includes(':')) return undefined;
  // A dotted tail becomes two hex groups before ipaddr.js sees it: it reads `::8.8.8.8`
  // (IPv4-compatible, as resolvers print it) as IPv4-mapped, and `0177` in a tail as decimal
  // where URL parsers and resolvers refuse a leading zero.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(tail) || /(^|\.)0\d/.test(tail)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(tail).octets;
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return ipaddr.IPv6.isValid(text) ? ipaddr.IPv6.parse(text) : undefined;
}

/** IPv4 as a 32-bit number, or undefined when `text` is not an IPv4 address in any spelling. */
export function parseIPv4(text: string): number | undefined {
  const address = toV4(text);
  if (!address) return undefined;
  return address.octets.reduce((value, octet) => value * 256 + octet, 0);
}

/** IPv6 as 8 16-bit groups (brackets and a zone id allowed), or undefined. */
export function parseIPv6(input: string): number[] | undefined {
  return toV6(input)?.parts.slice();
}

/** The dotted form of an IPv4 address in any spelling, or undefined. */
export function canonicalIPv4(text: string): string | undefined {
  return toV4(text)?.toString();
}

type Range<T> = [T, number, string];

const v4Range = (cidr: string, label: string): Range<V4> => {
  const [net, bits] = ipaddr.IPv4.parseCIDR(cidr);
  return [net, bits, label];
};
const v6Range = (cidr: string, label: string): Range<V6> => {
  const [net, bits] = ipaddr.IPv6.parseCIDR(cidr);
  return [net, bits, label];
};

const BLOCKED_V4: Range<V4>[] = [
  v4Range('0.0.0.0/8', 'unspecified ("this network")'),
  v4Range('10.0.0.0/8', 'private'),
  v4Range('100.64.0.0/10', 'carrier-grade NAT'),
  v4Range('127.0.0.0/8', 'loopback'),
  v4Range('169.254.0.0/16', 'link-local / cloud metadata'),
  v4Range('172.16.0.0/12', 'private'),
  v4Range('192.0.0.0/24', 'IETF protocol assignments'),
  v4Range('192.0.2.0/24', 'documentation'),
  v4Range('192.88.99.0/24', '6to4 relay'),
  v4Range('192.168.0.0/16', 'private'),
  v4Range('198.18.0.0/15', 'benchmarking'),
  v4Range('198.51.100.0/24', 'documentation'),
  v4Range('203.0.113.0/24', 'documentation'),
  v4Range('224.0.0.0/4', 'multicast'),
  v4Range('240.0.0.0/4', 'reserved / broadcast'),
  v4Range('168.63.129.16/32', 'cloud metadata'),
];

const BLOCKED_V6: Range<V6>[] = [
  v6Range('fc00::/7', 'unique-local'),
  v6Range('fe80::/10', 'link-local'),
  v6Range('fec0::/10', 'site-local'),
  v6Range('ff00::/8', 'multicast'),
  v6Range('2001:db8::/32', 'documentation'),
  v6Range('100::/64', 'discard'),
  v6Range('2001::/23', 'IETF protocol assignments (Teredo…)'),
];

const MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');
const COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const LOCAL_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');
const TRANSLATED = ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

function classifyV4(address: V4): string | undefined {
  return BLOCKED_V4.find(([net, bits]) => address.match(net, bits))?.[2];
}

/** The IPv4 address held in two 16-bit groups. */
function fromGroups(high: number, low: number): V4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

function classifyV6(address: V6): string | undefined {
  const g = address.parts;
  const last = fromGroups(g[6] ?? 0, g[7] ?? 0);
  // Addresses that carry an IPv4 address reach that address: judge them by it.
  if (
    address.match(MAPPED) ||
    address.match(NAT64) ||
    address.match(LOCAL_NAT64) ||
    address.match(TRANSLATED)
  )
    return classifyV4(last);
  if (address.match(COMPATIBLE)) {
    if (address.toNormalizedString() === '0:0:0:0:0:0:0:0') return 'unspecified';
    if (address.toNormalizedString() === '0:0:0:0:0:0:0:1') return 'loopback';
    return classifyV4(last) ?? 'IPv4-compatible (deprecated)';
  }
  if (address.match(SIX_TO_FOUR)) return classifyV4(fromGroups(g[1] ?? 0, g[2] ?? 0));
  return BLOCKED_V6.find(([net, bits]) => address.match(net, bits))?.[2];
}

/**
 * Why `address` must not be reached (e.g. "loopback"), or undefined when it is public.
 * Anything that is not an IP address in some spelling is reported as such.
 */
export function blockedAddressReason(address: string): string | undefined {
  const six = toV6(address);
  if (six) return classifyV6(six);
  const four = toV4(address);
  if (four) return classifyV4(four);
  return 'not an IP address';
}

/** True when `host` is an IP literal in any spelling (so no DNS lookup will happen). */
export function isIpLiteral(host: string): boolean {
  return toV6(host) !== undefined || toV4(host) !== undefined;
}
