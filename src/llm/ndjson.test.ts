import { describe, expect, it } from 'vitest';
import { LineSplitter } from './lines.js';
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

describe('LineSplitter', () => {
  /** The lines of `parts` pushed one at a time, then the rest at the end. */
  const split = (...parts: string[]) => {
    const splitter = new LineSplitter();
    return [...parts.flatMap((p) => splitter.push(p)), ...splitter.end()];
  };

  it('treats CRLF split between chunks as one line end, and a lone CR as a line end', () => {
    expect(split('a\r', '\nb\rc\r\n', 'd')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('yields a CR-terminated last line and keeps empty lines', () => {
    expect(split('x\n\ny\r')).toEqual(['x', '', 'y']);
  });

  it('joins a long line pushed a character at a time', () => {
    const line = 'z'.repeat(1000);
    expect(split(...line, '\n', 'w')).toEqual([line, 'w']);
  });

  it('yields nothing for nothing, and is empty again after end', () => {
    const splitter = new LineSplitter();
    expect(splitter.end()).toEqual([]);
    expect(splitter.push('half')).toEqual([]);
    expect(splitter.end()).toEqual(['half']);
    expect(splitter.end()).toEqual([]);
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

  it('joins a multi-byte character split across chunks, and turns invalid UTF-8 into U+FFFD', async () => {
    const bytes = enc.encode('{"s":"héllo 🦊"}\n');
    // Split inside the 2-byte é and inside the 4-byte fox.
    const fox = bytes.indexOf(0xf0);
    const parts = [
      bytes.slice(0, 8),
      bytes.slice(8, fox + 1),
      bytes.slice(fox + 1, fox + 3),
      bytes.slice(fox + 3),
    ];
    const bad = new Uint8Array([...enc.encode('{"s":"a'), 0xff, ...enc.encode('b"}')]);
    expect(await all(parseNdjson(chunks(...parts, bad)))).toEqual([{ s: 'héllo 🦊' }, { s: 'a\ufffdb' }]);
  });

  it('reads a web ReadableStream byte by byte, and cancels it at an invalid line', async () => {
    let cancelled = false;
    const stream = (text: string, close: boolean) => {
      const bytes = enc.encode(text);
      return new ReadableStream<Uint8Array>({
        start(controller) {
          for (const b of bytes) controller.enqueue(new Uint8Array([b]));
          if (close) controller.close();
        },
        cancel: () => {
          cancelled = true;
        },
      });
    };
    expect(await all(parseNdjson(stream('{"one":1}\n{"two":2}', true)))).toEqual([{ one: 1 }, { two: 2 }]);
    expect(cancelled).toBe(false);
    // Left open, as a model still generating: the parse error must close it, not wait on it.
    const error = await all(parseNdjson(stream('{"ok":true}\nnot json\n', false))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamParseError);
    expect(cancelled).toBe(true);
  });
});
