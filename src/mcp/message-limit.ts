/**
 * What happens to a JSON-RPC message larger than a server's `max_message_bytes`: the bytes
 * are dropped as they arrive (never held whole) and, when the request id can be read from the
 * head or tail of the message, the pending request receives this error response instead, so
 * the call fails at once with a clear message and the connection stays usable.
 */
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** Bytes kept from each end of an oversized message to find its id. */
export const SNIFF_BYTES = 256;

const idValue = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":7,…` or `{"id":7,…` at the start. */
const headId = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${idValue}`);
/** `…,"jsonrpc":"2.0","id":7}` at the end: the order the TypeScript SDK writes responses in. */
const tailId = new RegExp(String.raw`"id"\s*:\s*${idValue}\s*\}\s*$`);

/** The id of a response whose middle was dropped, or undefined when it cannot be told. */
export function sniffResponseId(head: string, tail: string): RequestId | undefined {
  const match = headId.exec(head) ?? tailId.exec(tail);
  if (!match?.[1]) return undefined;
  try {
    const value: unknown = JSON.parse(match[1]);
    return typeof value === 'number' || typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

export function oversizeMessage(bytes: number | undefined, limit: number): string {
  const size = bytes === undefined ? 'more than' : `${bytes} bytes, more than`;
  return `the server's answer was too large (${size} the ${limit}-byte limit, max_message_bytes) and was dropped; ask for less data (a smaller range, a filter, a page)`;
}

export function oversizeResponse(id: RequestId, bytes: number | undefined, limit: number): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: ErrorCode.InternalError, message: oversizeMessage(bytes, limit) },
  };
}

/** Last `n` bytes of `a` followed by `b`, without copying more than `n` bytes of either. */
export function lastBytes(a: Buffer, b: Buffer, n = SNIFF_BYTES): Buffer {
  if (b.length >= n) return Buffer.from(b.subarray(b.length - n));
  const joined = Buffer.concat([a.subarray(Math.max(0, a.length - (n - b.length))), b]);
  return joined;
}

/** First `n` bytes of the concatenation of `parts`. */
export function firstBytes(parts: readonly Buffer[], n = SNIFF_BYTES): Buffer {
  const out: Buffer[] = [];
  let size = 0;
  for (const p of parts) {
    if (size >= n) break;
    const take = p.subarray(0, n - size);
    out.push(take);
    size += take.length;
  }
  return Buffer.concat(out);
}
