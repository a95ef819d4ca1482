/**
 * A request whose token is present but wrong is told so (401 TOKEN_WRONG, WebSocket close 4401
 * with the reason `token wrong`), apart from one that carries no token (401 UNAUTHORIZED,
 * `token required`): a person with a stale cookie or a mistyped token learns what to fix. Real
 * Navi on a real port, real HTTP and WebSocket clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { errorTable } from '../../src/protocol/error-codes.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';

const TOKEN = 'the-right-token-4711';

interface Closed {
  code: number;
  reason: string;
  /** Frames the server sent before closing (none are expected). */
  frames: number;
}

function closeOf(url: string, headers: Record<string, string>): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    let frames = 0;
    socket.on('message', () => {
      frames += 1;
    });
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), frames }));
    socket.on('error', reject);
  });
}

describe('a wrong API token is told apart from a missing one', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let sessionId: string;
  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: { OLLAMA_HOST: fake.ollamaUrl, NAVI_API_TOKEN: TOKEN, NAVI_SANDBOX: 'off' },
    });
    const created = await fetch(`${navi.url}/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(created.status).toBe(201);
    sessionId = ((await created.json()) as { session_id: string }).session_id;
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  async function get(path: string, headers: Record<string, string>) {
    const res = await fetch(`${navi.url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as { error: string; code: string } };
  }

  it('REST: a wrong bearer token or a stale cookie answers 401 TOKEN_WRONG with what to do', async () => {
    const wrong: Record<string, string>[] = [
      { authorization: 'Bearer not-the-token' },
      { authorization: `Bearer ${TOKEN}x` },
      // A cookie from before NAVI_API_TOKEN changed.
      { cookie: 'navi_auth=c3RhbGUtY29va2ll' },
      { cookie: 'theme=dark; navi_auth=stale' },
    ];
    for (const headers of wrong) {
      const { status, body } = await get('/sessions', headers);
      expect(status, JSON.stringify(headers)).toBe(401);
      expect(body.code, JSON.stringify(headers)).toBe('TOKEN_WRONG');
      expect(body.error).toBe(errorTable.TOKEN_WRONG.message);
      expect(body.error).toMatch(/NAVI_API_TOKEN/);
      // The answer never echoes what was sent.
      expect(JSON.stringify(body)).not.toContain('not-the-token');
    }
  });

  it('REST: no token, an empty one or a header that is not a bearer token stays UNAUTHORIZED', async () => {
    const missing: Record<string, string>[] = [
      {},
      { authorization: 'Bearer ' },
      { authorization: TOKEN },
      { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` },
      { cookie: 'navi_auth=' },
      { cookie: 'other=1' },
    ];
    for (const headers of missing) {
      const { status, body } = await get('/sessions', headers);
      expect(status, JSON.stringify(headers)).toBe(401);
      expect(body.code, JSON.stringify(headers)).toBe('UNAUTHORIZED');
    }
  });

  it('REST: the right token still works, even beside a stale cookie', async () => {
    expect((await get('/sessions', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const mixed = await fetch(`${navi.url}/sessions`, {
      headers: { authorization: `Bearer ${TOKEN}`, cookie: 'navi_auth=stale' },
    });
    expect(mixed.status).toBe(200);
  });

  it('POST /auth/login: a wrong token is TOKEN_WRONG, an empty one UNAUTHORIZED, hostile input 400', async () => {
    const login = (body: string) =>
      fetch(`${navi.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const wrong = await login(JSON.stringify({ token: 'guess' }));
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { code: string }).code).toBe('TOKEN_WRONG');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const empty = await login(JSON.stringify({ token: '   ' }));
    expect(empty.status).toBe(401);
    expect(((await empty.json()) as { code: string }).code).toBe('UNAUTHORIZED');
    for (const body of [
      '{}',
      JSON.stringify({ token: 42 }),
      JSON.stringify({ token: 'x'.repeat(5000) }),
      JSON.stringify({ token: TOKEN, admin: true }),
      'not json',
    ]) {
      const res = await login(body);
      expect(res.status, body.slice(0, 40)).toBe(400);
      expect(res.headers.get('set-cookie'), body.slice(0, 40)).toBeNull();
    }
    const right = await login(JSON.stringify({ token: TOKEN }));
    expect(right.status).toBe(200);
    expect(right.headers.get('set-cookie')).toMatch(/^navi_auth=/);
  });

  it('WebSocket: 4401 says "token wrong" for a wrong token, "token required" for none', async () => {
    const url = navi.wsUrl(sessionId);
    const wrong: Record<string, string>[] = [{ authorization: 'Bearer nope' }, { cookie: 'navi_auth=stale' }];
    for (const headers of wrong) {
      const closed = await closeOf(url, headers);
      expect(closed, JSON.stringify(headers)).toEqual({ code: 4401, reason: 'token wrong', frames: 0 });
    }
    const missing: Record<string, string>[] = [{}, { authorization: 'Token abc' }];
    for (const headers of missing) {
      const closed = await closeOf(url, headers);
      expect(closed, JSON.stringify(headers)).toEqual({ code: 4401, reason: 'token required', frames: 0 });
    }
    // The token check comes before the session lookup: a wrong token learns nothing of sessions.
    const unknown = await closeOf(navi.wsUrl('00000000-0000-4000-8000-000000000000'), {
      authorization: 'Bearer nope',
    });
    expect(unknown.code).toBe(4401);
    expect(unknown.reason).toBe('token wrong');
  });
});
