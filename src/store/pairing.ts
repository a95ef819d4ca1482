/**
 * Pairing codes and client secrets as every ConsentStore makes and keeps them: the code's
 * alphabet and format, how a typed code is read, and the hash that is stored instead of a code
 * or a secret. One definition, so a code made by one engine's store is read the same by another.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped survives. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 12 symbols of 5 bits: 60 bits, far beyond guessing within a code's lifetime. */
const CODE_LENGTH = 12;
const GROUP = 4;
/** Bytes of a paired client's secret (256 bits). */
const SECRET_BYTES = 32;
/** `last_used_at` is rewritten at most this often, so checks stay reads. */
export const TOUCH_INTERVAL_MS = 60_000;
/** The longest user agent kept for a paired client. */
export const USER_AGENT_MAX = 500;

/** The stored form of a code or a secret. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The canonical form of a typed code, or undefined when it cannot be one of ours. */
export function normalisePairingCode(code: string): string | undefined {
  const canonical = code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (canonical.length !== CODE_LENGTH) return undefined;
  for (const ch of canonical) if (!ALPHABET.includes(ch)) return undefined;
  return canonical;
}

/** A new code as people see it (`ABCD-EFGH-JKMN`). */
export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code.match(new RegExp(`.{${GROUP}}`, 'g'))?.join('-') ?? code;
}

/** A new paired client's secret, for its cookie. */
export function newClientSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}
