import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadedFile } from '../../src/protocol/rest.js';
import { startScripted, type TestServer } from './harness.js';
import { multipartBody } from './multipart.js';
import { scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let now = Date.parse('2026-11-01T10:00:00Z');
let sessionId: string;

beforeAll(async () => {
  server = await startScripted({
    agent: scriptedAgent(),
    settings: { SESSION_FILES_MAX_SIZE_MB: '1', SESSION_FILES_TTL_HOURS: '24' },
    app: { clock: () => new Date(now) },
  });
  sessionId = await server.createSession();
});
afterAll(async () => server.close());

async function upload(id: string, filename: string, content: string | Buffer, type?: string, field = 'file') {
  const body = multipartBody([{ field, filename, content, type }]);
  return server.app.inject({ method: 'POST', url: `/sessions/${id}/files`, ...body });
}

function sessionDir(id = sessionId): string {
  return join(server.services.settings.SESSION_FILES_DIR, id);
}

describe('uploads', () => {
  it('stores the file under the session folder and records it', async () => {
    const res = await upload(sessionId, 'notes.txt', 'hello');
    expect(res.statusCode).toBe(201);
    const file = res.json<UploadedFile>();
    expect(file).toEqual({
      name: 'notes.txt',
      path: join(sessionDir(), 'notes.txt'),
      size: 5,
      expires_at: new Date(now + 24 * 3_600_000).toISOString(),
    });
    expect(readFileSync(file.path, 'utf8')).toBe('hello');
    expect(await server.services.files.get(sessionId, 'notes.txt')).toMatchObject({
      size: 5,
      mime_type: 'text/plain',
    });
  });

  it('gives a colliding name a suffix', async () => {
    await upload(sessionId, 'same.txt', 'one');
    const second = await upload(sessionId, 'same.txt', 'two');
    expect(second.json<UploadedFile>().name).toBe('same (1).txt');
  });

  it('keeps traversal and hidden names inside the folder', async () => {
    const cases: [string, string][] = [
      ['../../etc/passwd', 'passwd'],
      ['/etc/hostname', 'hostname'],
      ['..\\..\\win.ini', 'win.ini'],
      ['.env', '_env'],
      ['a\u0001b.txt', 'a_b.txt'],
    ];
    for (const [raw, expected] of cases) {
      const res = await upload(sessionId, raw, 'x');
      expect(res.statusCode, raw).toBe(201);
      const file = res.json<UploadedFile>();
      expect(file.name).toBe(expected);
      expect(file.path.startsWith(sessionDir() + '/')).toBe(true);
    }
    for (const raw of ['..', '.', '../..', '']) {
      const res = await upload(sessionId, raw, 'x');
      expect(res.statusCode, raw).toBe(400);
    }
    expect(readdirSync(sessionDir()).some((n) => n.startsWith('.'))).toBe(false);
  });

  it('refuses a file over the limit with 413 and leaves nothing behind', async () => {
    const fresh = await server.createSession();
    const res = await upload(fresh, 'big.bin', Buffer.alloc(1024 * 1024 + 10, 1));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(existsSync(sessionDir(fresh)) ? readdirSync(sessionDir(fresh)) : []).toEqual([]);
    expect(await server.services.files.list(fresh)).toEqual([]);
  });

  it('refuses a missing field, a JSON body and an unknown session', async () => {
    expect((await upload(sessionId, 'a.txt', 'x', undefined, 'other')).statusCode).toBe(400);
    const noFile = multipartBody([{ field: 'file', content: 'just a field' }]);
    expect(
      (await server.app.inject({ method: 'POST', url: `/sessions/${sessionId}/files`, ...noFile }))
        .statusCode,
    ).toBe(400);
    const asJson = await server.app.inject({
      method: 'POST',
      url: `/sessions/${sessionId}/files`,
      payload: { file: 'x' },
    });
    expect(asJson.statusCode).toBe(415);
    expect((await upload('not-a-uuid', 'a.txt', 'x')).statusCode).toBe(404);
    expect((await upload('2b1e7f3c-8a9d-4c1e-9f00-000000000000', 'a.txt', 'x')).statusCode).toBe(404);
  });
});

describe('downloads', () => {
  it('serves a file with its type, disposition and nosniff', async () => {
    await upload(sessionId, 'photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png');
    const res = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/files/photo.png` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-disposition']).toContain('inline; filename="photo.png"');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.rawPayload.length).toBe(4);
  });

  it('serves HTML and SVG as sandboxed attachments, whatever the client claimed', async () => {
    await upload(sessionId, 'page.html', '<script>alert(1)</script>', 'image/png');
    await upload(sessionId, 'pic.svg', '<svg onload="alert(1)"/>', 'image/svg+xml');
    for (const name of ['page.html', 'pic.svg']) {
      const res = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/files/${name}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-disposition']).toMatch(/^attachment;/);
      expect(res.headers['content-security-policy']).toContain('sandbox');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('finds nothing by traversal or in another session', async () => {
    const other = await server.createSession();
    for (const name of ['..%2f..%2fetc%2fpasswd', '%2fetc%2fpasswd', '..%2fnavi.db', 'missing.txt']) {
      const res = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/files/${name}` });
      expect(res.statusCode, name).toBe(404);
      expect(res.json()).toMatchObject({ error: expect.any(String) });
    }
    const res = await server.app.inject({ method: 'GET', url: `/sessions/${other}/files/notes.txt` });
    expect(res.statusCode).toBe(404);
  });

  it('expires files after the TTL; the sweeper removes them from disk and the store', async () => {
    const fresh = await server.createSession();
    const file = (await upload(fresh, 'old.txt', 'old')).json<UploadedFile>();
    now += 25 * 3_600_000;
    const res = await server.app.inject({ method: 'GET', url: `/sessions/${fresh}/files/old.txt` });
    expect(res.statusCode).toBe(404);
    expect(existsSync(file.path)).toBe(true);
    expect(await server.app.navi.sweeper.sweepNow()).toBeGreaterThan(0);
    expect(existsSync(file.path)).toBe(false);
    expect(await server.services.files.get(fresh, 'old.txt')).toBeUndefined();
  });

  it('deleting a session removes its files and records', async () => {
    const fresh = await server.createSession();
    const file = (await upload(fresh, 'x.txt', 'x')).json<UploadedFile>();
    expect((await server.app.inject({ method: 'DELETE', url: `/sessions/${fresh}` })).statusCode).toBe(204);
    expect(existsSync(file.path)).toBe(false);
    expect(existsSync(sessionDir(fresh))).toBe(false);
  });
});
