/**
 * Key rotation: the same data key wrapped again under a new master key with a new salt. The
 * fields stay as they are, so a rotation is one small transaction however big the vault is.
 */
import { AuditLog, auditEntry } from './audit-log.js';
import { wrapDataKey } from './crypto.js';
import {
  moveKeyFile,
  newMasterKey,
  pendingKeyFile,
  readKeyFile,
  writeKeyFileAtomically,
} from './key-source.js';
import { lockedError, unlockVault, type VaultOptions } from './open-vault.js';
import { type AuditContext, VaultError } from './types.js';
import { DATA_KEY } from './vault-db.js';

export interface RotateResult {
  keySource: 'env' | 'file';
  /** The key file that now holds the new key (key file vaults only). */
  keyFile?: string;
  /** What the person must do next, if anything. */
  nextStep: string;
}

/**
 * Wraps the vault's data key under a new master key.
 *
 * With the key from GNEXUS_MASTER_KEY, `newKey` is required and the person then sets
 * GNEXUS_MASTER_KEY to it. With the key file, `newKey` is optional (a random one is made) and
 * the file is replaced, crash-safely: the new key is written to `<keyfile>.new` first, the
 * database commits the new wrapping, then `.new` is renamed over the key file. A crash before
 * the commit leaves the old key working (the stray `.new` opens nothing); a crash after it
 * leaves `.new` as the only key that works, and the next opening finishes the rename.
 * The write lock is held from checking the current key to the commit, so two rotations at once
 * cannot both write `.new`: the second finds the key changed and stops with `conflict`.
 */
export function rotateVaultKey(
  options: VaultOptions,
  newKey?: string,
  audit: AuditContext = { actor: 'user', tool: 'navi vault rotate-key' },
): RotateResult {
  const unlocked = unlockVault(options);
  if (!unlocked.ok) throw lockedError(unlocked);
  const { db, dataKey, source } = unlocked;
  try {
    const next = newKey?.trim() ?? '';
    if (source === 'env' && next === '')
      throw new VaultError(
        'invalid',
        "the vault's key comes from GNEXUS_MASTER_KEY, so Navi cannot choose a new one for you: " +
          'put the new key in GNEXUS_NEW_MASTER_KEY and run npx navi vault rotate-key again',
      );
    const key = next === '' ? newMasterKey() : next;
    if (key === unlocked.masterKey)
      throw new VaultError(
        'invalid',
        'the new key is the key the vault already uses; choose a different one',
      );
    // scrypt takes a moment; done before the write lock so the other process never waits on it.
    const wrapped = JSON.stringify(wrapDataKey(dataKey, key));
    const pending = pendingKeyFile(options.keyFile);
    const log = new AuditLog(options.auditLog);
    db.write(() => {
      if (db.meta(DATA_KEY) !== unlocked.wrappedText)
        throw new VaultError(
          'conflict',
          'the vault key was changed by another process while rotating; run npx navi vault rotate-key again',
        );
      if (source === 'file') writeKeyFileAtomically(pending, key);
      db.setMeta(DATA_KEY, wrapped);
      log.append(
        auditEntry(
          {
            action: 'rotate_key',
            detail: `key from ${source === 'env' ? 'GNEXUS_MASTER_KEY' : 'the key file'}`,
          },
          audit,
        ),
      );
    });
    if (source === 'env')
      return {
        keySource: 'env',
        nextStep:
          'set GNEXUS_MASTER_KEY to the new key (the value of GNEXUS_NEW_MASTER_KEY) wherever Navi and the gnexus-creds server read it, then restart Navi; the old key no longer opens the vault',
      };
    finishKeyFile(pending, options.keyFile, key, () => db.meta(DATA_KEY) === wrapped);
    return {
      keySource: 'file',
      keyFile: options.keyFile,
      nextStep: `the key file ${options.keyFile} now holds the new key; replace any copy of the old key file you keep with it, since the old key no longer opens the vault`,
    };
  } finally {
    dataKey.fill(0);
    db.close();
  }
}

/**
 * Moves `.new` into place unless an opening of the vault already did. Should neither file hold
 * the new key (someone removed `.new`), it is written straight to the key file while the vault
 * still uses it: the key is in memory, and losing it would lose the vault.
 */
function finishKeyFile(pending: string, keyFile: string, key: string, stillCurrent: () => boolean): void {
  const waiting = readKeyFile(pending);
  if (waiting.ok && waiting.key === key) {
    moveKeyFile(pending, keyFile);
    return;
  }
  const current = readKeyFile(keyFile);
  if (current.ok && current.key === key) return;
  if (stillCurrent()) {
    writeKeyFileAtomically(keyFile, key);
    return;
  }
  throw new VaultError(
    'conflict',
    `the vault key was rotated again by another process meanwhile; ${keyFile} holds the key of that rotation`,
  );
}
