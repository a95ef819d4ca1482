/**
 * `SessionStore.replaceContext`: a client's history becomes the whole context buffer
 * (docs/openai-api.md#sessions-and-history), and the display buffer keeps what happened in Navi.
 */
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
const ids = (list: StoredMessage[]) => list.map((m) => m.id);

describe.each(storeEngines())('replaceContext on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
    await stores.sessions.create({ id: 's', profile_id: 'p' });
    await stores.sessions.create({ id: 'other', profile_id: 'p' });
    await stores.sessions.append('s', [
      both(msg('u1')),
      both(msg('call', 'assistant', { content: null, tool_calls: [{ id: 'c', name: 't', arguments: {} }] })),
      both(msg('result', 'tool', { tool_call_id: 'c', name: 't' })),
      both(msg('a1', 'assistant')),
    ]);
    await stores.sessions.append('other', [both(msg('o1')), both(msg('o2', 'assistant'))]);
  });

  afterEach(async () => {
    await t.dispose();
  });

  const history = [
    msg('h0', 'system', { content: 'Answer in French.' }),
    msg('h1', 'user', { content: 'edited question', images: ['aGVsbG8='] }),
    msg('h2', 'assistant', { content: 'an answer' }),
  ];

  it('makes the context exactly the given messages, in their order, with every field', async () => {
    await stores.sessions.replaceContext('s', history);
    expect(await stores.sessions.getContext('s')).toEqual(history);
  });

  it('takes a long history whole, in its order, appending after its end', async () => {
    const long = Array.from({ length: 3000 }, (_, i) =>
      msg(`l${i}`, i % 2 === 0 ? 'user' : 'assistant', i % 7 === 0 ? { content: null } : {}),
    );
    await stores.sessions.replaceContext('s', long);
    await stores.sessions.append('s', [both(msg('after'))]);
    const context = await stores.sessions.getContext('s');
    expect(context).toEqual([...long, msg('after')]);
  });

  it('leaves the display buffer and other sessions as they were', async () => {
    await stores.sessions.replaceContext('s', history);
    expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'call', 'result', 'a1']);
    expect(ids(await stores.sessions.getContext('other'))).toEqual(['o1', 'o2']);
    expect(ids(await stores.sessions.getMessages('other'))).toEqual(['o1', 'o2']);
  });

  it('with an empty list empties the context only', async () => {
    await stores.sessions.replaceContext('s', []);
    expect(await stores.sessions.getContext('s')).toEqual([]);
    expect(ids(await stores.sessions.getMessages('s'))).toEqual(['u1', 'call', 'result', 'a1']);
  });

  it('twice in a row keeps only the second list', async () => {
    await stores.sessions.replaceContext('s', history);
    await stores.sessions.replaceContext('s', [msg('x1'), msg('x2', 'assistant')]);
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['x1', 'x2']);
  });

  it('refuses an unknown session, naming it, and creates nothing', async () => {
    await expect(stores.sessions.replaceContext('ghost', history)).rejects.toThrow(/ghost/);
    await expect(stores.sessions.replaceContext('ghost', [])).rejects.toThrow(/ghost/);
    expect(await stores.sessions.get('ghost')).toBeUndefined();
    expect(await stores.sessions.getContext('ghost')).toEqual([]);
  });

  it('accepts ids the display buffer already uses, which stay where they were there', async () => {
    await stores.sessions.replaceContext('s', [msg('u1', 'user', { content: 'other words' })]);
    expect(await stores.sessions.getContext('s')).toEqual([msg('u1', 'user', { content: 'other words' })]);
    expect((await stores.sessions.getMessages('s'))[0]).toEqual(msg('u1'));
  });

  it('refuses a list holding one id twice, changing nothing', async () => {
    await expect(stores.sessions.replaceContext('s', [msg('d'), msg('d', 'assistant')])).rejects.toThrow();
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['u1', 'call', 'result', 'a1']);
  });

  it('lets appending go on after it, in order, in both buffers', async () => {
    await stores.sessions.replaceContext('s', history);
    await stores.sessions.append('s', [both(msg('u2')), both(msg('a2', 'assistant'))]);
    await stores.sessions.append('s', [both(msg('u3'))]);
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['h0', 'h1', 'h2', 'u2', 'a2', 'u3']);
    expect(ids(await stores.sessions.getMessages('s'))).toEqual([
      'u1',
      'call',
      'result',
      'a1',
      'u2',
      'a2',
      'u3',
    ]);
  });

  it('after an empty list, appending starts the context afresh', async () => {
    await stores.sessions.replaceContext('s', []);
    await stores.sessions.append('s', [both(msg('u2'))]);
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['u2']);
  });

  it('lets compression summarise what it put in place, and appending go on after that', async () => {
    await stores.sessions.replaceContext('s', history);
    await stores.sessions.append('s', [both(msg('u2')), both(msg('a2', 'assistant'))]);
    const summary = msg('sum', 'user', { content: 'summary', kind: 'summary' });
    await stores.sessions.replaceContextPrefix('s', 'u2', summary);
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum', 'u2', 'a2']);
    await stores.sessions.append('s', [both(msg('u3'))]);
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['sum', 'u2', 'a2', 'u3']);
    expect(ids(await stores.sessions.getMessages('s'))).toEqual([
      'u1',
      'call',
      'result',
      'a1',
      'u2',
      'a2',
      'u3',
    ]);
  });

  it('a rewind after it cuts the display as before and the context where it still can', async () => {
    await stores.sessions.replaceContext('s', history);
    await stores.sessions.append('s', [both(msg('u2')), both(msg('a2', 'assistant'))]);
    expect(await stores.sessions.rewind('s', 'u2', { keepAnchor: true })).toEqual({
      ok: true,
      removedIds: ['a2'],
    });
    expect(ids(await stores.sessions.getContext('s'))).toEqual(['h0', 'h1', 'h2', 'u2']);
    // The replaced messages are no longer in the context: there is nowhere to cut it.
    expect(await stores.sessions.rewind('s', 'u1', { keepAnchor: true })).toEqual({
      ok: false,
      reason: 'not_in_context',
    });
  });
});
