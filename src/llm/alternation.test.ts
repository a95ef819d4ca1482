import { describe, expect, it } from 'vitest';
import { alternateRoles } from './alternation.js';
import type { ChatMessage } from './types.js';

const roles = (messages: ChatMessage[]) => messages.map((m) => m.role);
const call = (id: string, name = 'read_file') => ({ id, name, arguments: { id } });

describe('alternateRoles', () => {
  it('merges a plan, the text before the calls and the calls into one assistant message', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Navi.' },
      { role: 'user', content: 'summarise my files' },
      { role: 'assistant', content: '1. List the files\n2. Read them' },
      { role: 'assistant', content: 'Let me look.' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', content: 'one', tool_call_id: 'a', name: 'read_file' },
      { role: 'tool', content: 'two', tool_call_id: 'b', name: 'read_file' },
      { role: 'user', content: '[image]', images: ['iVBORw0'] },
    ];
    const out = alternateRoles(messages);
    expect(roles(out)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(out[2]).toEqual({
      role: 'assistant',
      content: '1. List the files\n2. Read them\n\nLet me look.',
      tool_calls: [call('a'), call('b')],
    });
    // Tool results and the user message after them are untouched (same objects).
    expect(out[3]).toBe(messages[5]);
    expect(out[5]).toBe(messages[7]);
  });

  it('merges consecutive user messages, keeping every image in order', () => {
    const out = alternateRoles([
      { role: 'user', content: '[Summary of earlier conversation]\nWe talked.' },
      { role: 'user', content: 'look at this', images: ['AAA'] },
      { role: 'user', content: 'and this', images: ['BBB', 'CCC'] },
    ]);
    expect(out).toEqual([
      {
        role: 'user',
        content: '[Summary of earlier conversation]\nWe talked.\n\nlook at this\n\nand this',
        images: ['AAA', 'BBB', 'CCC'],
      },
    ]);
  });

  it('puts every system message into the first, at the start', () => {
    const out = alternateRoles([
      { role: 'system', content: 'Persona.' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'Plan first.' },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'Persona.\n\nPlan first.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('skips empty texts when joining, and keeps null content only when every part was null', () => {
    const onlyCalls = alternateRoles([
      { role: 'assistant', content: null, tool_calls: [call('a')] },
      { role: 'assistant', content: null, tool_calls: [call('b')] },
    ]);
    expect(onlyCalls).toEqual([{ role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }]);
    const blank = alternateRoles([
      { role: 'assistant', content: '  ' },
      { role: 'assistant', content: null },
      { role: 'assistant', content: 'said' },
    ]);
    expect(blank).toEqual([{ role: 'assistant', content: 'said' }]);
    expect(
      alternateRoles([
        { role: 'user', content: '' },
        { role: 'user', content: null },
      ]),
    ).toEqual([{ role: 'user', content: '' }]);
  });

  it('returns an alternating conversation unchanged and does not modify its input', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
    ];
    const copy = structuredClone(messages);
    const out = alternateRoles(messages);
    expect(out).toEqual(messages);
    expect(out).not.toBe(messages);
    alternateRoles([...messages, { role: 'user', content: 'u3' }]);
    expect(messages).toEqual(copy);
    expect(alternateRoles([])).toEqual([]);
  });

  it('leaves no two user or assistant messages in a row for any mix of roles', () => {
    const pool: ChatMessage['role'][] = ['system', 'user', 'assistant', 'tool'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 200; round++) {
      const messages: ChatMessage[] = Array.from({ length: next() % 12 }, (_, i) => ({
        role: pool[next() % pool.length] ?? 'user',
        content: `m${i}`,
      }));
      const out = alternateRoles(messages);
      const r = roles(out);
      expect(r.filter((x) => x === 'system').length).toBeLessThanOrEqual(1);
      if (r.includes('system')) expect(r[0]).toBe('system');
      for (let i = 1; i < r.length; i++) {
        if (r[i] !== 'tool') expect(r[i]).not.toBe(r[i - 1]);
      }
      // Nothing is lost: every text appears once.
      const said = out.map((m) => m.content ?? '').join('\n\n');
      for (const m of messages) expect(said.split(/\n\n/)).toContain(m.content);
    }
  });
});
