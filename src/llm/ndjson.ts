/** Newline-delimited JSON (Ollama's streaming format). */
import { type ByteSource, bytesOf, LineSplitter } from './lines.js';

/** Thrown for a line that is not JSON; `excerpt` is the start of the offending line. */
export class StreamParseError extends Error {
  readonly excerpt: string;
  constructor(message: string, excerpt: string) {
    super(message);
    this.name = 'StreamParseError';
    this.excerpt = excerpt;
  }
}

/** Shortens untrusted text for an error message: one line, at most `max` characters. */
export function excerpt(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * Yields one parsed value per non-blank line; throws `StreamParseError` at the first invalid one.
 * Lines are split and parsed in the same generator that reads the bytes: one step per value.
 * Invalid UTF-8 becomes U+FFFD rather than an exception, so one bad byte cannot hide the rest.
 */
export async function* parseNdjson(source: ByteSource): AsyncGenerator<unknown> {
  const decoder = new TextDecoder('utf-8');
  const splitter = new LineSplitter();
  for await (const bytes of bytesOf(source)) {
    for (const line of splitter.push(decoder.decode(bytes, { stream: true }))) {
      const value = parseLine(line);
      if (value !== blank) yield value;
    }
  }
  for (const line of splitter.end(decoder.decode())) {
    const value = parseLine(line);
    if (value !== blank) yield value;
  }
}

const blank = Symbol('blank line');

function parseLine(line: string): unknown {
  if (line.trim() === '') return blank;
  try {
    return JSON.parse(line);
  } catch {
    throw new StreamParseError('a line of the stream is not valid JSON', excerpt(line));
  }
}
