/**
 * Frames over the hard size limit (twice the frame limit) close the socket with 1009 and a
 * reason, every time, even while the client is still writing the frame. Frames up to the hard
 * limit get a recoverable error and the socket stays open.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_CLIENT_FRAME_BYTES } from '../../src/protocol/commands.js';
import { tooBigReason } from '../../src/server/ws/socket-options.js';
import { EventClient } from '../support/ws-client.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent, simpleReply } from './scripted-agent.js';

const HUGE = 70 * 1024 * 1024;
const SMALL_FRAME = 64 * 1024;

interface Closed {
  code: number;
  reason: string;
}

function closeOf(socket: WebSocket, timeoutMs = 20_000): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`the socket did not close within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
  });
}

/** Opens a socket, sends one frame and returns how the socket closed. */
async function sendAndClose(url: string, frame: Buffer | string): Promise<Closed> {
  const socket = new WebSocket(url);
  // The error of a refused frame (if any) is reported by the close; keep it from being thrown.
  socket.on('error', () => {});
  const closed = closeOf(socket);
  socket.once('open', () => socket.send(frame));
  return closed;
}

describe('with the default frame limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({ agent: scriptedAgent() });
  });
  afterAll(async () => server.close());

  it('closes a 70 MB frame with 1009 and a reason, ten times in a row', { timeout: 120_000 }, async () => {
    expect(HUGE).toBeGreaterThan(2 * MAX_CLIENT_FRAME_BYTES);
    const id = await server.createSession();
    const frame = Buffer.alloc(HUGE, 0x20);
    const expected = { code: 1009, reason: tooBigReason(2 * MAX_CLIENT_FRAME_BYTES) };
    for (let round = 0; round < 10; round++) {
      expect(await sendAndClose(server.wsUrl(id), frame), `round ${round}`).toEqual(expected);
    }
    expect(expected.reason.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(expected.reason)).toBeLessThanOrEqual(123);
  });

  it('ends the connection cleanly while the client is still writing the frame', {
    timeout: 60_000,
  }, async () => {
    const id = await server.createSession();
    const result = await rawHugeFrame(server, id);
    expect(result).toEqual({
      opcode: 8,
      closeCode: 1009,
      reason: tooBigReason(2 * MAX_CLIENT_FRAME_BYTES),
      ended: true,
      error: undefined,
    });
  });
});

describe('around the hard limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({
      agent: scriptedAgent(simpleReply('still here')),
      app: { maxClientFrameBytes: SMALL_FRAME },
    });
  });
  afterAll(async () => server.close());

  it('a frame exactly at the hard limit gets a recoverable error; the socket stays usable', async () => {
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send(' '.repeat(2 * SMALL_FRAME));
    const error = await client.waitFor((e) => e.type === 'error', 5000);
    expect(error).toMatchObject({ recoverable: true, message: expect.stringContaining('too large') });
    client.send({ type: 'message', content: 'hi' });
    const run = await client.waitForRunEnd();
    expect(run.at(-1)).toMatchObject({ type: 'stream_end', content: 'still here' });
    expect(client.closeCode).toBeUndefined();
    await client.close();
  });

  it('a frame one byte over it closes with 1009 and the reason', async () => {
    const id = await server.createSession();
    const closed = await sendAndClose(server.wsUrl(id), ' '.repeat(2 * SMALL_FRAME + 1));
    expect(closed).toEqual({ code: 1009, reason: tooBigReason(2 * SMALL_FRAME) });
  });
});

interface RawResult {
  /** Opcode of the server's first frame: 8 is a close frame. */
  opcode: number | undefined;
  closeCode: number | undefined;
  reason: string | undefined;
  /** The server half-closed the connection (FIN) instead of resetting it. */
  ended: boolean;
  error: string | undefined;
}

/**
 * Speaks the protocol by hand so that the client keeps writing a 70 MB frame until the close
 * frame arrives, and then sees whether the server ended the connection or reset it.
 */
function rawHugeFrame(server: TestServer, sessionId: string): Promise<RawResult> {
  const { host, port } = new URL(server.url);
  const socket: Socket = connect({ host: '127.0.0.1', port: Number(port) });
  const result: RawResult = {
    opcode: undefined,
    closeCode: undefined,
    reason: undefined,
    ended: false,
    error: undefined,
  };
  let received = Buffer.alloc(0);
  let upgraded = false;
  let written = 0;
  const chunk = Buffer.alloc(64 * 1024);

  const writeMore = (): void => {
    while (result.closeCode === undefined && written < HUGE && !socket.destroyed) {
      written += chunk.length;
      if (!socket.write(chunk)) return void socket.once('drain', writeMore);
    }
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close after ${written} bytes: ${JSON.stringify(result)}`));
    }, 30_000);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      result.error = err.code ?? err.message;
    });
    socket.on('end', () => {
      result.ended = true;
      socket.end();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(result);
    });
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      if (!upgraded) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = received.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`no upgrade: ${head}`));
        upgraded = true;
        received = received.subarray(end + 4);
        socket.write(hugeFrameHeader());
        writeMore();
      }
      // The server's close frame: 0x88, a length under 126, the code, the reason.
      if (
        result.closeCode === undefined &&
        received.length >= 2 &&
        received.length >= 2 + (received[1] ?? 0)
      ) {
        result.opcode = (received[0] ?? 0) & 0x0f;
        result.closeCode = received.readUInt16BE(2);
        result.reason = received.subarray(4, 2 + (received[1] ?? 0)).toString();
      }
    });
    socket.write(
      [
        `GET /ws/sessions/${sessionId} HTTP/1.1`,
        `Host: ${host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        '',
        '',
      ].join('\r\n'),
    );
  });
}

/** A masked, final binary frame announcing HUGE bytes (zero mask: the payload goes as is). */
function hugeFrameHeader(): Buffer {
  const header = Buffer.alloc(14);
  header[0] = 0x82;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(HUGE), 2);
  return header;
}
