/**
 * Opening the vault: its database, then its master key (GNEXUS_MASTER_KEY, else the key file),
 * then the data key unwrapped with it. Any problem with the key or the file leaves a locked
 * vault that says why and how to unlock it; opening never throws for them.
 */
import { resolve } from 'node:path';
import type { Settings } from '../config/settings.js';
import { IntegrityError, newDataKey, unwrapDataKey, type WrappedKey, wrapDataKey } from './crypto.js';
import { createKeyFile, moveKeyFile, pendingKeyFile, readKeyFile } from './key-source.js';
import { type Vault, VaultError, type VaultState } from './types.js';
import { UnlockedVault } from './unlocked-vault.js';
import { DATA_KEY, openVaultDatabase, VaultDb } from './vault-db.js';

export interface VaultOptions {
  /** The vault's SQLite file. */
  path: string;
  keyFile: string;
  /** GNEXUS_MASTER_KEY; '' when unset, and then the key file holds the key. */
  masterKey: string;
  auditLog: string;
}

/** The vault's options from the settings, relative paths resolved against `cwd` (like DB_PATH). */
export function vaultOptions(
  settings: Pick<
    Settings,
    'GNEXUS_VAULT_PATH' | 'GNEXUS_KEY_FILE' | 'GNEXUS_MASTER_KEY' | 'GNEXUS_AUDIT_LOG'
  >,
  cwd = process.cwd(),
): VaultOptions {
  return {
    path: resolve(cwd, settings.GNEXUS_VAULT_PATH),
    keyFile: resolve(cwd, settings.GNEXUS_KEY_FILE),
    masterKey: settings.GNEXUS_MASTER_KEY,
    auditLog: resolve(cwd, settings.GNEXUS_AUDIT_LOG),
  };
}

export type Unlock =
  | {
      ok: true;
      db: VaultDb;
      dataKey: Buffer;
      source: 'env' | 'file';
      masterKey: string;
      /** `vault_meta.data_key` as read, so a rotation can tell whether another one came first. */
      wrappedText: string;
    }
  | { ok: false; reason: string; howToUnlock: string };

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The database opened and the data key unwrapped, or why not and how to fix it. */
export function unlockVault(options: VaultOptions): Unlock {
  const path = resolve(options.path);
  const keyFile = resolve(options.keyFile);
  let db: VaultDb;
  try {
    db = new VaultDb(openVaultDatabase(path));
  } catch (err) {
    const reason = `cannot open the vault database ${path}: ${message(err)}`;
    return {
      ok: false,
      reason,
      howToUnlock: reason.includes('newer Navi')
        ? 'update Navi to the version that wrote the vault, then restart Navi'
        : 'check that GNEXUS_VAULT_PATH names a SQLite file Navi can read and write; if the file is damaged, ' +
          'move it (with its -wal and -shm files) aside and restore a backup with npx navi vault import, then restart Navi',
    };
  }
  try {
    const result = unlockWith(db, options.masterKey.trim(), keyFile, path);
    if (!result.ok) db.close();
    return result;
  } catch (err) {
    db.close();
    return {
      ok: false,
      reason: `cannot open the vault ${path}: ${message(err)}`,
      howToUnlock:
        'check that the vault file and its folder are readable and writable by Navi, then restart Navi',
    };
  }
}

function readWrapped(db: VaultDb): { text: string; key: WrappedKey } | undefined {
  const text = db.meta(DATA_KEY);
  if (text === undefined) return undefined;
  const key = JSON.parse(text) as WrappedKey;
  if (key?.kdf !== 'scrypt' || typeof key.sealed !== 'string' || typeof key.params !== 'object')
    throw new Error('its stored data key is damaged');
  return { text, key };
}

function tryUnwrap(wrapped: WrappedKey, masterKey: string): Buffer | undefined {
  try {
    return unwrapDataKey(wrapped, masterKey);
  } catch (err) {
    if (err instanceof IntegrityError) return undefined;
    throw err;
  }
}

/**
 * A new vault: picks (or creates) its key, then stores a new data key wrapped under it unless
 * another process got there first. Returns the unlocked vault when ours was stored (its data
 * key is known, so it is not unwrapped again), a failure when no key can be had, and undefined
 * when another process won: its data key is then unwrapped like any stored one.
 */
function createDataKey(db: VaultDb, envKey: string, keyFile: string, path: string): Unlock | undefined {
  let key = envKey;
  if (key === '') {
    const read = readKeyFile(keyFile);
    if (read.ok) key = read.key;
    else if (!read.missing)
      return {
        ok: false,
        reason: read.reason,
        howToUnlock: `make the key file ${keyFile} a readable file of mode 0600 (or move it aside so Navi creates a new one for this new vault), or set GNEXUS_MASTER_KEY, then restart Navi`,
      };
    else {
      try {
        key = createKeyFile(keyFile);
      } catch (err) {
        return {
          ok: false,
          reason: `cannot create the key file ${keyFile} for the new vault ${path}: ${message(err)}`,
          howToUnlock:
            'make its folder writable by Navi, set GNEXUS_KEY_FILE to a path Navi can write, or set GNEXUS_MASTER_KEY to a key of your own, then restart Navi',
        };
      }
    }
  }
  const dataKey = newDataKey();
  const candidate = JSON.stringify(wrapDataKey(dataKey, key));
  db.write(() => db.insertMetaIfAbsent(DATA_KEY, candidate));
  if (db.meta(DATA_KEY) === candidate)
    return {
      ok: true,
      db,
      dataKey,
      source: envKey === '' ? 'file' : 'env',
      masterKey: key,
      wrappedText: candidate,
    };
  dataKey.fill(0);
  return undefined;
}

function unlockWith(db: VaultDb, envKey: string, keyFile: string, path: string): Unlock {
  let stored = readWrapped(db);
  if (!stored) {
    const created = createDataKey(db, envKey, keyFile, path);
    if (created) return created;
    stored = readWrapped(db);
    if (!stored) throw new Error('its data key could not be stored');
  }
  const { text, key: wrapped } = stored;
  const ok = (dataKey: Buffer, source: 'env' | 'file', masterKey: string): Unlock => ({
    ok: true,
    db,
    dataKey,
    source,
    masterKey,
    wrappedText: text,
  });

  if (envKey !== '') {
    const dataKey = tryUnwrap(wrapped, envKey);
    if (dataKey) return ok(dataKey, 'env', envKey);
    return {
      ok: false,
      reason: `GNEXUS_MASTER_KEY does not unlock the vault ${path}: it is not the key the vault was created with or last rotated to`,
      howToUnlock: `set GNEXUS_MASTER_KEY to the key the vault was created with (or unset it if the vault uses the key file ${keyFile}), then restart Navi`,
    };
  }

  const file = readKeyFile(keyFile);
  if (file.ok) {
    const dataKey = tryUnwrap(wrapped, file.key);
    if (dataKey) return ok(dataKey, 'file', file.key);
  }
  // A rotation that committed its new key but stopped before renaming the key file into place
  // left the new key beside it: finish the rename. A `.new` that opens nothing is left alone
  // (the next rotation replaces it).
  const pendingPath = pendingKeyFile(keyFile);
  const pending = readKeyFile(pendingPath);
  if (pending.ok) {
    const dataKey = tryUnwrap(wrapped, pending.key);
    if (dataKey) {
      try {
        moveKeyFile(pendingPath, keyFile);
      } catch {
        // The key is known; the rename is tried again at the next opening.
      }
      return ok(dataKey, 'file', pending.key);
    }
  }
  const how = `restore the key file ${keyFile} (mode 0600) the vault was created with, or set GNEXUS_MASTER_KEY to the key the vault was created with, then restart Navi`;
  if (file.ok)
    return {
      ok: false,
      reason: `the key file ${keyFile} does not unlock the vault ${path}: it belongs to another vault or was replaced`,
      howToUnlock: how,
    };
  if (file.missing)
    return {
      ok: false,
      reason: `the vault ${path} exists but GNEXUS_MASTER_KEY is not set and its key file ${keyFile} is missing`,
      howToUnlock: how,
    };
  return { ok: false, reason: file.reason, howToUnlock: how };
}

/** A vault that cannot be used: `status()` says why, every other method throws `locked`. */
class LockedVault implements Vault {
  constructor(private readonly state: Extract<VaultState, { state: 'locked' }>) {}

  status(): VaultState {
    return { ...this.state };
  }

  private refuse(): never {
    throw lockedError(this.state);
  }

  search(): never {
    this.refuse();
  }
  get(): never {
    this.refuse();
  }
  reveal(): never {
    this.refuse();
  }
  resolve(): never {
    this.refuse();
  }
  create(): never {
    this.refuse();
  }
  update(): never {
    this.refuse();
  }
  setStatus(): never {
    this.refuse();
  }
  archive(): never {
    this.refuse();
  }
  auditLog(): never {
    this.refuse();
  }
  close(): void {}
}

export function lockedError(state: { reason: string; howToUnlock: string }): VaultError {
  return new VaultError(
    'locked',
    `the vault is locked: ${state.reason}. To unlock it, ${state.howToUnlock}`,
    {
      reason: state.reason,
      howToUnlock: state.howToUnlock,
    },
  );
}

/**
 * Opens the vault. Never throws for a missing or wrong key or a file it cannot open: the vault
 * it returns is then locked, its `status()` says why and how to unlock it, and its other
 * methods throw `VaultError('locked')`.
 */
export function openVault(options: VaultOptions): Vault {
  const path = resolve(options.path);
  const result = unlockVault(options);
  if (!result.ok)
    return new LockedVault({ state: 'locked', reason: result.reason, howToUnlock: result.howToUnlock, path });
  return new UnlockedVault(
    result.db,
    result.dataKey,
    { state: 'unlocked', keySource: result.source, path },
    resolve(options.auditLog),
  );
}

/** The unlocked vault with its backup helpers, for the CLI's commands; throws `locked` otherwise. */
export function openUnlockedVault(options: VaultOptions): UnlockedVault {
  const vault = openVault(options);
  const state = vault.status();
  if (state.state === 'locked') throw lockedError(state);
  return vault as UnlockedVault;
}
