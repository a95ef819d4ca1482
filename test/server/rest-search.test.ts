/**
 * `GET /search` over real sessions in a real SQLite file: what it finds, and what it does with
 * missing, wrong-typed, oversized and hostile queries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchResults } from '../../src/protocol/rest.js';
import type { StoredMessage } from '../../src/store/types.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let walrusSession: string;
let otherSession: string;

let n = 0;
function said(role: 'user' | 'assistant', content: string): StoredMessage {
  n += 1;
  return { id: `msg-${n}`, role, content, created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString() };
}

beforeAll(async () => {
  server = await startScripted({ agent: scriptedAgent() });
  const { sessions } = server.services;
  walrusSession = await server.createSession();
  await sessions.update(walrusSession, { title: 'Arctic animals' });
  await sessions.append(
    walrusSession,
    [
      said('user', 'Tell me about the walrus'),
      said('assistant', 'A walrus has <b>tusks</b> & whiskers.'),
    ].map((message) => ({ message, display: true, context: true })),
  );
  otherSession = await server.createSession();
  await sessions.append(
    otherSession,
    Array.from({ length: 30 }, (_, i) => ({
      message: said('user', `penguin fact number ${i}`),
      display: true,
      context: true,
    })),
  );
});
afterAll(async () => server.close());

async function search(
  query: string,
): Promise<{ status: number; body: SearchResults & { code?: string; error?: string } }> {
  const res = await server.app.inject({ method: 'GET', url: `/search${query}` });
  return { status: res.statusCode, body: res.json() };
}

describe('GET /search', () => {
  it('finds a message with its session, role, time and highlighted snippet', async () => {
    const { status, body } = await search('?q=walrus%20tusk');
    expect(status).toBe(200);
    expect(body.query).toBe('walrus tusk');
    expect(body.results).toEqual([
      {
        session_id: walrusSession,
        session_title: 'Arctic animals',
        message_id: expect.stringMatching(/^msg-/),
        role: 'assistant',
        snippet: 'A walrus has <b>tusks</b> & whiskers.',
        highlights: [
          [2, 8],
          [16, 21],
        ],
        created_at: expect.any(String),
      },
    ]);
    // Plain text: the markup in the message is text, never turned into or mixed with HTML.
    const [hit] = body.results;
    expect(hit?.highlights.map(([a, b]) => hit.snippet.slice(a, b))).toEqual(['walrus', 'tusks']);
  });

  it('finds a title, best first', async () => {
    const { body } = await search('?q=arctic');
    expect(body.results[0]).toMatchObject({ session_id: walrusSession, message_id: null, role: null });
  });

  it('gives 20 results by default, and as many as limit asks up to 50', async () => {
    expect((await search('?q=penguin')).body.results).toHaveLength(20);
    expect((await search('?q=penguin&limit=5')).body.results).toHaveLength(5);
    expect((await search('?q=penguin&limit=50')).body.results).toHaveLength(30);
  });

  it('answers an empty list when nothing matches, or the query holds no word', async () => {
    expect((await search('?q=zeppelin')).body).toEqual({ query: 'zeppelin', results: [] });
    expect((await search('?q=%22*')).body).toEqual({ query: '"*', results: [] });
  });

  it('refuses a missing, empty, blank, repeated or over-long q with INVALID_QUERY', async () => {
    for (const [query, says] of [
      ['', 'q is missing'],
      ['?q=', 'q is empty'],
      ['?q=%20%20%09', 'q is empty'],
      ['?q=a&q=b', 'give q once'],
      [`?q=${'w'.repeat(501)}`, 'q has 501 characters'],
    ] as const) {
      const { status, body } = await search(query);
      expect(status, query).toBe(400);
      expect(body.code, query).toBe('INVALID_QUERY');
      expect(body.error, query).toContain(says);
      expect(body.error, query).toContain('1 to 500 characters');
    }
    expect((await search(`?q=${'w'.repeat(500)}`)).status).toBe(200);
  });

  it('refuses a limit that is not a whole number from 1 to 50', async () => {
    for (const limit of ['0', '51', '-1', '1.5', 'ten', '', '99999999999', '20&limit=5']) {
      const { status, body } = await search(`?q=penguin&limit=${limit}`);
      expect(status, limit).toBe(400);
      expect(body.code, limit).toBe('BAD_REQUEST');
      expect(body.error, limit).toContain('limit must be a whole number from 1 to 50');
    }
  });

  it('treats FTS syntax as plain words and never fails on it', async () => {
    for (const q of [
      '"',
      '*',
      'NEAR(',
      '-',
      ':',
      'walrus"',
      'walrus*',
      'walrus OR',
      '(walrus',
      'body:walrus',
      '^walrus',
      'NOT',
      "'; DROP TABLE messages; --",
    ]) {
      const { status, body } = await search(`?q=${encodeURIComponent(q)}`);
      expect(status, q).toBe(200);
      expect(Array.isArray(body.results), q).toBe(true);
    }
    expect((await search(`?q=${encodeURIComponent('walrus"')}`)).body.results.length).toBeGreaterThan(0);
    expect((await search(`?q=${encodeURIComponent('body:walrus')}`)).body.results).toEqual([]);
  });

  it('stops finding a session once it is deleted', async () => {
    const id = await server.createSession();
    await server.services.sessions.append(id, [
      { message: said('user', 'ephemeral narwhal'), display: true, context: true },
    ]);
    expect((await search('?q=narwhal')).body.results).toHaveLength(1);
    const res = await server.app.inject({ method: 'DELETE', url: `/sessions/${id}` });
    expect(res.statusCode).toBe(204);
    expect((await search('?q=narwhal')).body.results).toEqual([]);
  });

  it('finds a session by its new title after a rename through the API', async () => {
    const res = await server.app.inject({
      method: 'PATCH',
      url: `/sessions/${otherSession}`,
      headers: { 'content-type': 'application/json' },
      payload: { title: 'Antarctic birds' },
    });
    expect(res.statusCode).toBe(200);
    expect((await search('?q=antarctic')).body.results[0]).toMatchObject({
      session_id: otherSession,
      message_id: null,
    });
  });
});
