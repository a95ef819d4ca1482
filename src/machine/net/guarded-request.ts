/**
 * The one HTTP client Navi and its shipped servers use to reach URLs a model chose, guarded
 * against server-side request forgery: a URL must not lead to the machine itself, the LAN or a
 * cloud metadata endpoint unless HTTP_ALLOW_PRIVATE admits it.
 *
 * Each hop resolves its host once, checks every address, and connects to exactly the address it
 * checked (the socket's `lookup` is pinned), so a DNS server that answers differently the second
 * time (rebinding) never reaches `connect`. Redirects are followed by hand so every hop is checked.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import zlib from 'node:zlib';
import { allowsPrivate, describePolicy, type PrivatePolicy } from '../../config/private-policy.js';
import { blockedAddressReason, canonicalIPv4, isIpLiteral, parseIPv6 } from './ip-address.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Answers a host name with its addresses; tests map names to local servers with one. */
export type ResolverFn = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedRequestOptions {
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Which private destinations may be reached (HTTP_ALLOW_PRIVATE). */
  policy: PrivatePolicy;
  /** An endpoint the user configured (SEARXNG_URL…): its own host is not checked; redirects elsewhere still are. */
  trusted?: boolean;
  /** Resolver (default: the system's, every address). Tests map names to addresses here. */
  resolve?: ResolverFn;
  /** Redirects followed, each hop checked (default 5); 0 returns the redirect response itself. */
  maxRedirects?: number;
  /** Body bytes kept, counted after decompression. Over it: `truncated: true` with the first maxBytes when `onOversize` is 'truncate', else a RequestRefusedError. */
  maxBytes: number;
  onOversize?: 'error' | 'truncate';
  /** Limit on the whole exchange, every hop and the whole body included. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  statusText: string;
  /** As received, except that content-encoding and content-length are removed once the body is decompressed. */
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** URL of the last hop. */
  finalUrl: string;
  /** Every URL visited before the last hop. */
  redirects: string[];
  truncated: boolean;
  /** The address the last hop connected to. */
  address: string;
}

/** The request was not made, or its answer not kept, because a rule forbids it (address, scheme, size, redirects). */
export class RequestRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestRefusedError';
  }
}

/** The answer was larger than `maxBytes` (and `onOversize` is 'error'). */
export class ResponseTooLargeError extends RequestRefusedError {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseTooLargeError';
  }
}

/** The exchange, every hop and the whole body included, outlasted `timeoutMs`. */
export class RequestTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestTimeoutError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers describing a body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];
/** Credentials meant for one origin, not for wherever it redirects to. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const all = await dnsLookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

const bareHost = (hostname: string) =>
  hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');

/** Canonical form of an IP literal host (brackets removed, odd IPv4 spellings made dotted). */
function literalAddress(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (parseIPv6(bare)) return bare;
  return canonicalIPv4(bare) ?? bare;
}

/** Refusal text for an address `hostname` leads to, or undefined when it may be reached. */
function refusal(hostname: string, address: string, policy: PrivatePolicy): string | undefined {
  const reason = blockedAddressReason(address);
  if (!reason || allowsPrivate(policy, hostname, address)) return undefined;
  const bare = bareHost(hostname);
  const via = bare === address.toLowerCase() ? '' : ` (${bare} resolves to it)`;
  const what = reason === 'not an IP address' ? 'not an IP address' : `a ${reason} address`;
  return (
    `Refused: ${address}${via} is ${what}, and ${describePolicy(policy)} does not admit it. ` +
    'To let Navi reach it, add the host or its address to HTTP_ALLOW_PRIVATE (a comma-separated list of hosts and CIDR ranges, or true for all).'
  );
}

function checkOptions(options: GuardedRequestOptions): void {
  const positive = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n > 0;
  if (!positive(options.maxBytes))
    throw new TypeError(`maxBytes must be a positive number, not ${options.maxBytes}`);
  if (!positive(options.timeoutMs))
    throw new TypeError(`timeoutMs must be a positive number, not ${options.timeoutMs}`);
  const max = options.maxRedirects ?? 5;
  if (!Number.isInteger(max) || max < 0)
    throw new TypeError(`maxRedirects must be a whole number, 0 or more, not ${options.maxRedirects}`);
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RequestRefusedError(
      `Not a valid URL: ${JSON.stringify(text)}. Write a full http:// or https:// URL.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RequestRefusedError(
      `Refused: only http and https URLs can be requested, not ${url.protocol} (${text}).`,
    );
  if (url.username || url.password)
    throw new RequestRefusedError(
      'Refused: URLs with credentials (user:password@) are not requested; send credentials in a header instead.',
    );
  return url;
}

interface Hop {
  method: HttpMethod;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** The request for the next hop: a GET without body where browsers make one, without credentials for another origin. */
function nextHop(status: number, hop: Hop, from: URL, to: URL): Hop {
  let { method, headers, body } = hop;
  if (((status === 301 || status === 302) && method === 'POST') || (status === 303 && method !== 'HEAD')) {
    method = 'GET';
    body = undefined;
    headers = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !BODY_HEADERS.includes(name.toLowerCase())),
    );
  }
  if (from.origin !== to.origin)
    headers = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
    );
  return { method, headers, body };
}

/** Rejects when `signal` aborts, so waits that cannot be cancelled (DNS) still end on time. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    // Attached first, so the abandoned promise's own failure is never left unhandled.
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves the host once and checks every address; returns those the socket may use. */
async function destination(
  url: URL,
  options: GuardedRequestOptions,
  checked: boolean,
  signal: AbortSignal,
): Promise<ResolvedAddress[]> {
  const hostname = url.hostname;
  if (isIpLiteral(hostname)) {
    const address = literalAddress(hostname);
    const refused = checked ? refusal(hostname, address, options.policy) : undefined;
    if (refused) throw new RequestRefusedError(refused);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  }
  const resolve = options.resolve ?? systemResolve;
  let addresses: ResolvedAddress[];
  try {
    addresses = await untilAborted(resolve(hostname), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new Error(`Could not resolve ${hostname}: ${(err as Error).message}`);
  }
  if (addresses.length === 0) throw new Error(`Could not resolve ${hostname}: it has no address.`);
  if (checked) {
    for (const a of addresses) {
      const refused = refusal(hostname, a.address, options.policy);
      if (refused) throw new RequestRefusedError(refused);
    }
  }
  return addresses;
}

interface Received {
  res: IncomingMessage;
  address: string;
}

function send(url: URL, hop: Hop, checked: ResolvedAddress[], signal: AbortSignal): Promise<Received> {
  // The socket never asks DNS: it gets the addresses already checked, and nothing else.
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    const wanted = checked.filter((a) => !lookupOptions.family || a.family === lookupOptions.family);
    const usable = wanted.length > 0 ? wanted : checked;
    const first = usable[0] as ResolvedAddress;
    if (lookupOptions.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
  const headers: Record<string, string> = { 'user-agent': 'Navi', accept: '*/*', ...hop.headers };
  const lower = Object.keys(headers).map((h) => h.toLowerCase());
  if (!lower.includes('accept-encoding')) headers['accept-encoding'] = 'gzip, deflate, br';
  if (hop.body && !lower.includes('content-length')) headers['content-length'] = String(hop.body.length);
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, { method: hop.method, headers, lookup, signal, agent: false }, (res) =>
      resolve({ res, address: res.socket?.remoteAddress ?? (checked[0] as ResolvedAddress).address }),
    );
    req.on('error', reject);
    req.end(hop.body);
  });
}

function decoder(
  encoding: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  // Lenient flushing, as browsers do: a body cut short still yields what arrived.
  const lenient = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(lenient);
    case 'deflate':
      return zlib.createInflate(lenient);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      return undefined;
  }
}

interface Body {
  body: Buffer;
  truncated: boolean;
  decoded: boolean;
}

/** Reads the body, decompressing it, keeping at most maxBytes of what comes out. */
function readBody(res: IncomingMessage, options: GuardedRequestOptions, noBody: boolean): Promise<Body> {
  const max = options.maxBytes;
  const truncate = options.onOversize === 'truncate';
  if (noBody) {
    res.resume();
    return Promise.resolve({ body: Buffer.alloc(0), truncated: false, decoded: false });
  }
  const encoding = res.headers['content-encoding'];
  const decode = encoding && !encoding.includes(',') ? decoder(encoding) : undefined;
  const over = (size?: number) =>
    new ResponseTooLargeError(
      `Refused: the response body is ${size === undefined ? '' : `${size} bytes, `}over the ${max}-byte limit${decode ? ' once decompressed' : ''}.`,
    );
  const declared = Number(res.headers['content-length'] ?? Number.NaN);
  if (!decode && !truncate && declared > max) {
    res.destroy();
    return Promise.reject(over(declared));
  }
  const stream = decode ? res.pipe(decode) : res;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: Body | Error) => {
      if (settled) return;
      settled = true;
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const stop = () => {
      res.destroy();
      decode?.destroy();
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (size + chunk.length > max) {
        stop();
        if (!truncate) return finish(over());
        chunks.push(chunk.subarray(0, max - size));
        return finish({ body: Buffer.concat(chunks), truncated: true, decoded: decode !== undefined });
      }
      size += chunk.length;
      chunks.push(chunk);
    });
    stream.on('end', () =>
      finish({ body: Buffer.concat(chunks), truncated: false, decoded: decode !== undefined }),
    );
    const failed = (err: Error) => {
      stop();
      finish(err);
    };
    stream.on('error', failed);
    if (decode) {
      res.on('error', failed);
      res.on('aborted', () => failed(new Error('The connection closed before the response was complete.')));
    }
  });
}

/**
 * Sends an HTTP(S) request to `url`, following redirects, refusing private destinations the
 * policy does not admit. Throws RequestRefusedError for refusals (address, scheme, credentials,
 * size, too many redirects), and an Error with a plain message for timeouts, aborts and network failures.
 */
export async function guardedRequest(url: string, options: GuardedRequestOptions): Promise<GuardedResponse> {
  checkOptions(options);
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(
        new RequestTimeoutError(
          `Timed out after ${options.timeoutMs} ms requesting ${url} (the limit covers every redirect and the whole body).`,
        ),
      ),
    options.timeoutMs,
  );
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  try {
    signal.throwIfAborted();
    return await untilAborted(exchange(url, options, signal), signal);
  } catch (err) {
    if (!signal.aborted || err instanceof RequestRefusedError) throw err;
    const reason: unknown = signal.reason;
    throw reason instanceof Error ? reason : new Error(`The request to ${url} was aborted.`);
  } finally {
    clearTimeout(timer);
  }
}

async function exchange(
  url: string,
  options: GuardedRequestOptions,
  signal: AbortSignal,
): Promise<GuardedResponse> {
  const max = options.maxRedirects ?? 5;
  const first = parseUrl(url);
  const trustedHost = options.trusted ? bareHost(first.hostname) : undefined;
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  let hop: Hop = { method: options.method ?? 'GET', headers: { ...options.headers }, body };
  const redirects: string[] = [];
  let current = first;
  for (;;) {
    const checked = bareHost(current.hostname) !== trustedHost;
    const addresses = await destination(current, options, checked, signal);
    const { res, address } = await send(current, hop, addresses, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location && max > 0) {
      res.destroy();
      if (redirects.length >= max)
        throw new RequestRefusedError(
          `Refused: more than ${max} redirects (the last one, from ${current.href}, pointed to ${location}).`,
        );
      let next: URL;
      try {
        next = parseUrl(new URL(location, current).href);
      } catch (err) {
        if (err instanceof RequestRefusedError)
          throw new RequestRefusedError(`${err.message} (redirected to by ${current.href})`);
        throw err;
      }
      redirects.push(current.href);
      hop = nextHop(status, hop, current, next);
      current = next;
      continue;
    }
    const noBody =
      hop.method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
    const read = await readBody(res, options, noBody);
    const headers = { ...res.headers };
    if (read.decoded) {
      delete headers['content-encoding'];
      delete headers['content-length'];
    }
    return {
      status,
      statusText: res.statusMessage ?? '',
      headers,
      body: read.body,
      finalUrl: current.href,
      redirects,
      truncated: read.truncated,
      address,
    };
  }
}
