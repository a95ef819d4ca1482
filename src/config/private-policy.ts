/**
 * HTTP_ALLOW_PRIVATE: which private destinations (loopback, LAN, link-local, CGNAT…) Navi's
 * network tools may reach. `false` (the default) allows none, `true` all, and a comma-separated
 * list allows exactly the host names and CIDR ranges it names — so a user can let the agent
 * reach the home server at 192.168.1.10 and nothing else on the LAN.
 */
import ipaddr from 'ipaddr.js';

export type PrivateRange = readonly [network: ipaddr.IPv4 | ipaddr.IPv6, bits: number];

export type PrivatePolicy =
  | { readonly kind: 'none' }
  | { readonly kind: 'all' }
  | {
      readonly kind: 'list';
      /** Lower-cased host names, without a trailing dot. */
      readonly hosts: readonly string[];
      readonly ranges: readonly PrivateRange[];
      /** The list as the user wrote it, for messages. */
      readonly text: string;
    };

export const NO_PRIVATE: PrivatePolicy = { kind: 'none' };

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off', ''];

/** A host name as DNS spells it: labels of letters, digits and hyphens. */
const HOST =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** An address written in a list: IPv6, or IPv4 as four decimal numbers only. */
function readAddress(text: string): Address | undefined {
  if (!text.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(text)) return undefined;
  try {
    return parseAddress(text);
  } catch {
    return undefined;
  }
}

function parseEntry(entry: string): { host: string } | { range: PrivateRange } {
  const bare = entry.replace(/^\[(.*)\](\/\d+)?$/, '$1$2');
  if (entry.includes('://')) {
    const host = URL.canParse(entry) ? new URL(entry).hostname : 'host';
    throw new Error(`"${entry}" is a URL: write the host name alone (${host})`);
  }
  if (bare.includes('/')) {
    const [text = '', bitsText = ''] = bare.split('/');
    const address = /^\d+$/.test(bitsText) ? readAddress(text) : undefined;
    const bits = Number(bitsText);
    if (!address || bits > (address.kind() === 'ipv4' ? 32 : 128))
      throw new Error(`"${entry}" is not a CIDR range (write it like 192.168.1.0/24 or fd00::/8)`);
    return { range: [address, bits] };
  }
  const address = readAddress(bare);
  if (address) return { range: [address, address.kind() === 'ipv4' ? 32 : 128] };
  const host = bare.toLowerCase().replace(/\.$/, '');
  // A name ending in a number is how URLs spell an IPv4 address (`127.1`, `2130706433`): too easy to misread.
  if (/(^|\.)(\d+|0x[0-9a-f]*)$/.test(host))
    throw new Error(
      `"${entry}" is not an IP address as written here: spell IPv4 addresses as four numbers, like 192.168.1.10`,
    );
  if (TRUE.includes(host) || FALSE.includes(host))
    throw new Error(
      `"${entry}" cannot be part of a list: write true or false alone, or list hosts and ranges`,
    );
  if (!HOST.test(host)) throw new Error(`"${entry}" is neither a host name, an IP address nor a CIDR range`);
  return { host };
}

/** Parses the setting's text; throws an Error whose message says which entry is wrong. */
export function parsePrivatePolicy(value: string): PrivatePolicy {
  const text = value.trim();
  const lower = text.toLowerCase();
  if (FALSE.includes(lower)) return NO_PRIVATE;
  if (TRUE.includes(lower)) return { kind: 'all' };
  const hosts: string[] = [];
  const ranges: PrivateRange[] = [];
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const parsed = parseEntry(entry);
    if ('host' in parsed) hosts.push(parsed.host);
    else ranges.push(parsed.range);
  }
  if (hosts.length === 0 && ranges.length === 0) return NO_PRIVATE;
  return { kind: 'list', hosts, ranges, text };
}

/**
 * Parses an address as resolvers print it. A dotted tail becomes two hex groups first:
 * ipaddr.js would read `::127.0.0.1` (IPv4-compatible) as `::ffff:127.0.0.1` (IPv4-mapped).
 */
function parseAddress(text: string): Address {
  let bare = text.replace(/%.*$/, '');
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted?.[1] && dotted[2]) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(dotted[2])) throw new Error(`${text} is not an IP address`);
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(dotted[2]).octets;
    bare = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return ipaddr.parse(bare);
}

/** The forms an address is matched in: as written, and as IPv4 or IPv4-mapped IPv6. */
function forms(address: Address): Address[] {
  if (address.kind() === 'ipv4') return [address, (address as ipaddr.IPv4).toIPv4MappedAddress()];
  const six = address as ipaddr.IPv6;
  return six.isIPv4MappedAddress() ? [six, six.toIPv4Address()] : [six];
}

function inRange(address: Address, [network, bits]: PrivateRange): boolean {
  return forms(address).some((form) => form.kind() === network.kind() && form.match(network as never, bits));
}

/**
 * Whether the policy lets a request for `hostname` connect to the private `address`. A listed
 * host name admits whatever it resolves to; a listed range admits addresses inside it, in IPv4 or
 * IPv4-mapped IPv6 spelling alike.
 */
export function allowsPrivate(policy: PrivatePolicy, hostname: string, address: string): boolean {
  if (policy.kind === 'all') return true;
  if (policy.kind === 'none') return false;
  const host = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
  if (policy.hosts.includes(host)) return true;
  let parsed: Address;
  try {
    parsed = parseAddress(address);
  } catch {
    return false;
  }
  return policy.ranges.some((range) => inRange(parsed, range));
}

/**
 * The list's IPv4 ranges as `a.b.c.d/n` with the host bits cleared (IPv4-mapped IPv6 ranges
 * included), for the sandbox, which routes by address and cannot honour host names.
 */
export function allowedIPv4Ranges(policy: PrivatePolicy): string[] {
  if (policy.kind !== 'list') return [];
  const out = new Set<string>();
  for (const [network, bits] of policy.ranges) {
    let four: ipaddr.IPv4 | undefined;
    let fourBits = bits;
    if (network.kind() === 'ipv4') four = network as ipaddr.IPv4;
    else if ((network as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      four = (network as ipaddr.IPv6).toIPv4Address();
      fourBits = bits - 96;
    }
    if (four)
      out.add(
        `${ipaddr.IPv4.networkAddressFromCIDR(`${four.toString()}/${fourBits}`).toString()}/${fourBits}`,
      );
  }
  return [...out];
}

/** How the policy reads in a refusal message. */
export function describePolicy(policy: PrivatePolicy): string {
  if (policy.kind === 'none') return 'HTTP_ALLOW_PRIVATE=false';
  if (policy.kind === 'all') return 'HTTP_ALLOW_PRIVATE=true';
  return `HTTP_ALLOW_PRIVATE=${policy.text}`;
}
