/**
 * Byte stream → text lines for the NDJSON parser (the SSE parser uses only `iterateBytes`).
 * Network chunks split anywhere: inside a multi-byte UTF-8 character, between `\r` and `\n`,
 * or mid-line.
 */

export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Iterates a web `ReadableStream` or any async iterable of bytes; cancels the stream when left early. */
export async function* iterateBytes(source: ByteSource): AsyncGenerator<Uint8Array> {
  if (!(source instanceof ReadableStream)) {
    yield* source;
    return;
  }
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
 * Yields each line without its terminator. `\n`, `\r\n` and a lone `\r` all end a line (as SSE
 * allows; JSON text never holds a raw CR, so NDJSON is unaffected). A last line without a
 * terminator is yielded too. Invalid UTF-8 becomes U+FFFD rather than an exception, so one bad
 * byte cannot hide the rest of an answer.
 */
export async function* readLines(source: ByteSource): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  // Where to resume scanning, so a long line arriving in many chunks is not rescanned each time.
  let scanFrom = 0;

  function* split(final: boolean): Generator<string> {
    let start = 0;
    let i = scanFrom;
    for (; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c === 10) {
        yield buffer.slice(start, i);
        start = i + 1;
      } else if (c === 13) {
        // A CR at the very end may be the first half of a CRLF still in flight.
        if (i + 1 === buffer.length && !final) break;
        yield buffer.slice(start, i);
        if (buffer.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
    }
    buffer = buffer.slice(start);
    scanFrom = i - start;
  }

  for await (const bytes of iterateBytes(source)) {
    buffer += decoder.decode(bytes, { stream: true });
    yield* split(false);
  }
  buffer += decoder.decode();
  yield* split(true);
  if (buffer.length > 0) yield buffer;
}
