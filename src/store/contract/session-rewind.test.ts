/** `SessionStore.rewind`: cutting both buffers at one message, for regenerate and edit. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenedStores } from '../open-stores.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import type { BufferedMessage, StoredMessage } from '../types.js';

function msg(
  id: string,
  role: StoredMessage['role'] = 'user',
  extra: Partial<StoredMessage> = {},
): StoredMessage {
  return { id, role, content: `text ${id}`, created_at: '2026-01-01T00:00:00.000Z', ...extra };
}

const both = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });
const displayOnly = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: false });
const contextOnly = (m: StoredMessage): BufferedMessage => ({ message: m, display: false, context: true });
const ids = (list: StoredMessage[]) => list.map((m) => m.id);

describe.each(storeEngines())('rewind on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
    await stores.sessions.create({ id: 's', profile_id: 'secretary' });
    await stores.sessions.create({ id: 'other', profile_id: 'secretary' });
  });

  afterEach(async () => {
    await t.dispose();
  });

  /** Two turns; the second has a tool call, an injected image (context only) and a failure (display only). */
  async function twoTurns(): Promise<void> {
    await stores.sessions.append('s', [
      both(msg('u1')),
      both(msg('a1', 'assistant')),
      both(msg('u2')),
      both(msg('call', 'assistant', { content: null, tool_calls: [{ id: 'c', name: 't', arguments: {} }] })),
      both(msg('result', 'tool', { tool_call_id: 'c' })),
      contextOnly(msg('image', 'user', { kind: 'injected_image' })),
      displayOnly(
        msg('failed', 'system', { kind: 'error', error: { message: 'down', code: 'LLM_UNREACHABLE' } }),
      ),
    ]);
  }

  describe('rewind', () => {
    it('keeping the anchor removes what follows it from both buffers, and says which display ids went', async () => {
      await twoTurns();
      const result = await stores.sessions.rewind('s', 'u2', { keepAnchor: true });
      expect(result).toEqual({ ok: true, removedIds: ['call', 'result', 'failed'] });
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'a1', 'u2']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['u1', 'a1', 'u2']);
    });

    it('without keeping the anchor removes it too', async () => {
      await twoTurns();
      const result = await stores.sessions.rewind('s', 'u2', { keepAnchor: false });
      expect(result).toEqual({ ok: true, removedIds: ['u2', 'call', 'result', 'failed'] });
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'a1']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['u1', 'a1']);
    });

    it('at the last message removes nothing, and appending afterwards goes on in order', async () => {
      await stores.sessions.append('s', [both(msg('u1')), both(msg('a1', 'assistant'))]);
      expect(await stores.sessions.rewind('s', 'a1', { keepAnchor: true })).toEqual({
        ok: true,
        removedIds: [],
      });
      expect(await stores.sessions.rewind('s', 'a1', { keepAnchor: false })).toEqual({
        ok: true,
        removedIds: ['a1'],
      });
      await stores.sessions.append('s', [both(msg('u2')), both(msg('a2', 'assistant'))]);
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'u2', 'a2']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['u1', 'u2', 'a2']);
    });

    it('refuses an id the session does not hold, including one of another session, and changes nothing', async () => {
      await twoTurns();
      await stores.sessions.append('other', [both(msg('elsewhere'))]);
      for (const id of ['nope', 'elsewhere', "u2' OR 1=1 --", ''])
        expect(await stores.sessions.rewind('s', id, { keepAnchor: false })).toEqual({
          ok: false,
          reason: 'not_found',
        });
      expect(await stores.sessions.rewind('missing-session', 'u1', { keepAnchor: false })).toEqual({
        ok: false,
        reason: 'not_found',
      });
      expect(await stores.sessions.getMessages('s')).toHaveLength(6);
      expect(ids(await stores.sessions.getMessages('other'))).toEqual(['elsewhere']);
    });

    it('refuses a message compression summarised away, and changes nothing', async () => {
      await twoTurns();
      await stores.sessions.replaceContextPrefix('s', 'u2', msg('summary', 'user', { kind: 'summary' }));
      expect(await stores.sessions.rewind('s', 'a1', { keepAnchor: true })).toEqual({
        ok: false,
        reason: 'not_in_context',
      });
      expect(await stores.sessions.getMessages('s')).toHaveLength(6);
      expect(ids(await stores.sessions.getContext('s'))).toEqual([
        'summary',
        'u2',
        'call',
        'result',
        'image',
      ]);
    });

    it('after compression, cuts the context at the anchor and keeps the summary before it', async () => {
      await twoTurns();
      await stores.sessions.replaceContextPrefix('s', 'u2', msg('summary', 'user', { kind: 'summary' }));
      const result = await stores.sessions.rewind('s', 'u2', { keepAnchor: false });
      expect(result).toEqual({ ok: true, removedIds: ['u2', 'call', 'result', 'failed'] });
      expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'a1']);
      expect(ids(await stores.sessions.getContext('s'))).toEqual(['summary']);
    });
  });
});
