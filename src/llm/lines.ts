/**
 * Byte stream → text lines for the NDJSON parser (the SSE parser uses only `bytesOf`).
 * Network chunks split anywhere: inside a multi-byte UTF-8 character (the parser's streaming
 * `TextDecoder` joins it), between `\r` and `\n`, or mid-line.
 */

export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Iterates a web `ReadableStream`; cancels the stream when left early. */
async function* iterateBytes(source: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = source.getReader();
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * The bytes of `source` as an async iterable: a web `ReadableStream` through `iterateBytes`, any
 * other async iterable as it is, so a parser reading it adds no generator of its own per chunk
 * (a model streaming one token per chunk pays for each layer on every token).
 */
export function bytesOf(source: ByteSource): AsyncIterable<Uint8Array> {
  return source instanceof ReadableStream ? iterateBytes(source) : source;
}

/**
 * Splits decoded text into lines without their terminators, across calls: `push` returns the
 * lines the text completed, `end` the rest. `\n`, `\r\n` and a lone `\r` all end a line (as SSE
 * allows; JSON text never holds a raw CR, so NDJSON is unaffected). Synchronous, so the NDJSON
 * parser splits a chunk without a generator step per line.
 */
export class LineSplitter {
  private buffer = '';
  /** Where to resume scanning, so a long line arriving in many chunks is not rescanned each time. */
  private scanFrom = 0;

  push(text: string): string[] {
    this.buffer += text;
    return this.split(false);
  }

  /** The lines still buffered, the last one without a terminator included. */
  end(text = ''): string[] {
    this.buffer += text;
    const lines = this.split(true);
    if (this.buffer.length > 0) lines.push(this.buffer);
    this.buffer = '';
    this.scanFrom = 0;
    return lines;
  }

  private split(final: boolean): string[] {
    const { buffer } = this;
    const lines: string[] = [];
    let start = 0;
    let i = this.scanFrom;
    for (; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c === 10) {
        lines.push(buffer.slice(start, i));
        start = i + 1;
      } else if (c === 13) {
        // A CR at the very end may be the first half of a CRLF still in flight.
        if (i + 1 === buffer.length && !final) break;
        lines.push(buffer.slice(start, i));
        if (buffer.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
    this.scanFrom = i - start;
    return lines;
  }
}
