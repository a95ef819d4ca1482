/**
 * Paged history over real HTTP (docs/protocol.md#paged-history): `GET /sessions/{id}` answers the
 * newest page and `GET /sessions/{id}/messages?before=` the older ones, and a client that follows
 * `next_before` sees the whole display buffer exactly once. Every kind of bad query is refused
 * with a code and a message saying what to send instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/protocol/error-codes.js';
import {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  type MessagePage,
  type SessionDetail,
  type SessionExport,
  type SessionMessage,
} from '../../src/protocol/rest.js';
import type { BufferedMessage, StoredMessage } from '../../src/store/types.js';
import { type NaviHandle, startNavi } from '../support/navi.js';

/** More than one page of the largest size, so every limit is cut by the session, not the page. */
const LONG = MAX_PAGE_LIMIT + 234;
const SHORT = 7;

let navi: NaviHandle;
let long: string;
let short: string;
let empty: string;

function message(i: number, sessionTag: string): StoredMessage {
  return {
    id: `${sessionTag}-${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i} of ${sessionTag}`,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    ...(i % 5 === 4 ? { thinking: `thought ${i}` } : {}),
  };
}

async function fill(sessionId: string, count: number, tag: string): Promise<void> {
  const entries: BufferedMessage[] = [];
  for (let i = 0; i < count; i++) {
    // Every 9th message lives in one buffer only, as injected images and failed turns do.
    const display = i % 9 !== 3;
    const context = i % 9 !== 6;
    entries.push({ message: message(i, tag), display, context });
  }
  await navi.services.sessions.append(sessionId, entries);
}

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${navi.url}${path}`);
  return { status: res.status, body: await res.json() };
}

async function detail(sessionId: string, query = ''): Promise<SessionDetail> {
  const { status, body } = await get(`/sessions/${sessionId}${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as SessionDetail;
}

async function older(sessionId: string, query: string): Promise<MessagePage> {
  const { status, body } = await get(`/sessions/${sessionId}/messages${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as MessagePage;
}

async function refused(path: string, status: number, code: ErrorCode): Promise<string> {
  const res = await get(path);
  expect(res.status, path).toBe(status);
  const body = res.body as { code: string; error: string };
  expect(body.code, path).toBe(code);
  return body.error;
}

/** The display buffer as the store holds it, over the wire's JSON. */
async function everything(sessionId: string): Promise<SessionMessage[]> {
  return JSON.parse(JSON.stringify(await navi.services.sessions.getMessages(sessionId)));
}

/** Walks from the newest page back to the start as a client does; answers the messages in order. */
async function walk(
  sessionId: string,
  limit?: number,
): Promise<{ messages: SessionMessage[]; pages: number }> {
  const query = limit === undefined ? '' : `limit=${limit}`;
  const first = await detail(sessionId, query ? `?${query}` : '');
  let messages = first.messages;
  let before = first.next_before;
  let pages = 1;
  while (before !== null) {
    const page = await older(sessionId, `?before=${encodeURIComponent(before)}${query ? `&${query}` : ''}`);
    expect(page.messages.length).toBeGreaterThan(0);
    messages = [...page.messages, ...messages];
    before = page.next_before;
    pages += 1;
    if (pages > LONG + 1) throw new Error('paging does not end');
  }
  return { messages, pages };
}

beforeAll(async () => {
  navi = await startNavi();
  long = await navi.createSession();
  short = await navi.createSession();
  empty = await navi.createSession();
  await fill(long, LONG, 'long');
  await fill(short, SHORT, 'short');
});

afterAll(async () => {
  await navi?.close();
});

describe('GET /sessions/{id}', () => {
  it('answers the session and its newest 100 display messages with a cursor for the rest', async () => {
    const all = await everything(long);
    const session = await detail(long);
    expect(session).toMatchObject({ id: long, profile_id: expect.any(String), title: expect.any(String) });
    expect(session.messages).toHaveLength(DEFAULT_PAGE_LIMIT);
    expect(session.messages).toEqual(all.slice(-DEFAULT_PAGE_LIMIT));
    expect(session.next_before).toBe(session.messages[0]!.id);
  });

  it('answers a short session whole with no cursor, and an empty one with nothing', async () => {
    expect((await detail(short)).messages).toEqual(await everything(short));
    expect((await detail(short)).next_before).toBeNull();
    expect(await detail(empty)).toMatchObject({ messages: [], next_before: null });
  });

  it('takes limit from 1 to 1000', async () => {
    const all = await everything(long);
    for (const limit of [1, 2, 99, 101, 999, MAX_PAGE_LIMIT]) {
      const session = await detail(long, `?limit=${limit}`);
      expect(session.messages, `limit ${limit}`).toEqual(all.slice(-limit));
      expect(session.next_before).toBe(all.at(-limit)!.id);
    }
    // Leading zeros are still the number.
    expect((await detail(long, '?limit=0005')).messages).toHaveLength(5);
  });

  it('refuses a limit that is not a whole number from 1 to 1000, saying the range', async () => {
    const bad = [
      '0',
      '1001',
      '-1',
      '1.5',
      'abc',
      '',
      '1e3',
      '0x10',
      ' 5',
      '5 ',
      '+5',
      '99999999999999999999',
    ];
    for (const limit of bad) {
      const error = await refused(
        `/sessions/${long}?limit=${encodeURIComponent(limit)}`,
        400,
        'INVALID_PAGE',
      );
      expect(error).toMatch(/limit: a whole number from 1 to 1000.*limit got/);
      expect(error).toContain(`got ${JSON.stringify(limit.length > 20 ? `${limit.slice(0, 20)}…` : limit)}`);
    }
    await refused(`/sessions/${long}?limit`, 400, 'INVALID_PAGE');
    await refused(`/sessions/${long}?limit=1&limit=2`, 400, 'INVALID_PAGE');
  });

  it('answers 404 for an unknown session before it looks at the query', async () => {
    await refused(`/sessions/${crypto.randomUUID()}`, 404, 'SESSION_NOT_FOUND');
    await refused(`/sessions/${crypto.randomUUID()}?limit=abc`, 404, 'SESSION_NOT_FOUND');
    await refused('/sessions/not-a-session-id', 404, 'SESSION_NOT_FOUND');
  });
});

describe('GET /sessions/{id}/messages', () => {
  it('without before answers the newest page, as the session does', async () => {
    const session = await detail(long, '?limit=30');
    expect(await older(long, '?limit=30')).toEqual({
      messages: session.messages,
      next_before: session.next_before,
    });
    expect((await older(long, '')).messages).toHaveLength(DEFAULT_PAGE_LIMIT);
  });

  it('answers the messages just before the cursor, and null at the start', async () => {
    const all = await everything(long);
    const at = 500;
    const page = await older(long, `?before=${all[at]!.id}&limit=10`);
    expect(page.messages).toEqual(all.slice(at - 10, at));
    expect(page.next_before).toBe(all[at - 10]!.id);
    const start = await older(long, `?before=${all[3]!.id}&limit=10`);
    expect(start).toEqual({ messages: all.slice(0, 3), next_before: null });
    expect(await older(long, `?before=${all[0]!.id}`)).toEqual({ messages: [], next_before: null });
  });

  it('pages concatenate to exactly the display buffer, in order, for any page size', async () => {
    const all = await everything(long);
    // Display-only messages are there, context-only ones are not.
    expect(all.some((m) => m.id === 'long-3')).toBe(false);
    expect(all.some((m) => m.id === 'long-6')).toBe(true);
    for (const limit of [undefined, 1000, 333, 7]) {
      const { messages, pages } = await walk(long, limit);
      expect(messages, `limit ${limit}`).toEqual(all);
      expect(pages).toBe(Math.ceil(all.length / (limit ?? DEFAULT_PAGE_LIMIT)));
    }
    expect((await walk(short, 1)).messages).toEqual(await everything(short));
  });

  it('answers 404 MESSAGE_NOT_FOUND for a cursor this session does not hold, saying what to do', async () => {
    const all = await everything(short);
    const unknown = await refused(`/sessions/${long}/messages?before=ghost`, 404, 'MESSAGE_NOT_FOUND');
    expect(unknown).toMatch(/newest page/);
    // Another session's message is no cursor here, even though it exists.
    await refused(`/sessions/${long}/messages?before=${all[2]!.id}`, 404, 'MESSAGE_NOT_FOUND');
    // A context-only message is not in the display buffer that pages.
    await refused(`/sessions/${long}/messages?before=long-3`, 404, 'MESSAGE_NOT_FOUND');
    // Hostile text is only an id that does not exist, and the session is unharmed.
    const hostile = encodeURIComponent("long-5' OR '1'='1'; DROP TABLE messages; --");
    await refused(`/sessions/${long}/messages?before=${hostile}`, 404, 'MESSAGE_NOT_FOUND');
    await refused(`/sessions/${long}/messages?before=%00`, 404, 'MESSAGE_NOT_FOUND');
    await refused(
      `/sessions/${long}/messages?before=${encodeURIComponent('☃'.repeat(100))}`,
      404,
      'MESSAGE_NOT_FOUND',
    );
    expect(await everything(long)).toHaveLength((await walk(long, 1000)).messages.length);
  });

  it('refuses a cursor that is empty, over 100 characters or given twice, with 400 INVALID_PAGE', async () => {
    for (const before of ['', 'x'.repeat(101), 'x'.repeat(8000)]) {
      const error = await refused(`/sessions/${long}/messages?before=${before}`, 400, 'INVALID_PAGE');
      expect(error).toMatch(/next_before/);
    }
    await refused(`/sessions/${long}/messages?before`, 400, 'INVALID_PAGE');
    await refused(`/sessions/${long}/messages?before=long-9&before=long-10`, 400, 'INVALID_PAGE');
    // A 100-character id is a well-formed cursor that names nothing.
    await refused(`/sessions/${long}/messages?before=${'x'.repeat(100)}`, 404, 'MESSAGE_NOT_FOUND');
  });

  it('checks limit as the session route does', async () => {
    const all = await everything(long);
    await refused(`/sessions/${long}/messages?before=${all[500]!.id}&limit=0`, 400, 'INVALID_PAGE');
    await refused(`/sessions/${long}/messages?before=${all[500]!.id}&limit=1001`, 400, 'INVALID_PAGE');
    await refused(`/sessions/${long}/messages?limit=1.5`, 400, 'INVALID_PAGE');
    expect(all.length).toBeGreaterThan(MAX_PAGE_LIMIT + 50);
    const page = await older(long, `?before=${all[MAX_PAGE_LIMIT + 50]!.id}&limit=${MAX_PAGE_LIMIT}`);
    expect(page.messages).toEqual(all.slice(50, MAX_PAGE_LIMIT + 50));
  });

  it('answers 404 for an unknown or malformed session', async () => {
    await refused(`/sessions/${crypto.randomUUID()}/messages`, 404, 'SESSION_NOT_FOUND');
    await refused(`/sessions/${crypto.randomUUID()}/messages?before=long-1`, 404, 'SESSION_NOT_FOUND');
    await refused('/sessions/subagent_1/messages', 404, 'SESSION_NOT_FOUND');
  });

  it('after a message is appended, older pages stay as they were and the newest page has it', async () => {
    const first = await detail(short, '?limit=3');
    const olderBefore = await older(short, `?before=${first.next_before}&limit=3`);
    await navi.services.sessions.append(short, [
      { message: message(100, 'short'), display: true, context: true },
    ]);
    expect(await older(short, `?before=${first.next_before}&limit=3`)).toEqual(olderBefore);
    expect((await detail(short, '?limit=1')).messages.map((m) => m.id)).toEqual(['short-100']);
  });
});

describe('GET /sessions/{id}/export, which reads the whole session a page at a time', () => {
  it('sends every message of a session longer than a page, in order, as valid JSON', async () => {
    const res = await fetch(`${navi.url}/sessions/${long}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as SessionExport;
    expect(body.messages).toEqual(await everything(long));
    expect(body.messages.length).toBeGreaterThan(MAX_PAGE_LIMIT);
    expect(body.context).toEqual(JSON.parse(JSON.stringify(await navi.services.sessions.getContext(long))));
  });

  it('sends the Markdown of every page', async () => {
    const res = await fetch(`${navi.url}/sessions/${long}/export?format=markdown`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const all = await everything(long);
    const positions = [all[0]!, all[MAX_PAGE_LIMIT]!, all.at(-1)!].map((m) => text.indexOf(`${m.content}\n`));
    for (const at of positions) expect(at).toBeGreaterThan(0);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(text.endsWith('\n')).toBe(true);
  });
});
