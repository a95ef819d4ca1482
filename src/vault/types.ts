/**
 * The secrets vault's shapes, shared by Navi (references, REST, the CLI) and the gnexus-creds
 * MCP server. A secret's secret fields are encrypted at rest; nothing here ever carries their
 * plaintext except `Vault.reveal` and `Vault.resolve`, which write an audit entry first.
 */

import type {
  AuditContext,
  AuditEntry,
  NewSecret,
  SecretPatch,
  SecretQuery,
  SecretRecord,
  SecretStatus,
  VaultState,
} from '../protocol/vault.js';

export * from '../protocol/vault.js';

export type VaultErrorCode = 'locked' | 'not_found' | 'invalid' | 'audit_failed' | 'conflict' | 'io';

/** Every refusal the vault makes: the message says what was wrong and what to do. */
export class VaultError extends Error {
  constructor(
    readonly code: VaultErrorCode,
    message: string,
    /** For `locked`: why, and how to unlock, so a caller can word it without asking again. */
    readonly locked?: { reason: string; howToUnlock: string },
  ) {
    super(message);
    this.name = 'VaultError';
  }
}

export interface Vault {
  status(): VaultState;
  /** Masked records, newest change first; archived ones only with `includeArchived`. */
  search(query?: SecretQuery): SecretRecord[];
  /** Throws `not_found` for an unknown id and, unless `includeArchived`, for an archived one. */
  get(id: string, options?: { includeArchived?: boolean }): SecretRecord;
  /** The plaintext of one secret field, after an audit entry `reveal` was written (else `audit_failed`). */
  reveal(id: string, field: string, audit: AuditContext): string;
  /** Like `reveal`, audited as `use`: the executor substituting a reference into a tool call. */
  resolve(id: string, field: string, audit: AuditContext): { value: string; label: string };
  create(secret: NewSecret, audit: AuditContext): SecretRecord;
  update(id: string, patch: SecretPatch, audit: AuditContext): SecretRecord;
  setStatus(id: string, status: SecretStatus, audit: AuditContext): SecretRecord;
  archive(id: string, audit: AuditContext): SecretRecord;
  /** Newest first. */
  auditLog(query?: { limit?: number; secret_id?: string }): AuditEntry[];
  close(): void;
}
