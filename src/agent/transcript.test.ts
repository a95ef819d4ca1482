import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../store/sqlite/index.js';
import type { StoredMessage } from '../store/types.js';
import { captureLogger } from '../tools/test-helpers.js';
import { SessionTranscript } from './transcript.js';

const dir = mkdtempSync(join(tmpdir(), 'navi-transcript-'));
const stores = createSqliteStores(join(dir, 'navi.db'));
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

let sessionId = '';
let n = 0;
beforeEach(async () => {
  sessionId = `s${++n}`;
  await stores.sessions.create({ id: sessionId, profile_id: 'p' });
});

const answer = (id: string): StoredMessage => ({
  id,
  role: 'assistant',
  content: '',
  created_at: '2026-01-01T00:00:00.000Z',
});

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('SessionTranscript answers', () => {
  it('stores an answer that finishes within the save interval once, whole, with its marks and claims', async () => {
    const { logger } = captureLogger();
    // An interval no test run reaches: only finish can store the answer.
    const transcript = new SessionTranscript(sessionId, stores.sessions, logger, 3_600_000);
    const writer = await transcript.beginAnswer(answer('a1'));
    writer.progress('Hel', 'hmm');
    writer.progress('Hello', 'hmm, yes');
    expect(await stores.sessions.getMessages(sessionId)).toEqual([]);
    await writer.finish('Hello there', 'hmm, yes', { unverifiedClaims: ['I saved the file'] });
    const stored = {
      ...answer('a1'),
      content: 'Hello there',
      thinking: 'hmm, yes',
      unverified_claims: ['I saved the file'],
    };
    expect(await stores.sessions.getMessages(sessionId)).toEqual([stored]);
    expect(await stores.sessions.getContext(sessionId)).toEqual([stored]);
  });

  it('stores a stopped answer with both marks, and no empty thinking', async () => {
    const { logger } = captureLogger();
    const transcript = new SessionTranscript(sessionId, stores.sessions, logger, 3_600_000);
    const writer = await transcript.beginAnswer(answer('a2'));
    writer.progress('Half', '');
    await writer.finish('Half an', '', { interrupted: true, stopped: true });
    expect(await stores.sessions.getMessages(sessionId)).toEqual([
      { ...answer('a2'), content: 'Half an', interrupted: true, stopped: true },
    ]);
  });

  it('puts a longer answer on disk, marked interrupted, once the interval is up, and finishes it there', async () => {
    const { logger } = captureLogger();
    const transcript = new SessionTranscript(sessionId, stores.sessions, logger, 20);
    const writer = await transcript.beginAnswer(answer('a3'));
    writer.progress('The first part', '');
    const partial = await until(
      () => stores.sessions.getMessages(sessionId),
      (messages) => messages.length > 0,
    );
    expect(partial).toEqual([{ ...answer('a3'), content: 'The first part', interrupted: true }]);
    writer.progress('The first part and more', 'thought');
    await until(
      () => stores.sessions.getMessages(sessionId),
      (messages) => messages[0]?.content === 'The first part and more',
    );
    await writer.finish('The first part and more, done.', 'thought', { unverifiedClaims: ['I sent it'] });
    const stored = {
      ...answer('a3'),
      content: 'The first part and more, done.',
      thinking: 'thought',
      unverified_claims: ['I sent it'],
    };
    expect(await stores.sessions.getMessages(sessionId)).toEqual([stored]);
    expect(await stores.sessions.getContext(sessionId)).toEqual([stored]);
  });

  it('fails finish when the answer cannot be stored (the session is gone)', async () => {
    const { logger } = captureLogger();
    const transcript = new SessionTranscript('no-such-session', stores.sessions, logger, 3_600_000);
    const writer = await transcript.beginAnswer(answer('a4'));
    writer.progress('Hi', '');
    await expect(writer.finish('Hi', '', {})).rejects.toThrow(/no-such-session does not exist/);
  });

  it('stores the token count with the answer, in either path', async () => {
    const { logger } = captureLogger();
    const quick = await new SessionTranscript(sessionId, stores.sessions, logger, 3_600_000).beginAnswer(
      answer('q'),
    );
    quick.progress('Hi', '');
    await quick.finish('Hi', '', { tokens: 321 });
    expect((await stores.sessions.get(sessionId))?.context_token_count).toBe(321);
    const slow = await new SessionTranscript(sessionId, stores.sessions, logger, 10).beginAnswer(answer('l'));
    slow.progress('Long', '');
    await until(
      () => stores.sessions.getMessages(sessionId),
      (messages) => messages.length === 2,
    );
    await slow.finish('Long answer', '', { tokens: 654 });
    expect((await stores.sessions.get(sessionId))?.context_token_count).toBe(654);
    expect((await stores.sessions.getMessages(sessionId)).map((m) => m.content)).toEqual([
      'Hi',
      'Long answer',
    ]);
  });
});
