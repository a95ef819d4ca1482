/**
 * Encrypted backups of the vault: one JSON file holding every secret (archived ones too) sealed
 * with AES-256-GCM under a key derived by scrypt from a passphrase, so the backup opens without
 * the vault's master key and is useless without the passphrase.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import {
  deriveKey,
  IntegrityError,
  NONCE_BYTES,
  newScryptParams,
  open,
  type ScryptParams,
  seal,
  TAG_BYTES,
} from './crypto.js';
import { replaceFile } from './durable-file.js';
import { openUnlockedVault, type VaultOptions } from './open-vault.js';
import { type AuditContext, VaultError } from './types.js';
import type { PlainSecret } from './unlocked-vault.js';
import { checkFields, checkName, checkStatus, checkTags, checkType, parseId } from './validation.js';

export const BACKUP_FORMAT = 'navi-vault-backup';
const BACKUP_VERSION = 1;
export const MIN_PASSPHRASE = 12;
/** Far above any real vault (50 fields of 64 KiB per secret), far below what would hurt. */
const MAX_BACKUP_BYTES = 512 * 1024 * 1024;
const AAD = Buffer.from(`${BACKUP_FORMAT}-v${BACKUP_VERSION}`, 'utf8');

interface BackupFile {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  kdf: 'scrypt';
  params: ScryptParams;
  /** Base64. */
  nonce: string;
  ciphertext: string;
  tag: string;
}

interface BackupContent {
  exported_at: string;
  secrets: PlainSecret[];
}

export interface ImportCounts {
  added: number;
  updated: number;
  skipped: number;
}

const cli = (tool: string): AuditContext => ({ actor: 'user', tool });

function checkPassphrase(passphrase: unknown): string {
  if (typeof passphrase !== 'string' || [...passphrase].length < MIN_PASSPHRASE)
    throw new VaultError(
      'invalid',
      `the backup passphrase must be at least ${MIN_PASSPHRASE} characters; choose a longer one (a few words work well)`,
    );
  return passphrase;
}

function ioError(what: string, file: string, err: unknown): VaultError {
  const e = err as NodeJS.ErrnoException;
  return new VaultError(
    'io',
    `cannot ${what} ${file} (${e.code ?? e.message}); check the path and its permissions`,
  );
}

/**
 * Writes every secret of the vault, decrypted and then sealed under `passphrase`, to `file`.
 * The `export` audit entry comes first; no entry, no file. Returns how many secrets it holds.
 */
export function exportVault(
  options: VaultOptions,
  file: string,
  passphrase: string,
  audit: AuditContext = cli('navi vault export'),
): { secrets: number; file: string } {
  const phrase = checkPassphrase(passphrase);
  const target = resolve(file);
  const vault = openUnlockedVault(options);
  try {
    const secrets = vault.exportAll();
    vault.record({ action: 'export', detail: `${secrets.length} secrets to ${target}` }, audit);
    const content: BackupContent = { exported_at: new Date().toISOString(), secrets };
    const params = newScryptParams();
    const key = deriveKey(phrase, params);
    const sealed = seal(key, Buffer.from(JSON.stringify(content), 'utf8'), AAD);
    key.fill(0);
    const backup: BackupFile = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      kdf: 'scrypt',
      params,
      nonce: sealed.subarray(0, NONCE_BYTES).toString('base64'),
      ciphertext: sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES).toString('base64'),
      tag: sealed.subarray(sealed.length - TAG_BYTES).toString('base64'),
    };
    try {
      replaceFile(target, `${JSON.stringify(backup)}\n`);
    } catch (err) {
      throw ioError('write the backup', target, err);
    }
    return { secrets: secrets.length, file: target };
  } finally {
    vault.close();
  }
}

function notBackup(file: string, why: string): VaultError {
  return new VaultError(
    'invalid',
    `${file} is not a Navi vault backup (${why}); give the file that npx navi vault export wrote`,
  );
}

/** Opens a backup file; a wrong passphrase and a changed file look the same to GCM, and say so. */
function readBackup(file: string, passphrase: string): PlainSecret[] {
  const target = resolve(file);
  let text: string;
  try {
    const size = statSync(target).size;
    if (size > MAX_BACKUP_BYTES) throw notBackup(target, `${size} bytes is far more than a backup holds`);
    text = readFileSync(target, 'utf8');
  } catch (err) {
    if (err instanceof VaultError) throw err;
    throw ioError('read the backup', target, err);
  }
  let backup: BackupFile;
  try {
    backup = JSON.parse(text) as BackupFile;
  } catch {
    throw notBackup(target, 'it is not JSON');
  }
  if (typeof backup !== 'object' || backup === null || backup.format !== BACKUP_FORMAT)
    throw notBackup(target, 'its format is not navi-vault-backup');
  if (backup.version !== BACKUP_VERSION)
    throw notBackup(target, `version ${String(backup.version)}: update Navi to read it`);
  if (
    backup.kdf !== 'scrypt' ||
    typeof backup.params !== 'object' ||
    backup.params === null ||
    ![backup.nonce, backup.ciphertext, backup.tag].every((v) => typeof v === 'string')
  )
    throw notBackup(target, 'fields are missing');
  let key: Buffer;
  try {
    key = deriveKey(passphrase, backup.params);
  } catch {
    throw notBackup(target, 'its key derivation parameters are out of range');
  }
  let plain: Buffer;
  try {
    const sealed = Buffer.concat([
      Buffer.from(backup.nonce, 'base64'),
      Buffer.from(backup.ciphertext, 'base64'),
      Buffer.from(backup.tag, 'base64'),
    ]);
    plain = open(key, sealed, AAD);
  } catch (err) {
    if (!(err instanceof IntegrityError)) throw err;
    throw new VaultError(
      'invalid',
      `the passphrase does not open ${target}, or the file was changed after it was exported; ` +
        'check the passphrase (GNEXUS_BACKUP_PASSPHRASE) and use an untouched copy of the backup',
    );
  } finally {
    key.fill(0);
  }
  const content = JSON.parse(plain.toString('utf8')) as BackupContent;
  if (!Array.isArray(content?.secrets)) throw notBackup(target, 'it holds no list of secrets');
  return content.secrets.map((s, i) => checkBackupSecret(s, i, target));
}

function checkBackupSecret(value: unknown, index: number, file: string): PlainSecret {
  const s = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  try {
    const time = (v: unknown, what: string) => {
      if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw new Error(`${what} is not a time`);
      // The vault's own form, so times compare as text when merging.
      return new Date(v).toISOString();
    };
    return {
      id: parseId(s.id),
      name: checkName(s.name),
      type: checkType(s.type),
      tags: checkTags(s.tags),
      status: checkStatus(s.status),
      created_at: time(s.created_at, 'created_at'),
      updated_at: time(s.updated_at, 'updated_at'),
      fields: checkFields(s.fields, { min: 1 }),
    };
  } catch (err) {
    throw notBackup(file, `secret ${index + 1} is not valid: ${(err as Error).message}`);
  }
}

/** Merges a backup into the vault by id (see `UnlockedVault.importSecrets`). */
export function importVault(
  options: VaultOptions,
  file: string,
  passphrase: string,
  audit: AuditContext = cli('navi vault import'),
): ImportCounts {
  if (typeof passphrase !== 'string' || passphrase === '')
    throw new VaultError(
      'invalid',
      'give the passphrase the backup was exported with (GNEXUS_BACKUP_PASSPHRASE)',
    );
  const secrets = readBackup(file, passphrase);
  const vault = openUnlockedVault(options);
  try {
    return vault.importSecrets(
      secrets,
      (counts) =>
        `added ${counts.added}, updated ${counts.updated}, skipped ${counts.skipped} from ${basename(file)} in ${dirname(resolve(file))}`,
      audit,
    );
  } finally {
    vault.close();
  }
}
