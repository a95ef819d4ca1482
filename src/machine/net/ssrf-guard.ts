/**
 * HTTP(S) GET that cannot be pointed at the machine's own network (SSRF guard).
 *
 * Every address a host name resolves to is checked inside the socket's `lookup`, and the socket
 * connects to exactly the address that was checked — a second, different DNS answer
 * (rebinding) never reaches `connect`. IP literals, which skip DNS, are checked before the
 * request. Redirects are followed by hand (at most `maxRedirects`), each hop checked again.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { blockedAddressReason, canonicalIPv4, isIpLiteral, parseIPv6 } from './ip-address.js';

export class FetchRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchRefusedError';
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface GuardedFetchOptions {
  /** HTTP_ALLOW_PRIVATE: skip the address check entirely. */
  allowPrivate: boolean;
  /** Resolver (default: the system's, every address). Tests map fake names here. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Lets specific (hostname, address) pairs through although they are private (tests, allowlists). */
  allowAddress?: (hostname: string, address: string) => boolean;
  maxRedirects?: number;
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface GuardedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  finalUrl: string;
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const all = await dnsLookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** Refusal text for a blocked address, or undefined when it may be reached. */
function checkAddress(hostname: string, address: string, options: GuardedFetchOptions): string | undefined {
  if (options.allowPrivate) return undefined;
  if (options.allowAddress?.(hostname, address)) return undefined;
  const reason = blockedAddressReason(address);
  if (!reason) return undefined;
  // URL.hostname keeps the brackets of an IPv6 literal; the address itself needs no "via".
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  const via = bare === address ? '' : ` (${hostname} resolves to it)`;
  return `Refused: ${address}${via} is a ${reason} address; Navi does not fetch from private networks (HTTP_ALLOW_PRIVATE=false).`;
}

/** Canonical form of an IP literal host (brackets and odd IPv4 spellings removed). */
function literalAddress(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (parseIPv6(bare)) return bare;
  return canonicalIPv4(bare) ?? bare;
}

/** GETs `url`, following redirects, refusing private destinations. Throws FetchRefusedError or network errors. */
export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
  const max = options.maxRedirects ?? 5;
  let current = url;
  for (let hop = 0; hop <= max; hop++) {
    let parsed: URL;
    try {
      parsed = new URL(current);
    } catch {
      throw new FetchRefusedError(`Not a valid URL: ${current}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new FetchRefusedError(`Refused: only http and https URLs can be fetched, not ${parsed.protocol}`);
    }
    if (parsed.username || parsed.password)
      throw new FetchRefusedError('Refused: URLs with credentials are not fetched.');
    const res = await requestOnce(parsed, options);
    if ([301, 302, 303, 307, 308].includes(res.status) && res.headers.location) {
      if (hop === max) throw new FetchRefusedError(`Refused: more than ${max} redirects (last: ${current}).`);
      current = new URL(res.headers.location, parsed).toString();
      continue;
    }
    return { ...res, finalUrl: current };
  }
  throw new FetchRefusedError(`Refused: more than ${max} redirects.`);
}

function requestOnce(url: URL, options: GuardedFetchOptions): Promise<Omit<GuardedResponse, 'finalUrl'>> {
  const hostname = url.hostname;
  if (isIpLiteral(hostname)) {
    const refusal = checkAddress(hostname, literalAddress(hostname), options);
    if (refusal) return Promise.reject(new FetchRefusedError(refusal));
  }
  const resolve = options.resolve ?? systemResolve;
  const lookup: LookupFunction = (host, lookupOptions, callback) => {
    resolve(host)
      .then((addresses) => {
        if (addresses.length === 0) throw new Error(`${host} has no address`);
        for (const a of addresses) {
          const refusal = checkAddress(host, a.address, options);
          if (refusal) throw new FetchRefusedError(refusal);
        }
        // Pin the connection to the addresses just validated.
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const usable = addresses.filter((a) => wanted === 0 || a.family === wanted);
        const chosen = usable.length > 0 ? usable : addresses;
        if (lookupOptions.all) callback(null, chosen);
        else callback(null, (chosen[0] as ResolvedAddress).address, (chosen[0] as ResolvedAddress).family);
      })
      .catch((err: Error) => callback(err as NodeJS.ErrnoException, '', 4));
  };

  return new Promise((done, reject) => {
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    const signal = AbortSignal.any(signals);
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'GET',
        lookup,
        signal,
        headers: { 'user-agent': 'Navi/0.1', accept: '*/*', ...options.headers },
        // A fresh connection per request: a pooled socket would skip the lookup check.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if ([301, 302, 303, 307, 308].includes(status)) {
          res.resume();
          done({ status, headers: res.headers, body: Buffer.alloc(0) });
          return;
        }
        const declared = Number(res.headers['content-length'] ?? Number.NaN);
        if (declared > options.maxBytes) {
          req.destroy();
          reject(
            new FetchRefusedError(
              `Refused: the response is ${declared} bytes, over the ${options.maxBytes}-byte limit.`,
            ),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            req.destroy();
            reject(
              new FetchRefusedError(`Refused: the response is over the ${options.maxBytes}-byte limit.`),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => done({ status, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      if (err instanceof FetchRefusedError) reject(err);
      else if (signal.aborted && !options.signal?.aborted) {
        reject(new Error(`Timed out after ${options.timeoutMs} ms fetching ${url.toString()}`));
      } else reject(err);
    });
    req.end();
  });
}
