/**
 * Conversion between a SessionMessage and its row. Typed columns hold what every message has;
 * `payload` holds the optional fields, and only those the message actually carries, so a read
 * gives back exactly the keys that were written (no `undefined` or `null` keys appear).
 */
import type { StoredMessage } from '../types.js';

export interface MessageRow {
  id: string;
  role: StoredMessage['role'];
  content: string | null;
  payload: string | null;
  created_at: string;
}

type Payload = Omit<StoredMessage, 'id' | 'role' | 'content' | 'created_at'>;

/** Every optional field of a message: all of them live in `payload`. */
const PAYLOAD_KEYS = [
  'kind',
  'images',
  'attachments',
  'trigger',
  'recall',
  'form_submit',
  'tool_calls',
  'tool_call_id',
  'name',
  'thinking',
  'interrupted',
  'stopped',
  'success',
  'outcome',
  'error',
  'unverified_claims',
  'ui_component',
  'published',
  'tool_metadata',
] as const satisfies readonly (keyof Payload)[];

// Does not compile when SessionMessage gains a field that is missing above.
const _everyKeyListed: Record<Exclude<keyof Payload, (typeof PAYLOAD_KEYS)[number]>, never> = {};

/** JSON text of the optional fields present on `m`, or null when it has none. */
export function toPayload(m: StoredMessage): string | null {
  const payload: Record<string, unknown> = {};
  let any = false;
  for (const key of PAYLOAD_KEYS) {
    if (m[key] !== undefined) {
      payload[key] = m[key];
      any = true;
    }
  }
  return any ? JSON.stringify(payload) : null;
}

export function fromRow(row: MessageRow): StoredMessage {
  const message: StoredMessage = {
    id: row.id,
    role: row.role,
    content: row.content,
    created_at: row.created_at,
  };
  // Written only by toPayload and the json_set updates, so its shape is known.
  if (row.payload !== null) Object.assign(message, JSON.parse(row.payload) as Payload);
  return message;
}
