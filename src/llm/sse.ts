/** Server-sent events (the OpenAI streaming format), per the WHATWG event-stream rules. */
import { type ByteSource, readLines } from './lines.js';

export interface SseEvent {
  /** `message` unless the server named the event. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  id?: string;
}

/**
 * Yields one event per blank-line-terminated block that carried `data`. Comment lines (`:`,
 * used as keep-alives) and `retry:` are skipped. Unlike browsers, a final block without its
 * blank line is still delivered: some servers close right after their last `data:` line.
 */
export async function* parseSse(source: ByteSource): AsyncGenerator<SseEvent> {
  let data: string[] = [];
  let event = '';
  let id: string | undefined;

  const take = (): SseEvent => {
    const out: SseEvent = {
      event: event || 'message',
      data: data.join('\n'),
      ...(id !== undefined ? { id } : {}),
    };
    data = [];
    event = '';
    return out;
  };

  for await (const line of readLines(source)) {
    if (line === '') {
      if (data.length > 0) yield take();
      else event = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  }
  if (data.length > 0) yield take();
}
