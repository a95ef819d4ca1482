/**
 * The secrets vault (docs/vault.md): `openVault` for Navi and the gnexus-creds server, key
 * rotation and encrypted backups for `navi vault`.
 */
export { BACKUP_FORMAT, exportVault, type ImportCounts, importVault, MIN_PASSPHRASE } from './backup.js';
export { openVault, type VaultOptions, vaultOptions } from './open-vault.js';
export { type RotateResult, rotateVaultKey } from './rotate.js';
export * from './types.js';
export { MASK } from './unlocked-vault.js';
