/**
 * Pairing a browser for consent: codes are single-use and expire, wrong or hostile input gets a
 * 4xx that says what to do, the cookie survives a restart on the same database, the API token
 * counts as consent, and the database never holds a usable code or cookie.
 */
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthStatus } from '../../src/protocol/rest.js';
import { startNavi, tempDir } from '../support/navi.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent } from './scripted-agent.js';

const json = { 'content-type': 'application/json' };

async function pairWith(url: string, code: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/auth/pair`, {
    method: 'POST',
    headers: { ...json, ...headers },
    body: JSON.stringify({ code }),
  });
}

async function status(url: string, headers: Record<string, string> = {}): Promise<AuthStatus> {
  const res = await fetch(`${url}/auth/status`, { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as AuthStatus;
}

function cookieOf(res: Response): string {
  const value = /^navi_consent=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (!value) throw new Error('no navi_consent cookie');
  return `navi_consent=${value}`;
}

describe('pairing without a token', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({ agent: scriptedAgent() });
  });
  afterAll(async () => server.close());

  it('a local client without the cookie has no consent', async () => {
    expect(await status(server.url)).toEqual({ token_required: false, consent: false });
    expect(await status(server.url, { cookie: 'navi_consent=made-up' })).toMatchObject({ consent: false });
  });

  it('exchanges a code for an HttpOnly, SameSite=Strict cookie that gives consent', async () => {
    const code = await server.services.consent.createPairingCode(60_000);
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    // Typed by hand: lower case, no dashes, spaces around.
    const res = await pairWith(server.url, ` ${code.toLowerCase().replaceAll('-', '')} `);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, consent: true });
    const setCookie = res.headers.get('set-cookie') ?? '';
    for (const part of ['HttpOnly', 'SameSite=Strict', 'Path=/', 'Max-Age='])
      expect(setCookie).toContain(part);
    expect(await status(server.url, { cookie: `a=b; ${cookieOf(res)}` })).toEqual({
      token_required: false,
      consent: true,
    });
  });

  it('uses a code once', async () => {
    const code = await server.services.consent.createPairingCode(60_000);
    expect((await pairWith(server.url, code)).status).toBe(200);
    const again = await pairWith(server.url, code);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      code: 'PAIRING_CODE_USED',
      error: expect.stringMatching(/navi pair/),
    });
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('refuses an expired code', async () => {
    const issued = new Date(Date.now() - 11 * 60_000);
    const code = await server.services.consent.createPairingCode(10 * 60_000, issued);
    const res = await pairWith(server.url, code);
    expect(res.status).toBe(410);
    expect(await res.json()).toMatchObject({
      code: 'PAIRING_CODE_EXPIRED',
      error: expect.stringMatching(/navi pair/),
    });
  });

  it('refuses wrong and malformed codes with a message saying what to do', async () => {
    for (const code of ['ABCD-EFGH-JKMN', 'x', '!!!!-????-####', 'ABCD-EFGH-JKM']) {
      const res = await pairWith(server.url, code);
      expect(res.status, code).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'PAIRING_CODE_INVALID',
        error: expect.stringMatching(/navi pair/),
      });
    }
  });

  it('answers hostile bodies with 4xx, never 500', async () => {
    const bodies: [string, string][] = [
      ['{}', 'application/json'],
      ['{"code": 12345}', 'application/json'],
      ['{"code": null}', 'application/json'],
      ['{"code": ["ABCD"]}', 'application/json'],
      ['{"code": ""}', 'application/json'],
      [JSON.stringify({ code: 'A'.repeat(100_000) }), 'application/json'],
      ['{"code": "ABCD-EFGH-JKMN", "extra": 1}', 'application/json'],
      ['{"code": "ABCD', 'application/json'],
      ['null', 'application/json'],
      ['[]', 'application/json'],
      ['code=ABCD', 'application/x-www-form-urlencoded'],
      ['', 'application/json'],
    ];
    for (const [body, type] of bodies) {
      const res = await fetch(`${server.url}/auth/pair`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      expect(res.status, body.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(res.status, body.slice(0, 40)).toBeLessThan(500);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const hugeCookie = await status(server.url, { cookie: `navi_consent=${'x'.repeat(4000)}` });
    expect(hugeCookie.consent).toBe(false);
  });

  it('refuses consent routes without the cookie and opens them with it', async () => {
    const id = await server.createSession();
    const routes = [
      { url: `/sessions/${id}/confirm`, payload: { call_id: 'none', approved: true }, paired: 404 },
      { url: '/agents/mcp/servers/x/approve', payload: { command: 'x' }, paired: 404 },
    ];
    const cookie = await server.pair();
    for (const route of routes) {
      const refused = await server.app.inject({ method: 'POST', url: route.url, payload: route.payload });
      expect(refused.statusCode, route.url).toBe(403);
      expect(refused.json()).toMatchObject({
        code: 'CONSENT_REQUIRED',
        error: expect.stringMatching(/navi pair/),
      });
      const allowed = await server.app.inject({
        method: 'POST',
        url: route.url,
        payload: route.payload,
        headers: { cookie },
      });
      // The scripted server has no MCP manager: 404 shows the request got past the consent check.
      expect(allowed.statusCode, route.url).toBe(route.paired);
    }
  });

  it('unpairs: the cookie stops working', async () => {
    const cookie = await server.pair();
    const res = await fetch(`${server.url}/auth/pair`, { method: 'DELETE', headers: { cookie } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, unpaired: true });
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0');
    expect(await status(server.url, { cookie })).toMatchObject({ consent: false });
  });

  it('keeps only hashes in the database: neither the code nor the cookie can be read back', async () => {
    const code = await server.services.consent.createPairingCode(60_000);
    const res = await pairWith(server.url, code);
    const secret = cookieOf(res).slice('navi_consent='.length);
    const db = new BetterSqlite3(server.services.settings.DB_PATH, { readonly: true });
    try {
      const dump = JSON.stringify([
        db.prepare('SELECT * FROM pairing_codes').all(),
        db.prepare('SELECT * FROM paired_clients').all(),
      ]);
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(code.replaceAll('-', ''));
      expect(dump).not.toContain(code);
    } finally {
      db.close();
    }
  });
});

describe('guessing codes', () => {
  it('stops accepting any code, the right one too, after many wrong ones', async () => {
    const server = await startScripted({ agent: scriptedAgent() });
    try {
      let limited = 0;
      for (let i = 0; i < 25; i++) {
        const res = await pairWith(server.url, `0000-0000-${String(i).padStart(4, '0')}`);
        if (res.status === 429) limited++;
        else expect(res.status).toBe(400);
      }
      expect(limited).toBeGreaterThan(0);
      const code = await server.services.consent.createPairingCode(60_000);
      const res = await pairWith(server.url, code);
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ code: 'PAIRING_RATE_LIMITED' });
    } finally {
      await server.close();
    }
  });
});

describe('a paired browser across a restart', () => {
  it('keeps consent on the same database', async () => {
    const dir = tempDir();
    const first = await startNavi({ dir });
    const cookie = await first.pair();
    expect(await status(first.url, { cookie })).toMatchObject({ consent: true });
    const port = first.port;
    await first.close();
    const second = await startNavi({ dir, port });
    try {
      expect(await status(second.url, { cookie })).toMatchObject({ consent: true });
      expect(await status(second.url)).toMatchObject({ consent: false });
    } finally {
      await second.close();
    }
  });
});

describe('with NAVI_API_TOKEN set', () => {
  const TOKEN = 'pairing-test-token';
  let server: TestServer;
  beforeAll(async () => {
    server = await startScripted({ agent: scriptedAgent(), settings: { NAVI_API_TOKEN: TOKEN } });
  });
  afterAll(async () => server.close());

  it('the bearer token and the login cookie are consent', async () => {
    expect(await status(server.url)).toEqual({ token_required: true, consent: false });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    expect(await status(server.url, bearer)).toEqual({ token_required: true, consent: true });
    const login = await fetch(`${server.url}/auth/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ token: TOKEN }),
    });
    const authCookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(await status(server.url, { cookie: authCookie })).toMatchObject({ consent: true });
    const confirm = await server.app.inject({
      method: 'POST',
      url: `/sessions/${await server.createSession()}/confirm`,
      headers: bearer,
      payload: { call_id: 'none', approved: true },
    });
    // Past the consent check: there is simply nothing waiting.
    expect(confirm.json()).toMatchObject({ code: 'CONFIRMATION_NOT_FOUND' });
  });

  it('pairing needs the token first; a wrong token is not consent', async () => {
    const code = await server.services.consent.createPairingCode(60_000);
    expect((await pairWith(server.url, code)).status).toBe(401);
    expect(await status(server.url, { authorization: 'Bearer wrong' })).toMatchObject({ consent: false });
    const refused = await server.app.inject({
      method: 'POST',
      url: '/agents/mcp/servers/x/approve',
      headers: { authorization: 'Bearer wrong' },
      payload: { command: 'x' },
    });
    expect(refused.statusCode).toBe(401);
    expect((await pairWith(server.url, code, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });
});
