import { describe, expect, it } from 'vitest';
import type { StoredMessage } from '../store/types.js';
import { contextOfHistory, historyAgrees } from './client-history.js';
import type { HistoryMessage } from './types.js';

const at = '2026-01-01T00:00:00.000Z';
let n = 0;
function m(
  role: StoredMessage['role'],
  content: string | null,
  extra: Partial<StoredMessage> = {},
): StoredMessage {
  return { id: `m${++n}`, role, content, created_at: at, ...extra };
}
const user = (content: string): HistoryMessage => ({ role: 'user', content });
const assistant = (content: string): HistoryMessage => ({ role: 'assistant', content });
const system = (content: string): HistoryMessage => ({ role: 'system', content });

/** A display buffer with everything a Navi turn may leave in it. */
const display: StoredMessage[] = [
  m('user', 'Back it up'),
  m('assistant', '1. look\n2. copy', { kind: 'plan' }),
  m('assistant', 'Looking.'),
  m('assistant', null, { tool_calls: [{ id: 'c', name: 'terminal', arguments: {} }] }),
  m('tool', 'done', { tool_call_id: 'c' }),
  m('assistant', 'Backed up.'),
  m('user', 'Again'),
  m('system', 'The model is down.', { kind: 'error', error: { message: 'down' } }),
  m('user', '{"name":"x"}', { kind: 'form_submit', form_submit: { form_id: 'f', values: {} } }),
  m('assistant', 'Thanks.'),
];

describe('historyAgrees', () => {
  const agreeing = [
    user('Back it up'),
    assistant('Backed up.'),
    user('Again'),
    user('{"name":"x"}'),
    assistant('Thanks.'),
  ];

  it('agrees when user texts and final answers match, whatever Navi kept beside them', () => {
    expect(historyAgrees(agreeing, display, [])).toBe(true);
  });

  it('trims texts and ignores empty assistant messages', () => {
    const padded = [user(' Back it up\n'), assistant('Backed up. '), assistant(' '), ...agreeing.slice(2)];
    expect(historyAgrees(padded, display, [])).toBe(true);
  });

  it('takes a turn’s answers run together (as streamed), whitespace aside', () => {
    const streamed = [user('Back it up'), assistant('Looking.\n\nBacked up.'), ...agreeing.slice(2)];
    expect(historyAgrees(streamed, display, [])).toBe(true);
  });

  it('differs on an edited message, a missing or extra answer, a missing or extra turn', () => {
    expect(historyAgrees([user('Back it all up'), ...agreeing.slice(1)], display, [])).toBe(false);
    expect(historyAgrees([user('Back it up'), ...agreeing.slice(2)], display, [])).toBe(false);
    expect(
      historyAgrees([...agreeing.slice(0, 3), assistant('Hm.'), ...agreeing.slice(3)], display, []),
    ).toBe(false);
    expect(historyAgrees(agreeing.slice(0, 2), display, [])).toBe(false);
    expect(historyAgrees([...agreeing, user('more')], display, [])).toBe(false);
    expect(historyAgrees([assistant('Hello.'), ...agreeing], display, [])).toBe(false);
  });

  it('an empty history agrees only with an empty session', () => {
    expect(historyAgrees([], [], [])).toBe(true);
    expect(historyAgrees([], display, display)).toBe(false);
  });

  it('compares system messages with the context’s client system messages, in order', () => {
    const context = [m('system', 'Be terse.', { kind: 'client_system' }), m('user', 'Back it up')];
    expect(historyAgrees([system('Be terse.'), ...agreeing], display, context)).toBe(true);
    expect(historyAgrees([system('Be verbose.'), ...agreeing], display, context)).toBe(false);
    expect(historyAgrees(agreeing, display, context)).toBe(false);
    expect(historyAgrees([system('Be terse.'), ...agreeing], display, [])).toBe(false);
  });

  it('an untagged stored system message (an imported one) is no client’s: the model never read it', () => {
    const context = [m('system', 'Be terse.'), m('user', 'Back it up')];
    expect(historyAgrees([system('Be terse.'), ...agreeing], display, context)).toBe(false);
    expect(historyAgrees(agreeing, display, context)).toBe(true);
  });

  it('agrees with the context’s own texts when the display buffer went another way', () => {
    const context = [
      m('user', 'Earlier words', { kind: 'summary' }),
      m('user', 'Back it all up'),
      m('user', 'image', { kind: 'injected_image', images: ['aGk='] }),
      m('assistant', 'Done.'),
    ];
    expect(historyAgrees([user('Back it all up'), assistant('Done.')], display, context)).toBe(true);
  });
});

describe('historyAgrees after compression', () => {
  const context = [
    m('system', 'Be terse.', { kind: 'client_system' }),
    m('user', 'summary of the first turns', { kind: 'summary' }),
    m('user', 'third'),
    m('assistant', 'Three.'),
  ];
  const earlier = [system('Be terse.'), user('first'), assistant('One.'), user('second'), assistant('Two.')];

  it('checks the client history from where the summary ends', () => {
    expect(historyAgrees([...earlier, user('third'), assistant('Three.')], [], context)).toBe(true);
    expect(historyAgrees([...earlier, user('third, edited'), assistant('Three.')], [], context)).toBe(false);
    expect(historyAgrees([...earlier, user('third')], [], context)).toBe(false);
    expect(historyAgrees([system('Be terse.'), assistant('Three.')], [], context)).toBe(false);
  });

  it('without a summary, a history longer than the context differs', () => {
    const unsummarised = context.filter((x) => x.kind !== 'summary');
    expect(historyAgrees([...earlier, user('third'), assistant('Three.')], [], unsummarised)).toBe(false);
  });
});

describe('contextOfHistory', () => {
  it('keeps roles and order, user images only, with fresh ids; system messages tagged as the client’s', () => {
    let id = 0;
    const history: HistoryMessage[] = [
      system('Be terse.'),
      { role: 'user', content: 'Look', images: ['aGk='] },
      { role: 'assistant', content: 'Seen.', images: ['bm8='] },
    ];
    expect(contextOfHistory(history, () => `h${++id}`, at)).toEqual([
      { id: 'h1', role: 'system', content: 'Be terse.', created_at: at, kind: 'client_system' },
      { id: 'h2', role: 'user', content: 'Look', created_at: at, images: ['aGk='] },
      { id: 'h3', role: 'assistant', content: 'Seen.', created_at: at },
    ]);
  });
});
