/**
 * The vault as the agent sees it, through the gnexus-creds tools and through the vault
 * references (`{{secret:<id>.<field>}}`) in its tool calls: the records Navi keeps there
 * for itself (tagged with one of NAVI_INTERNAL_TAGS, such as the OAuth tokens of MCP servers)
 * do not exist. Reading, revealing, changing or archiving one answers `not_found` exactly as
 * an unknown id does, searches leave them out, and no secret can be given such a tag, so the
 * agent can neither read Navi's tokens nor plant a record Navi would take for its own.
 * Navi itself (REST, the Vault page, the token store, its settings) uses the vault unwrapped.
 */
import {
  type AuditContext,
  isNaviInternal,
  NAVI_INTERNAL_TAGS,
  type NewSecret,
  type SecretPatch,
  type SecretQuery,
  type SecretRecord,
  type SecretStatus,
  type Vault,
  VaultError,
} from './types.js';
import { LIMITS, notFound } from './validation.js';

function refuseInternalTags(tags: readonly string[] | undefined): void {
  if (tags && isNaviInternal(tags))
    throw new VaultError(
      'invalid',
      `the tags ${NAVI_INTERNAL_TAGS.join(', ')} are reserved for the records Navi keeps for itself ` +
        '(such as the OAuth tokens of MCP servers); choose other tags',
    );
}

/** `vault` with Navi's own records hidden from, and closed to, the agent. */
export function agentVault(vault: Vault): Vault {
  /** The secret, unless it is unknown, archived or one of Navi's own: then `not_found`. */
  const visible = (id: string): SecretRecord => {
    const record = vault.get(id);
    if (isNaviInternal(record.tags)) throw notFound(id);
    return record;
  };

  return {
    status: () => vault.status(),
    search(query?: SecretQuery): SecretRecord[] {
      const limit = query?.limit ?? LIMITS.searchDefault;
      // Ask for more while hidden records took places in a full page, so the agent still gets
      // `limit` secrets when that many exist (up to the vault's own maximum).
      let ask = limit;
      for (;;) {
        const found = vault.search({ ...query, limit: ask });
        const shown = found.filter((s) => !isNaviInternal(s.tags));
        const hidden = found.length - shown.length;
        if (shown.length >= limit || hidden === 0 || found.length < ask || ask >= LIMITS.searchMax)
          return shown.slice(0, limit);
        ask = Math.min(LIMITS.searchMax, ask + hidden);
      }
    },
    get(id: string, options?: { includeArchived?: boolean }): SecretRecord {
      const record = vault.get(id, options);
      if (isNaviInternal(record.tags)) throw notFound(id);
      return record;
    },
    // Checked before the vault writes its audit entry and decrypts anything.
    reveal(id: string, field: string, audit: AuditContext): string {
      visible(id);
      return vault.reveal(id, field, audit);
    },
    resolve(id: string, field: string, audit: AuditContext) {
      visible(id);
      return vault.resolve(id, field, audit);
    },
    create(secret: NewSecret, audit: AuditContext): SecretRecord {
      refuseInternalTags(secret.tags);
      return vault.create(secret, audit);
    },
    update(id: string, patch: SecretPatch, audit: AuditContext): SecretRecord {
      visible(id);
      refuseInternalTags(patch.tags);
      return vault.update(id, patch, audit);
    },
    setStatus(id: string, status: SecretStatus, audit: AuditContext): SecretRecord {
      visible(id);
      return vault.setStatus(id, status, audit);
    },
    archive(id: string, audit: AuditContext): SecretRecord {
      visible(id);
      return vault.archive(id, audit);
    },
    auditLog: (query) => vault.auditLog(query),
    close: () => vault.close(),
  };
}
