/**
 * Reading one client frame: size, JSON, then the zod schema of its `type`. Every refusal is a
 * sentence for the user, sent back as a recoverable `error` event.
 */
import type { RawData } from 'ws';
import { type ClientCommand, clientCommandSchema } from '../../protocol/commands.js';
import type { ErrorCode } from '../../protocol/error-codes.js';

export type FrameResult =
  | { ok: true; command: ClientCommand }
  | { ok: false; code: ErrorCode; message: string };

/** Read from the schema, so a command added there is known here (and named in the refusal) at once. */
const KNOWN_TYPES: readonly string[] = clientCommandSchema.options.map((option) => option.shape.type.value);
const EXPECTED = `${KNOWN_TYPES.slice(0, -1).join(', ')} or ${KNOWN_TYPES.at(-1)}`;

export function frameBytes(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

export function parseClientFrame(data: RawData, maxBytes: number): FrameResult {
  const size = frameBytes(data);
  if (size > maxBytes) {
    return {
      ok: false,
      code: 'BODY_TOO_LARGE',
      message: `The message is too large (${size} bytes; the limit is ${maxBytes}).`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(frameText(data));
  } catch {
    return { ok: false, code: 'INVALID_JSON', message: 'The message is not valid JSON.' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, code: 'BAD_REQUEST', message: 'A message must be a JSON object with a "type".' };
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || !KNOWN_TYPES.includes(type)) {
    const shown = typeof type === 'string' ? `"${type.slice(0, 50)}"` : 'missing';
    return {
      ok: false,
      code: 'BAD_REQUEST',
      message: `Unknown message type (${shown}); expected ${EXPECTED}.`,
    };
  }
  const parsed = clientCommandSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return {
      ok: false,
      code: 'BAD_REQUEST',
      message: `Invalid ${type}: ${where}${issue?.message ?? 'invalid'}.`,
    };
  }
  return { ok: true, command: parsed.data };
}
