/**
 * Uploads whose multipart body is cut short, malformed or abandoned: always a 4xx (never a
 * 500), and neither a file in the session folder nor a file record is left behind. The bodies
 * go over a real socket, byte for byte as written here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScripted, type TestServer } from './harness.js';
import { rawRequest, rawUploadStart } from './raw-http.js';
import { scriptedAgent } from './scripted-agent.js';

let server: TestServer;

beforeAll(async () => {
  server = await startScripted({ agent: scriptedAgent(), settings: { SESSION_FILES_MAX_SIZE_MB: '1' } });
});
afterAll(async () => server.close());

const PART_HEAD = 'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain';
const BIG = 'x'.repeat(200 * 1024);

function sessionDir(id: string): string {
  return join(server.services.settings.SESSION_FILES_DIR, id);
}

function leftOnDisk(id: string): string[] {
  return existsSync(sessionDir(id)) ? readdirSync(sessionDir(id)) : [];
}

function head(id: string, contentType = 'multipart/form-data; boundary=b'): string[] {
  return [`POST /sessions/${id}/files HTTP/1.1`, `Content-Type: ${contentType}`];
}

async function expectNothingLeft(id: string): Promise<void> {
  expect(leftOnDisk(id)).toEqual([]);
  expect(await server.services.files.list(id)).toEqual([]);
}

describe('a malformed multipart body is refused with 400', () => {
  const malformed: [string, string][] = [
    ['no closing boundary', `--b\r\n${PART_HEAD}\r\n\r\nabc`],
    ['a large file without its closing boundary', `--b\r\n${PART_HEAD}\r\n\r\n${BIG}`],
    ['a delimiter but no closing one', `--b\r\n${PART_HEAD}\r\n\r\nabc\r\n--b\r\n`],
    ['a delimiter cut before its dashes', `--b\r\n${PART_HEAD}\r\n\r\nabc\r\n--b`],
    ['a second part cut in its headers', `--b\r\n${PART_HEAD}\r\n\r\nabc\r\n--b\r\nContent-Disp`],
    ['part headers cut short', `--b\r\n${PART_HEAD}`],
    ['part headers without their blank line', `--b\r\n${PART_HEAD}\r\n`],
    ['only the opening boundary', '--b\r\n'],
    ['a boundary that never appears', `--other\r\n${PART_HEAD}\r\n\r\nabc\r\n--other--\r\n`],
    ['garbage', '\u0000\u00ff garbage \r\n\r\n--\r\n not multipart at all'],
  ];

  for (const [name, body] of malformed) {
    it(name, async () => {
      const id = await server.createSession();
      const res = await rawRequest(server.url, head(id), Buffer.from(body));
      expect(res.status, res.body).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        code: 'MALFORMED_UPLOAD',
        error: expect.stringContaining('multipart'),
      });
      await expectNothingLeft(id);
    });
  }

  it('a part without headers, or no file part at all, is a missing file', async () => {
    const id = await server.createSession();
    for (const body of ['--b\r\n\r\nabc\r\n--b--\r\n', '--b--\r\n', '']) {
      const res = await rawRequest(server.url, head(id), Buffer.from(body));
      expect(res.status, body).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'MISSING_FILE' });
    }
    await expectNothingLeft(id);
  });

  it('a second file is refused and the first one is not kept', async () => {
    const id = await server.createSession();
    const part = (name: string) => `--b\r\n${PART_HEAD.replace('a.txt', name)}\r\n\r\nabc\r\n`;
    const res = await rawRequest(
      server.url,
      head(id),
      Buffer.from(`${part('one.txt')}${part('two.txt')}--b--\r\n`),
    );
    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      code: 'BAD_REQUEST',
      error: expect.stringContaining('one file'),
    });
    await expectNothingLeft(id);
  });

  it('a multipart content type without a boundary', async () => {
    const id = await server.createSession();
    const body = Buffer.from(`--b\r\n${PART_HEAD}\r\n\r\nabc\r\n--b--\r\n`);
    const res = await rawRequest(server.url, head(id, 'multipart/form-data'), body);
    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'MALFORMED_UPLOAD' });
    await expectNothingLeft(id);
  });

  it('the same body with its closing boundary is stored (the cases above fail for their flaw only)', async () => {
    const id = await server.createSession();
    const res = await rawRequest(
      server.url,
      head(id),
      Buffer.from(`--b\r\n${PART_HEAD}\r\n\r\nabc\r\n--b--\r\n`),
    );
    expect(res.status, res.body).toBe(201);
    expect(leftOnDisk(id)).toEqual(['a.txt']);
    expect(await server.services.files.list(id)).toHaveLength(1);
  });
});

describe('a client that goes away mid-upload', () => {
  it('leaves no partial file and no record', async () => {
    const id = await server.createSession();
    const start = Buffer.from(`--b\r\n${PART_HEAD}\r\n\r\n${BIG}`);
    const socket = rawUploadStart(server.url, head(id), start.length + 500 * 1024, start);
    // The partial upload reaches the disk before the client disappears.
    await until(() => leftOnDisk(id).length > 0, 'the partial upload to appear');
    socket.destroy();
    await until(() => leftOnDisk(id).length === 0, 'the partial upload to be removed');
    await expectNothingLeft(id);
    // The server is fine afterwards.
    const res = await rawRequest(
      server.url,
      head(id),
      Buffer.from(`--b\r\n${PART_HEAD}\r\n\r\nok\r\n--b--\r\n`),
    );
    expect(res.status).toBe(201);
  });
});

/** Waits for a condition the server reaches on its own; fails after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
