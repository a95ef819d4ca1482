/** Temporary vault folders for the vault's tests: real files, removed afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openVault, type VaultOptions } from './open-vault.js';
import { type AuditContext, type Vault, VaultError } from './types.js';

export const agent: AuditContext = {
  actor: 'agent',
  session_id: 's-1',
  tool: 'reveal_secret',
  reason: 'log in',
};
export const user: AuditContext = { actor: 'user' };

export interface TempVault {
  dir: string;
  options: (overrides?: Partial<VaultOptions>) => VaultOptions;
  remove: () => void;
}

export function tempVault(): TempVault {
  const dir = mkdtempSync(join(tmpdir(), 'navi-vault-'));
  return {
    dir,
    options: (overrides = {}) => ({
      path: join(dir, 'vault.db'),
      keyFile: join(dir, 'vault.key'),
      masterKey: '',
      auditLog: join(dir, 'vault-audit.jsonl'),
      ...overrides,
    }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The current test's vault folder, and the vault in it; only valid while a test runs. */
export interface TempVaultAccess {
  readonly dir: string;
  options(overrides?: Partial<VaultOptions>): VaultOptions;
  /** The vault opened with `options()` before the test, or the one `reopen` opened last. */
  readonly vault: Vault;
  /** Opens the folder's vault again with these options, closing the one before. */
  reopen(overrides?: Partial<VaultOptions>): Vault;
}

/**
 * Registers hooks (call at the top of a test file or describe block) that give every test a new
 * temporary vault folder, opened as a vault unless `open` is false, and close and remove it
 * after the test.
 */
export function useTempVault({ open = true }: { open?: boolean } = {}): TempVaultAccess {
  let folder: TempVault | undefined;
  let current: Vault | undefined;
  const temp = (): TempVault => {
    if (!folder) throw new Error('useTempVault: the vault folder exists only while a test runs');
    return folder;
  };
  beforeEach(() => {
    folder = tempVault();
    if (open) current = openVault(folder.options());
  });
  afterEach(() => {
    current?.close();
    current = undefined;
    folder?.remove();
    folder = undefined;
  });
  return {
    get dir() {
      return temp().dir;
    },
    options: (overrides) => temp().options(overrides),
    get vault() {
      if (!current) throw new Error('useTempVault: no vault is open; call reopen() first');
      return current;
    },
    reopen(overrides) {
      current?.close();
      current = openVault(temp().options(overrides));
      return current;
    },
  };
}

/** The VaultError `fn` throws; another error is thrown on, and none at all fails the test. */
export function vaultErrorOf(fn: () => unknown): VaultError {
  try {
    fn();
  } catch (err) {
    if (err instanceof VaultError) return err;
    throw err;
  }
  throw new Error('expected a VaultError, but the call returned');
}
