/** Newline-delimited JSON (Ollama's streaming format). */
import { type ByteSource, readLines } from './lines.js';

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

/** Yields one parsed value per non-blank line; throws `StreamParseError` at the first invalid one. */
export async function* parseNdjson(source: ByteSource): AsyncGenerator<unknown> {
  for await (const line of readLines(source)) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new StreamParseError('a line of the stream is not valid JSON', excerpt(line));
    }
    yield value;
  }
}
