/**
 * A message as its PostgreSQL row: the same columns as SQLite's, `payload` a JSONB holding the
 * optional fields the message carries (`toPayload`). Rows are read with `payload::text`, so
 * `fromRow` of the SQLite store turns them back into messages the same way.
 */
import { toPayload } from '../sqlite/message-rows.js';
import type { BufferedMessage, StoredMessage } from '../types.js';
import { pgJson, pgNullableText } from './pg-values.js';

export { fromRow, type MessageRow } from '../sqlite/message-rows.js';

/** The columns of a message read back, in the shape `fromRow` takes. */
export const MESSAGE_COLUMNS = 'id, role, content, payload::text AS payload, created_at';

/** Buffered messages as parallel arrays, one per column, for `unnest` in one multi-row INSERT. */
export interface MessageColumns {
  id: string[];
  role: string[];
  content: (string | null)[];
  payload: (string | null)[];
  created_at: string[];
  display: boolean[];
  context: boolean[];
}

/** `entries` as columns, each message as PostgreSQL can store it (see pg-values.ts on NUL). */
export function messageColumns(entries: readonly BufferedMessage[]): MessageColumns {
  const columns: MessageColumns = {
    id: [],
    role: [],
    content: [],
    payload: [],
    created_at: [],
    display: [],
    context: [],
  };
  for (const { message, display, context } of entries) {
    const payload = toPayload(message);
    columns.id.push(message.id);
    columns.role.push(message.role);
    columns.content.push(pgNullableText(message.content));
    columns.payload.push(payload === null ? null : pgJson(payload));
    columns.created_at.push(message.created_at);
    columns.display.push(display);
    columns.context.push(context);
  }
  return columns;
}

/** The parameters of one message in a single-row INSERT: id, role, content, payload, created_at. */
export function messageParams(m: StoredMessage): (string | null)[] {
  const payload = toPayload(m);
  return [m.id, m.role, pgNullableText(m.content), payload === null ? null : pgJson(payload), m.created_at];
}
