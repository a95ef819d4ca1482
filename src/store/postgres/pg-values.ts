/**
 * What PostgreSQL cannot hold that SQLite does: the NUL character. TEXT refuses it
 * ("invalid byte sequence for encoding UTF8: 0x00") and so does JSONB (`\u0000`). A tool's
 * output (a binary file read as text) can contain it, and a failed save would lose the whole
 * turn, so stored text has each NUL replaced by U+FFFD, the character that stands for one that
 * could not be kept. Keys looked up (ids, names) are never rewritten: one with a NUL cannot be
 * stored, so it is simply not found.
 */
import type pg from 'pg';

const NUL = '\u0000';
const REPLACEMENT = '\uFFFD';

/** `text` as PostgreSQL can store it. */
export function pgText(text: string): string {
  return text.includes(NUL) ? text.replaceAll(NUL, REPLACEMENT) : text;
}

/** `text` (or null) as PostgreSQL can store it. */
export function pgNullableText(text: string | null): string | null {
  return text === null ? null : pgText(text);
}

/**
 * JSON text as JSONB can store it. JSON.stringify writes a NUL as the escape `\u0000`; the
 * string is rebuilt only in the rare case that escape appears (it may also be an escaped
 * backslash followed by "u0000", which the round trip leaves as it was).
 */
export function pgJson(json: string): string {
  if (!json.includes('\\u0000')) return json;
  return JSON.stringify(JSON.parse(json), (_key, value: unknown) =>
    typeof value === 'string' ? pgText(value) : value,
  );
}

/** Whether `key` can be in a table at all: a key with a NUL never was stored. */
export function storableKey(key: string): boolean {
  return !key.includes(NUL);
}

/**
 * A key PostgreSQL cannot store is refused with its name, rather than with the server's
 * "invalid byte sequence"; SQLite stores it.
 */
export function refuseNul(what: string, key: string): void {
  if (!storableKey(key))
    throw new Error(`A ${what} cannot contain the NUL character: ${JSON.stringify(key)}`);
}

/** The SQLSTATE of a PostgreSQL error (23505 unique_violation, 23503 foreign_key_violation…). */
export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as Partial<pg.DatabaseError> | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
