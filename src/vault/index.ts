/**
 * The secrets vault (docs/vault.md): `openVault` for Navi and the gnexus-creds server, key
 * rotation and encrypted backups for `navi vault`.
 */

export { openVault, type VaultOptions, vaultOptions } from './open-vault.js';
export * from './types.js';
export { MASK } from './unlocked-vault.js';
