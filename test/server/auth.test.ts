import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback } from '../../src/server/auth.js';
import { EventClient } from '../support/ws-client.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent } from './scripted-agent.js';

const TOKEN = 's3cret-token';

describe('with NAVI_API_TOKEN set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({ agent: scriptedAgent(), settings: { NAVI_API_TOKEN: TOKEN } });
  });
  afterAll(async () => server.close());

  it('refuses API calls without a token, and with a wrong one', async () => {
    for (const [headers, code] of [
      [{}, 'UNAUTHORIZED'],
      [{ authorization: 'Bearer wrong' }, 'TOKEN_WRONG'],
      [{ authorization: TOKEN }, 'UNAUTHORIZED'],
      [{ cookie: 'navi_auth=wrong' }, 'TOKEN_WRONG'],
    ] as const) {
      const res = await server.app.inject({ method: 'GET', url: '/sessions', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toMatchObject({ code });
    }
    expect((await server.app.inject({ method: 'POST', url: '/sessions' })).statusCode).toBe(401);
    expect((await server.app.inject({ method: 'GET', url: '/agents/tools' })).statusCode).toBe(401);
    expect((await server.app.inject({ method: 'POST', url: '/auth/logout' })).statusCode).toBe(401);
  });

  it('never accepts the token in the URL', async () => {
    for (const url of [
      `/sessions?token=${TOKEN}`,
      `/sessions?access_token=${TOKEN}`,
      `/sessions?authorization=Bearer%20${TOKEN}`,
    ]) {
      expect((await server.app.inject({ method: 'GET', url })).statusCode).toBe(401);
    }
  });

  it('accepts the bearer header', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: '/sessions',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
  });

  it('keeps /health, /auth/login and the web client public', async () => {
    expect((await server.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await server.app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
  });

  it('logs in with the cookie, refuses a wrong token, logs out', async () => {
    const wrong = await server.app.inject({ method: 'POST', url: '/auth/login', payload: { token: 'nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const bad = await server.app.inject({ method: 'POST', url: '/auth/login', payload: { token: 5 } });
    expect(bad.statusCode).toBe(400);
    const login = await server.app.inject({ method: 'POST', url: '/auth/login', payload: { token: TOKEN } });
    expect(login.statusCode).toBe(200);
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toMatch(/^navi_auth=[^;]+;/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0] ?? '';
    const res = await server.app.inject({
      method: 'GET',
      url: '/sessions',
      headers: { cookie: `other=1; ${cookie}` },
    });
    expect(res.statusCode).toBe(200);
    const out = await server.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie } });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
  });

  it('serves remote clients that carry the token', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: '/sessions',
      remoteAddress: '192.168.1.20',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('without a token', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({ agent: scriptedAgent() });
  });
  afterAll(async () => server.close());

  it('serves loopback clients only', async () => {
    for (const remoteAddress of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      const res = await server.app.inject({ method: 'GET', url: '/sessions', remoteAddress });
      expect(res.statusCode, remoteAddress).toBe(200);
    }
    for (const remoteAddress of ['10.0.0.5', '192.168.1.20', '::ffff:10.0.0.1', 'fe80::1', '128.0.0.1']) {
      for (const url of ['/sessions', '/health', '/']) {
        const res = await server.app.inject({ method: 'GET', url, remoteAddress });
        expect(res.statusCode, `${remoteAddress} ${url}`).toBe(403);
        expect(res.json()).toMatchObject({ code: 'REMOTE_FORBIDDEN' });
      }
    }
  });

  it('refuses state-changing requests from a foreign browser origin', async () => {
    const foreign = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ code: 'FOREIGN_ORIGIN' });
    const same = await server.app.inject({
      method: 'POST',
      url: '/sessions',
      headers: { origin: 'http://localhost:80', host: 'localhost:80' },
    });
    expect(same.statusCode).toBe(201);
  });

  it('refuses requests addressed to a foreign host name (DNS rebinding), REST and WebSocket', async () => {
    for (const host of ['evil.example', 'evil.example:8000', '127.0.0.1.nip.io']) {
      const res = await server.app.inject({ method: 'GET', url: '/sessions', headers: { host } });
      expect(res.statusCode, host).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FOREIGN_HOST' });
      expect(res.json().error).toMatch(/NAVI_API_TOKEN/);
    }
    for (const host of ['localhost:8000', '127.0.0.1:8000', '[::1]:8000', 'navi.localhost']) {
      const res = await server.app.inject({ method: 'GET', url: '/sessions', headers: { host } });
      expect(res.statusCode, host).toBe(200);
    }
    const created = await server.app.inject({ method: 'POST', url: '/sessions', payload: {} });
    const id = created.json().session_id as string;
    const ws = await EventClient.connect(server.wsUrl(id), { headers: { host: 'evil.example' } });
    await new Promise((r) => setTimeout(r, 200));
    expect(ws.closeCode).toBe(4403);
  });

  it('login says no token is needed', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/auth/login', payload: { token: 'x' } });
    expect(res.json()).toEqual({ ok: true, token_required: false });
  });

  it('recognises loopback addresses', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::ffff:127.9.9.9')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('127.0.0.1.evil')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});
