import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSqliteStores, type SqliteStores } from './sqlite/index.js';
import { StreamingSaver } from './streaming-saver.js';
import type { MessagePatch, SessionStore } from './types.js';

let dir: string;
let stores: SqliteStores;
/** Every write the saver made, on the way to the real store. */
let writes: MessagePatch[];
let store: Pick<SessionStore, 'updateMessage'>;

beforeEach(async () => {
  vi.useFakeTimers();
  dir = mkdtempSync(join(tmpdir(), 'navi-saver-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
  await stores.sessions.create({ id: 's', profile_id: 'p' });
  await stores.sessions.append('s', [
    {
      message: {
        id: 'a',
        role: 'assistant',
        content: '',
        created_at: '2026-01-01T00:00:00.000Z',
        interrupted: true,
      },
      display: true,
      context: true,
    },
  ]);
  writes = [];
  store = {
    updateMessage: (sessionId, messageId, patch) => {
      writes.push(patch);
      return stores.sessions.updateMessage(sessionId, messageId, patch);
    },
  };
});

afterEach(() => {
  vi.useRealTimers();
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

async function stored() {
  return (await stores.sessions.getMessages('s'))[0];
}

describe('StreamingSaver', () => {
  it('writes a few times for 10 000 tiny updates, and the final answer last', async () => {
    const saver = new StreamingSaver({ store, sessionId: 's', messageId: 'a', intervalMs: 1000 });
    let text = '';
    // 10 000 deltas over 2 s of fake time.
    for (let i = 0; i < 10_000; i++) {
      text += 'x';
      saver.update(text, 'thinking…');
      await vi.advanceTimersByTimeAsync(0.2);
    }
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.length).toBeLessThanOrEqual(3);
    // What is on disk mid-stream is a prefix of the answer, with the interrupted mark kept.
    const partial = await stored();
    expect(text.startsWith(partial?.content ?? 'none')).toBe(true);
    expect((partial?.content ?? '').length).toBeGreaterThan(1000);
    expect(partial?.interrupted).toBe(true);

    await expect(saver.finish(text + '!', { interrupted: false }, 'final thought')).resolves.toBe(true);
    expect(writes.length).toBeLessThanOrEqual(4);
    const done = await stored();
    expect(done).toMatchObject({ content: text + '!', thinking: 'final thought' });
    expect(done).not.toHaveProperty('interrupted');

    // Finished: later updates and timers write nothing.
    const count = writes.length;
    saver.update('late');
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes.length).toBe(count);
    expect((await stored())?.content).toBe(text + '!');
  });

  it('persists the latest content within one interval without a flush call', async () => {
    const saver = new StreamingSaver({ store, sessionId: 's', messageId: 'a', intervalMs: 1000 });
    saver.update('Hel');
    saver.update('Hello');
    await vi.advanceTimersByTimeAsync(999);
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([{ content: 'Hello' }]);
    expect((await stored())?.content).toBe('Hello');
    // Nothing changed: no timer, no write.
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toHaveLength(1);
  });

  it('flush writes now, and only when something changed', async () => {
    const saver = new StreamingSaver({ store, sessionId: 's', messageId: 'a' });
    saver.update('abc', '');
    await expect(saver.flush()).resolves.toBe(true);
    await expect(saver.flush()).resolves.toBe(true);
    // The empty thinking counts as none.
    expect(writes).toEqual([{ content: 'abc' }]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toHaveLength(1);
  });

  it('serialises writes: a slow write is never overtaken by a newer one', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const slow: Pick<SessionStore, 'updateMessage'> = {
      updateMessage: async (_s, _m, patch) => {
        order.push(`start ${patch.content}`);
        if (patch.content === 'one') await new Promise<void>((r) => (release = r));
        order.push(`end ${patch.content}`);
      },
    };
    const saver = new StreamingSaver({ store: slow, sessionId: 's', messageId: 'a' });
    saver.update('one');
    const first = saver.flush();
    const done = saver.finish('two', {});
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['start one']);
    release();
    await Promise.all([first, done]);
    expect(order).toEqual(['start one', 'end one', 'start two', 'end two']);
  });

  it('reports a failed write through onError and never throws into the stream', async () => {
    const errors: unknown[] = [];
    const saver = new StreamingSaver({
      store,
      sessionId: 's',
      messageId: 'missing',
      onError: (err) => errors.push(err),
    });
    saver.update('text');
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/missing/);
    await expect(saver.finish('final', {})).resolves.toBe(false);
    expect(errors).toHaveLength(2);

    const throwingReporter = new StreamingSaver({
      store,
      sessionId: 's',
      messageId: 'missing',
      onError: () => {
        throw new Error('reporter broke');
      },
    });
    await expect(throwingReporter.finish('final', {})).resolves.toBe(false);
  });
});
