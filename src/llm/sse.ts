/** Server-sent events (the OpenAI streaming format), parsed by eventsource-parser. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type ByteSource, bytesOf } from './lines.js';

export interface SseEvent {
  /** `message` unless the server named the event. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  id?: string;
}

function toEvent(message: EventSourceMessage): SseEvent {
  return {
    event: message.event || 'message',
    data: message.data,
    ...(message.id !== undefined ? { id: message.id } : {}),
  };
}

/**
 * Yields one event per blank-line-terminated block that carried `data`. Comment lines (`:`,
 * used as keep-alives) and `retry:` are skipped. Unlike browsers, a final block without its
 * blank line is still delivered: some servers close right after their last `data:` line.
 * Bytes are decoded here, so a UTF-8 character split across network chunks stays whole, and
 * invalid UTF-8 becomes U+FFFD rather than an exception.
 */
export async function* parseSse(source: ByteSource): AsyncGenerator<SseEvent> {
  const ready: SseEvent[] = [];
  // Unknown fields and bad `retry:` values are ignored, as the event-stream rules say.
  const parser = createParser({ onEvent: (message) => ready.push(toEvent(message)) });
  const decoder = new TextDecoder('utf-8');
  for await (const bytes of bytesOf(source)) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    yield* ready.splice(0);
  }
  // End the last line and the last block, whichever of them the server left open.
  parser.feed(`${decoder.decode()}\n\n`);
  yield* ready.splice(0);
}
