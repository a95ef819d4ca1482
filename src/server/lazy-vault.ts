/**
 * The vault, opened on first use. Opening derives the key with scrypt (a deliberate tenth of a
 * second or more) and may create the key file: a Navi that never touches a secret pays neither.
 */
import type { Vault } from '../vault/types.js';

export function lazyVault(open: () => Vault): Vault {
  let vault: Vault | undefined;
  const get = (): Vault => {
    vault ??= open();
    return vault;
  };
  return {
    status: () => get().status(),
    search: (query) => get().search(query),
    get: (id, options) => get().get(id, options),
    reveal: (id, field, audit) => get().reveal(id, field, audit),
    resolve: (id, field, audit) => get().resolve(id, field, audit),
    create: (secret, audit) => get().create(secret, audit),
    update: (id, patch, audit) => get().update(id, patch, audit),
    setStatus: (id, status, audit) => get().setStatus(id, status, audit),
    archive: (id, audit) => get().archive(id, audit),
    auditLog: (query) => get().auditLog(query),
    close: () => {
      vault?.close();
      vault = undefined;
    },
  };
}
