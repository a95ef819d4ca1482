import { describe, expect, it } from 'vitest';
import { readLines } from './lines.js';
import { parseNdjson, StreamParseError } from './ndjson.js';

const enc = new TextEncoder();

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p;
}

async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of source) out.push(x);
  return out;
}

describe('readLines', () => {
  it('joins a multi-byte character split across chunks', async () => {
    const bytes = enc.encode('héllo 🦊\n');
    // Split inside the 2-byte é and inside the 4-byte fox.
    const fox = bytes.indexOf(0xf0);
    const parts = [
      bytes.slice(0, 2),
      bytes.slice(2, fox + 1),
      bytes.slice(fox + 1, fox + 3),
      bytes.slice(fox + 3),
    ];
    expect(await all(readLines(chunks(...parts)))).toEqual(['héllo 🦊']);
  });

  it('treats CRLF split between chunks as one line end, and a lone CR as a line end', async () => {
    expect(await all(readLines(chunks('a\r', '\nb\rc\r\n', 'd')))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('yields a CR-terminated last line and keeps empty lines', async () => {
    expect(await all(readLines(chunks('x\n\ny\r')))).toEqual(['x', '', 'y']);
  });

  it('reads a web ReadableStream byte by byte', async () => {
    const bytes = enc.encode('one\ntwo\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    });
    expect(await all(readLines(stream))).toEqual(['one', 'two']);
  });
});

describe('parseNdjson', () => {
  it('parses objects split anywhere, skipping blank lines and CRLF', async () => {
    const values = await all(parseNdjson(chunks('{"a":', '1}\r\n\r\n{"b"', ':"ü"}\n', '{"c":3}')));
    expect(values).toEqual([{ a: 1 }, { b: 'ü' }, { c: 3 }]);
  });

  it('throws StreamParseError with an excerpt at an invalid line', async () => {
    const seen: unknown[] = [];
    const run = async () => {
      for await (const v of parseNdjson(chunks('{"ok":true}\n{"broken": \n{"never":1}\n'))) seen.push(v);
    };
    const error = await run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamParseError);
    expect((error as StreamParseError).excerpt).toBe('{"broken":');
    expect(seen).toEqual([{ ok: true }]);
  });
});
