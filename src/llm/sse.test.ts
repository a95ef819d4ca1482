import { describe, expect, it } from 'vitest';
import { parseSse } from './sse.js';

const enc = new TextEncoder();

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p;
}

async function events(...parts: (string | Uint8Array)[]) {
  const out = [];
  for await (const e of parseSse(chunks(...parts))) out.push(e);
  return out;
}

describe('parseSse', () => {
  it('skips comments and keep-alives and passes [DONE] through as data', async () => {
    const got = await events(': keep-alive\n\n', 'data: {"a":1}\n\n', ':ping\n', 'data: [DONE]\n\n');
    expect(got.map((e) => e.data)).toEqual(['{"a":1}', '[DONE]']);
    expect(got[0]?.event).toBe('message');
  });

  it('handles CRLF, events split anywhere, and multi-byte characters split across chunks', async () => {
    const payload = enc.encode('data: {"t":"日本"}\r\n\r\n');
    const mid = payload.indexOf(0xe6) + 1; // inside the first 3-byte character
    const got = await events('data: x\r', '\n\r\n', payload.slice(0, mid), payload.slice(mid));
    expect(got.map((e) => e.data)).toEqual(['x', '{"t":"日本"}']);
  });

  it('joins multi-line data, reads event names and ids, and strips only one leading space', async () => {
    const got = await events('event: delta\nid: 7\ndata:  two spaces\ndata:no space\n\n');
    expect(got).toEqual([{ event: 'delta', id: '7', data: ' two spaces\nno space' }]);
  });

  it('ignores blocks without data and still delivers a final block without its blank line', async () => {
    const got = await events('event: ping\n\n', 'retry: 10\n\n', 'data: last');
    expect(got.map((e) => [e.event, e.data])).toEqual([['message', 'last']]);
  });

  it('ends a last line left open by a lone CR and ignores unknown fields and a byte-order mark', async () => {
    const got = await events('\uFEFFfoo: bar\ndata: a\n\n', 'data: b\r');
    expect(got.map((e) => e.data)).toEqual(['a', 'b']);
  });
});
