/**
 * A `fetch` for the SDK's Streamable HTTP client transport that bounds every JSON-RPC message
 * it receives to `maxBytes`:
 * - `application/json` bodies are read up to the limit; a larger body makes the fetch reject,
 *   which fails the pending request at once (the SDK rejects a request whose POST fails);
 * - `text/event-stream` bodies are passed on one whole event at a time; an event over the
 *   limit is dropped as it streams in and replaced by an error response for the request the
 *   POST carried (see message-limit.ts). The connection stays usable in both cases;
 * - any other body (an error page of a failed request, which the SDK reads whole into its
 *   error message) is cut after `maxBytes`.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { oversizeMessage, oversizeResponse } from './message-limit.js';

export function limitedFetch(
  maxBytes: number,
  onOversize?: (bytes: number) => void,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (type === 'application/json') return readJsonLimited(response, maxBytes, onOversize);
    if (type === 'text/event-stream') {
      const limiter = sseLimiter(maxBytes, requestIds(init?.body), onOversize);
      return new Response(response.body.pipeThrough(limiter), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    return cutAfter(response, maxBytes);
  };
}

/** `response` with its body ending after `maxBytes`; the rest is never read. */
function cutAfter(response: Response, maxBytes: number): Response {
  let left = maxBytes;
  const cut = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (chunk.length >= left) {
        controller.enqueue(chunk.subarray(0, left));
        left = 0;
        // Ends the body here and cancels the server's stream.
        controller.terminate();
        return;
      }
      left -= chunk.length;
      controller.enqueue(chunk);
    },
  });
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response((response.body as ReadableStream<Uint8Array>).pipeThrough(cut), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

function requestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.flatMap((m: unknown) => {
      if (typeof m !== 'object' || m === null || !('method' in m) || !('id' in m)) return [];
      const id = (m as { id: unknown }).id;
      return typeof id === 'string' || typeof id === 'number' ? [id] : [];
    });
  } catch {
    return [];
  }
}

async function readJsonLimited(
  response: Response,
  maxBytes: number,
  onOversize?: (bytes: number) => void,
): Promise<Response> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  if (!(declared > maxBytes)) {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxBytes) break;
      parts.push(value);
    }
  }
  if (declared > maxBytes || size > maxBytes) {
    await reader.cancel().catch(() => undefined);
    const bytes = declared > maxBytes ? declared : undefined;
    onOversize?.(bytes ?? size);
    throw new Error(oversizeMessage(bytes, maxBytes));
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(Buffer.concat(parts), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/**
 * Buffers one SSE event (up to the blank line that ends it) at a time. Line ends are "\n" or
 * "\r\n"; a lone "\r" as line end (allowed by the SSE spec, unused by MCP servers) is not seen.
 */
function sseLimiter(
  maxBytes: number,
  ids: RequestId[],
  onOversize?: (bytes: number) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  let dropped = 0;
  let lineLength = 0;
  let lastWasCr = false;
  const encoder = new TextEncoder();

  const endEvent = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (dropping) {
      onOversize?.(dropped);
      for (const id of ids) {
        const data = JSON.stringify(oversizeResponse(id, dropped, maxBytes));
        controller.enqueue(encoder.encode(`event: message\ndata: ${data}\n\n`));
      }
    } else if (size > 0) {
      controller.enqueue(Buffer.concat(parts, size));
    }
    parts = [];
    size = 0;
    dropping = false;
    dropped = 0;
  };

  const take = (piece: Uint8Array) => {
    if (piece.length === 0) return;
    if (dropping) {
      dropped += piece.length;
    } else if (size + piece.length > maxBytes) {
      dropping = true;
      dropped = size + piece.length;
      parts = [];
      size = 0;
    } else {
      parts.push(piece);
      size += piece.length;
    }
  };

  return new TransformStream({
    transform(chunk, controller) {
      let pos = 0;
      while (pos < chunk.length) {
        const nl = chunk.indexOf(10, pos);
        const end = nl === -1 ? chunk.length : nl + 1;
        take(chunk.subarray(pos, end));
        const content = (nl === -1 ? end : nl) - pos;
        if (nl === -1) {
          lineLength += content;
          if (content > 0) lastWasCr = chunk[end - 1] === 13;
          return;
        }
        const total = lineLength + content;
        const crBefore = content > 0 ? chunk[nl - 1] === 13 : lastWasCr;
        const blank = total === 0 || (total === 1 && crBefore);
        lineLength = 0;
        lastWasCr = false;
        pos = nl + 1;
        if (blank) endEvent(controller);
      }
    },
    flush(controller) {
      endEvent(controller);
    },
  });
}
