/**
 * IP address parsing and classification for the SSRF guard. Accepts every spelling a URL or a
 * resolver may produce: dotted, decimal (`2130706433`), octal (`0177.0.0.1`), hex (`0x7f.1`),
 * short forms (`127.1`), IPv6 with `::`, embedded IPv4 and IPv4-mapped addresses
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:1`), brackets and zone ids.
 */

/** IPv4 as a 32-bit number, or undefined when `text` is not an IPv4 address in any spelling. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const part of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = Number.parseInt(part, 8);
    else if (/^(0|[1-9]\d*)$/.test(part)) n = Number(part);
    else return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - nums.length)) return undefined;
  let value = 0;
  nums.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return value + last;
}

/** IPv6 as 8 16-bit groups, or undefined. */
export function parseIPv6(input: string): number[] | undefined {
  let text = input.replace(/^\[|\]$/g, '');
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (!text.includes(':')) return undefined;
  // A trailing dotted IPv4 becomes two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(tail)) return undefined;
    const v4 = parseIPv4(tail);
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s === '' ? [] : s.split(':'));
  const head = parse(halves[0] as string);
  const rest = halves.length === 2 ? parse(halves[1] as string) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined;
    out.push(Number.parseInt(g, 16));
  }
  return out;
}

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;

const BLOCKED_V4: Array<[number, number, string]> = [
  [v4(0, 0, 0, 0), 8, 'unspecified ("this network")'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'carrier-grade NAT'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local / cloud metadata'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'IETF protocol assignments'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, '6to4 relay'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved / broadcast'],
  [v4(168, 63, 129, 16), 32, 'cloud metadata'],
];

function classifyV4(value: number): string | undefined {
  for (const [net, bits, label] of BLOCKED_V4) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === net) return label;
  }
  return undefined;
}

function classifyV6(g: number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) >>> 0) + g7;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0xffff) return classifyV4(embedded) ?? undefined; // IPv4-mapped
    if (g5 === 0) {
      if (g6 === 0 && g7 === 0) return 'unspecified';
      if (g6 === 0 && g7 === 1) return 'loopback';
      return classifyV4(embedded) ?? 'IPv4-compatible (deprecated)';
    }
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyV4(embedded); // NAT64
  if (g0 === 0x2002) return classifyV4(((g1 << 16) >>> 0) + g2) ?? undefined; // 6to4
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'site-local';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'discard';
  if (g0 === 0x2001 && g1 < 0x200) return 'IETF protocol assignments (Teredo…)';
  return undefined;
}

/**
 * Why `address` must not be reached (e.g. "loopback"), or undefined when it is public.
 * Anything that is not an IP address in some spelling is reported as such.
 */
export function blockedAddressReason(address: string): string | undefined {
  const six = parseIPv6(address);
  if (six) return classifyV6(six);
  const four = parseIPv4(address);
  if (four !== undefined) return classifyV4(four);
  return 'not an IP address';
}

/** True when `host` is an IP literal in any spelling (so no DNS lookup will happen). */
export function isIpLiteral(host: string): boolean {
  return parseIPv6(host) !== undefined || parseIPv4(host) !== undefined;
}
