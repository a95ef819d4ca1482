/**
 * HTTP/1.1 by hand over a loopback socket, for bodies no HTTP client would send: cut short,
 * malformed, or abandoned half-way.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  body: string;
}

/** Sends `head` and `body` (Content-Length = body size) and reads the whole response. */
export function rawRequest(
  url: string,
  head: string[],
  body: Buffer,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  const { hostname, port, host } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${timeoutMs} ms`));
    }, timeoutMs);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString();
      const split = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(text.slice(9, 12)),
        body: split < 0 ? '' : text.slice(split + 4),
      });
    });
    // Not end(): Node's HTTP server drops a request whose client half-closes before the answer.
    socket.write(requestHead(host, head, body.length));
    socket.write(body);
  });
}

/**
 * Starts a request announcing `announcedBytes` of body, writes `body` and leaves the socket
 * open; the caller destroys it to play a client that goes away mid-upload.
 */
export function rawUploadStart(url: string, head: string[], announcedBytes: number, body: Buffer): Socket {
  const { hostname, port, host } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.on('error', () => {});
  socket.write(requestHead(host, head, announcedBytes));
  socket.write(body);
  return socket;
}

function requestHead(host: string, head: string[], length: number): string {
  return [...head, `Host: ${host}`, `Content-Length: ${length}`, 'Connection: close', '', ''].join('\r\n');
}
