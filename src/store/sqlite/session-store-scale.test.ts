/**
 * Persisting a turn must cost what the turn adds, not the session's length (docs/architecture.md#tables). Checked
 * structurally (no statement of the store scans a message table) and by behaviour at 100 000
 * messages; speed itself is measured by `npm run bench`, never asserted here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BufferedMessage, StoredMessage } from '../types.js';
import { type Database, openDatabase } from './database.js';
import { SqliteSessionStore } from './session-store.js';

let dir: string;
let db: Database;
let store: SqliteSessionStore;
const sources: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-scale-'));
  db = openDatabase(join(dir, 'navi.db'));
  // Record every statement the store prepares, to inspect their query plans.
  const prepare = db.prepare;
  db.prepare = ((source: string) => {
    sources.push(source);
    return prepare.call(db, source);
  }) as typeof db.prepare;
  store = new SqliteSessionStore(db);
  db.prepare = prepare;
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function msg(i: number): StoredMessage {
  return {
    id: `m${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i}`,
    created_at: '2026-01-01T00:00:00Z',
  };
}

describe('session store at scale', () => {
  it('prepares no statement that scans a message table', () => {
    expect(sources.length).toBeGreaterThan(10);
    for (const source of sources) {
      // Placeholders become literals: EXPLAIN needs no bound values then, and the plan is the same.
      const plan = db
        .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${source.replace(/@\w+|\?/g, "'x'")}`)
        .all()
        .map((row) => row.detail);
      for (const step of plan) expect(step, source).not.toMatch(/^SCAN (messages|context_messages)\b/);
    }
  });

  it('appends, updates and compresses correctly on a session of 100 000 messages', async () => {
    await store.create({ id: 's', profile_id: 'p' });
    const total = 100_000;
    const batch = 5_000;
    for (let start = 0; start < total; start += batch) {
      const entries: BufferedMessage[] = [];
      for (let i = start; i < start + batch; i++)
        entries.push({ message: msg(i), display: true, context: true });
      await store.append('s', entries);
    }
    await store.append('s', [{ message: msg(total), display: true, context: true }]);
    await store.updateMessage('s', `m${total}`, { content: 'streamed' });

    const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    expect(count('messages')).toBe(total + 1);
    const seqs = db
      .prepare<[], number>("SELECT seq FROM messages WHERE session_id = 's' ORDER BY seq DESC LIMIT 2")
      .pluck()
      .all();
    expect(seqs).toEqual([total + 1, total]);
    const last = db.prepare('SELECT id, content FROM context_messages WHERE seq = ?').get(total + 1);
    expect(last).toEqual({ id: `m${total}`, content: 'streamed' });

    await store.replaceContextPrefix('s', `m${total - 2}`, { ...msg(-1), id: 'sum', kind: 'summary' });
    expect((await store.getContext('s')).map((m) => m.id)).toEqual([
      'sum',
      `m${total - 2}`,
      `m${total - 1}`,
      `m${total}`,
    ]);
    expect(count('messages')).toBe(total + 1);

    // Paged history reads from either end of the index: the newest page, and the oldest.
    const newest = await store.getMessagePage('s', { limit: 100 });
    expect(newest?.messages.map((m) => m.id)).toEqual(
      Array.from({ length: 100 }, (_, i) => `m${total - 99 + i}`),
    );
    expect(newest?.next_before).toBe(`m${total - 99}`);
    const oldest = await store.getMessagePage('s', { limit: 1000, before: 'm3' });
    expect(oldest).toEqual({ messages: [msg(0), msg(1), msg(2)], next_before: null });
    // Not a speed limit: the search index's triggers write for each of the 100 000 messages,
    // which on a slow or busy disk takes longer than the default 30 s.
  }, 180_000);
});
