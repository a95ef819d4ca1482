/** Temporary vault folders for the vault's tests: real files, removed afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VaultOptions } from './open-vault.js';
import type { AuditContext } from './types.js';

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
