import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionDetail, SessionSummary } from '../../src/protocol/rest.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent } from './scripted-agent.js';

let server: TestServer;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  server = await startScripted({ agent: scriptedAgent() });
});
afterAll(async () => server.close());

describe('health, profiles and tools', () => {
  it('GET /health', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /agents/profiles lists the shipped profiles', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/agents/profiles' });
    expect(res.statusCode).toBe(200);
    const ids = res.json<{ id: string }[]>().map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(['secretary', 'server_admin', 'smart_home']));
  });

  it('GET /agents/tools is an array, errors live at /agents/tools/errors', async () => {
    const tools = await server.app.inject({ method: 'GET', url: '/agents/tools' });
    expect(tools.json()).toEqual([
      { name: 'echo', description: 'Repeats its input.', parameters: expect.any(Object), source: 'builtin' },
    ]);
    const errors = await server.app.inject({ method: 'GET', url: '/agents/tools/errors' });
    expect(errors.json()).toEqual([{ origin: 'broken.ts', source: 'user', error: 'SyntaxError: nope' }]);
  });

  it('POST /agents/tools/reload reports what was loaded', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/agents/tools/reload' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ loaded: ['echo'], providers: [], errors: [] });
  });
});

describe('sessions', () => {
  it('creates with the default profile, with a named one, and refuses an unknown profile', async () => {
    const plain = await server.app.inject({ method: 'POST', url: '/sessions' });
    expect(plain.statusCode).toBe(201);
    expect(plain.json()).toEqual({
      session_id: expect.any(String),
      profile_id: 'secretary',
      created_at: expect.any(String),
    });
    const empty = await server.app.inject({ method: 'POST', url: '/sessions', headers: json, payload: {} });
    expect(empty.statusCode).toBe(201);
    const named = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      payload: { profile_id: 'server_admin' },
    });
    expect(named.json<{ profile_id: string }>().profile_id).toBe('server_admin');
    const unknown = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      payload: { profile_id: 'nope' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'UNKNOWN_PROFILE', error: expect.any(String) });
  });

  it('lists, reads, shows the context', async () => {
    const id = await server.createSession();
    const list = await server.app.inject({ method: 'GET', url: '/sessions' });
    expect(list.json<SessionSummary[]>().some((s) => s.id === id)).toBe(true);
    const one = await server.app.inject({ method: 'GET', url: `/sessions/${id}` });
    expect(one.statusCode).toBe(200);
    expect(one.json<SessionDetail>()).toMatchObject({ id, profile_id: 'secretary', messages: [] });
    const context = await server.app.inject({ method: 'GET', url: `/sessions/${id}/context` });
    expect(context.json()).toEqual({ messages: [] });
  });

  it('renames (trimmed) and pins, pinned sessions first', async () => {
    const a = await server.createSession();
    const b = await server.createSession();
    const renamed = await server.app.inject({
      method: 'PATCH',
      url: `/sessions/${a}`,
      payload: { title: '  Trip  ' },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: a, title: 'Trip' });
    const pinned = await server.app.inject({
      method: 'PATCH',
      url: `/sessions/${b}/pin`,
      payload: { pinned: true },
    });
    expect(pinned.json()).toMatchObject({ id: b, pinned: true });
    const both = await server.app.inject({
      method: 'PATCH',
      url: `/sessions/${a}`,
      payload: { pinned: false, title: 'x' },
    });
    expect(both.json()).toMatchObject({ pinned: false, title: 'x' });
    const list = (await server.app.inject({ method: 'GET', url: '/sessions' })).json<SessionSummary[]>();
    expect(list[0]?.id).toBe(b);
  });

  it('refuses bad PATCH bodies with 400', async () => {
    const id = await server.createSession();
    const bad = [
      { title: '   ' },
      { title: 'x'.repeat(201) },
      { title: 5 },
      { pinned: 'true' },
      {},
      { other: 1 },
    ];
    for (const payload of bad) {
      const res = await server.app.inject({ method: 'PATCH', url: `/sessions/${id}`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ error: expect.any(String), code: expect.any(String) });
    }
    const pin = await server.app.inject({
      method: 'PATCH',
      url: `/sessions/${id}/pin`,
      payload: { pinned: 1 },
    });
    expect(pin.statusCode).toBe(400);
  });

  it('answers 404 for ids that are not uuids or unknown', async () => {
    for (const id of ['nope', '1', randomUUID(), 'subagent_x', '..%2f..%2fetc']) {
      for (const [method, url] of [
        ['GET', `/sessions/${id}`],
        ['GET', `/sessions/${id}/context`],
        ['DELETE', `/sessions/${id}`],
        ['POST', `/sessions/${id}/stop`],
      ] as const) {
        const res = await server.app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toMatchObject({ code: 'SESSION_NOT_FOUND' });
      }
      const patch = await server.app.inject({
        method: 'PATCH',
        url: `/sessions/${id}`,
        payload: { title: 'a' },
      });
      expect(patch.statusCode).toBe(404);
    }
  });

  it('deletes with 204 and removes the session folder', async () => {
    const id = await server.createSession();
    const folder = join(server.services.settings.SESSION_FILES_DIR, id);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'a.txt'), 'a');
    const res = await server.app.inject({ method: 'DELETE', url: `/sessions/${id}` });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(existsSync(folder)).toBe(false);
    expect((await server.app.inject({ method: 'GET', url: `/sessions/${id}` })).statusCode).toBe(404);
  });
});

describe('client mistakes never give a 500', () => {
  it('broken JSON, wrong content type, empty JSON, huge body, unknown route', async () => {
    const broken = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: json,
      payload: '{"profile_id":',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ code: 'INVALID_JSON' });
    const emptyJson = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: json,
      payload: '',
    });
    expect(emptyJson.statusCode).toBe(400);
    const text = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    const huge = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: json,
      payload: JSON.stringify({ profile_id: 'x'.repeat(41 * 1024 * 1024) }),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ code: 'BODY_TOO_LARGE' });
    const route = await server.app.inject({ method: 'GET', url: '/nothing/here' });
    expect(route.statusCode).toBe(404);
    expect(route.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' });
    const array = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: json,
      payload: '[1]',
    });
    expect(array.statusCode).toBe(400);
    const proto = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: json,
      payload: '{"__proto__":{"x":1}}',
    });
    expect(proto.statusCode).toBe(400);
  });

  it('shows the page that explains how to build the web client when it is missing', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('npm run build:web');
  });
});
