/**
 * The vault's cryptography, Node's crypto only: scrypt turns a master key or passphrase into a
 * key-encryption key, and AES-256-GCM seals the data key, every secret field and backups. GCM's
 * tag is what tells a wrong key from a right one and a damaged value from an intact one.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

const KEY_BYTES = 32;
/** The sizes of the parts around a sealed value's ciphertext (see `seal`). */
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
  /** Base64 of the random salt. */
  salt: string;
}

/** 2^15 × 8 × 128 bytes = 32 MiB of memory per derivation: costly to guess, quick to open. */
const DEFAULT_N = 2 ** 15;
const DEFAULT_R = 8;
const DEFAULT_P = 1;
const MAX_MEMORY = 64 * 1024 * 1024;

export function newScryptParams(): ScryptParams {
  return { N: DEFAULT_N, r: DEFAULT_R, p: DEFAULT_P, salt: randomBytes(16).toString('base64') };
}

/**
 * Derives a 32-byte key from `secret` with stored `params`. Parameters read from a file are
 * checked first, so a doctored file cannot make Navi spend minutes or gigabytes on one key.
 */
export function deriveKey(secret: string, params: ScryptParams): Buffer {
  const { N, r, p, salt } = params;
  const sane =
    Number.isInteger(N) &&
    N >= 2 ** 10 &&
    N <= 2 ** 20 &&
    (N & (N - 1)) === 0 &&
    Number.isInteger(r) &&
    r >= 1 &&
    r <= 32 &&
    Number.isInteger(p) &&
    p >= 1 &&
    p <= 16 &&
    typeof salt === 'string' &&
    salt.length > 0;
  if (!sane) throw new Error('the key derivation parameters are out of range');
  return scryptSync(secret.normalize('NFC'), Buffer.from(salt, 'base64'), KEY_BYTES, {
    N,
    r,
    p,
    maxmem: Math.max(MAX_MEMORY, 128 * N * r * p + 1024 * 1024),
  });
}

export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** `nonce ‖ ciphertext ‖ tag`, the form every sealed field is stored in. */
export function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

/** Thrown when a tag does not match: wrong key, or bytes changed since they were sealed. */
export class IntegrityError extends Error {
  constructor() {
    super('authentication tag mismatch');
    this.name = 'IntegrityError';
  }
}

export function open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new IntegrityError();
  const nonce = sealed.subarray(0, NONCE_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const body = sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    throw new IntegrityError();
  }
}

/**
 * Binds a field's ciphertext to its secret and field name, so a value moved to another field
 * or another secret no longer opens.
 */
export function fieldAad(secretId: string, field: string): Buffer {
  return Buffer.from(`navi-vault-field-v1\0${secretId}\0${field}`, 'utf8');
}

/** The data key wrapped under a key-encryption key, as `vault_meta` stores it. */
export interface WrappedKey {
  kdf: 'scrypt';
  params: ScryptParams;
  /** Base64 of `nonce ‖ ciphertext ‖ tag`. */
  sealed: string;
}

const WRAP_AAD = Buffer.from('navi-vault-data-key-v1', 'utf8');

export function wrapDataKey(dataKey: Buffer, masterKey: string): WrappedKey {
  const params = newScryptParams();
  const kek = deriveKey(masterKey, params);
  try {
    return { kdf: 'scrypt', params, sealed: seal(kek, dataKey, WRAP_AAD).toString('base64') };
  } finally {
    kek.fill(0);
  }
}

/** Throws `IntegrityError` when `masterKey` is not the key the data key was wrapped with. */
export function unwrapDataKey(wrapped: WrappedKey, masterKey: string): Buffer {
  const kek = deriveKey(masterKey, wrapped.params);
  try {
    const key = open(kek, Buffer.from(wrapped.sealed, 'base64'), WRAP_AAD);
    if (key.length !== KEY_BYTES) throw new IntegrityError();
    return key;
  } finally {
    kek.fill(0);
  }
}
