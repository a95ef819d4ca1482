/**
 * The OAuth token store on Navi's vault: one secret per server, named `MCP OAuth: <server>`,
 * of type api_token, tagged MCP_OAUTH_TAG, whose one secret field `record` holds the JSON
 * record (tokens, registration, discovery). Encrypted at rest like every secret field.
 *
 * Records are read from the vault once and kept in memory: the SDK asks for the tokens on
 * every request, and every read of a secret field is an audit entry. Several Navi processes may
 * share one vault (`navi mcp` beside `navi serve`, a PostgreSQL cluster), so the cache is not
 * the last word: `reload` reads a record again (after a refused refresh, another process may
 * have rotated the tokens), a record is looked up in the vault before one is created, and a
 * removal archives what the vault holds.
 */
import { MCP_OAUTH_TAG, parseSecretReference } from '../../protocol/vault.js';
import { agentVault } from '../../vault/agent-vault.js';
import type { Vault } from '../../vault/types.js';
import { VaultError } from '../../vault/types.js';
import type { McpOAuthRecord, McpTokenStore } from './token-store.js';

/** The tag of the vault secrets that hold MCP OAuth records (hidden from gnexus-creds' tools). */
export { MCP_OAUTH_TAG };

const FIELD = 'record';

export function oauthSecretName(server: string): string {
  return `MCP OAuth: ${server}`;
}

/** Thrown when the vault cannot be used; its message says why and how to unlock it. */
export class TokenStoreLockedError extends Error {}

export class VaultTokenStore implements McpTokenStore {
  private readonly cache = new Map<string, { id: string; record: McpOAuthRecord } | null>();

  constructor(private readonly vault: Vault) {}

  /** Throws TokenStoreLockedError when the vault is locked. */
  assertUsable(): void {
    const status = this.vault.status();
    if (status.state === 'locked')
      throw new TokenStoreLockedError(
        `the vault, where Navi keeps OAuth tokens, is locked (${status.reason}); ${status.howToUnlock}`,
      );
  }

  resolveReference(reference: string, purpose: string): string {
    const named = parseSecretReference(reference);
    if (!named)
      throw new Error(`${reference.slice(0, 80)} is not a vault reference such as {{secret:<id>.<field>}}`);
    // A config is not Navi's own: it may not name the records Navi keeps for itself (the tokens).
    const configVault = agentVault(this.vault);
    return this.locked(() => configVault.resolve(named.id, named.field, { actor: 'navi', reason: purpose }))
      .value;
  }

  load(server: string): McpOAuthRecord | undefined {
    return this.entry(server)?.record;
  }

  /** The record as the vault holds it now, read again whatever this process cached. */
  reload(server: string): McpOAuthRecord | undefined {
    this.cache.delete(server);
    return this.entry(server)?.record;
  }

  save(server: string, record: McpOAuthRecord): void {
    const value = JSON.stringify(record);
    const audit = { actor: 'navi' as const, reason: `OAuth tokens of MCP server ${server}` };
    // With none cached, another process may have created the record since: one record per server.
    const id = this.locked(() => {
      const found = this.entry(server)?.id ?? this.find(server);
      if (found) {
        this.vault.update(found, { fields: [{ name: FIELD, value, secret: true }] }, audit);
        return found;
      }
      return this.vault.create(
        {
          name: oauthSecretName(server),
          type: 'api_token',
          tags: [MCP_OAUTH_TAG],
          fields: [
            { name: 'server', value: server, secret: false },
            { name: FIELD, value, secret: true },
          ],
        },
        audit,
      ).id;
    });
    this.cache.set(server, { id, record });
  }

  remove(server: string): void {
    // What the vault holds, not what was cached: another process may have created it.
    const found = this.locked(() => this.find(server));
    if (found)
      this.locked(() =>
        this.vault.archive(found, { actor: 'navi', reason: `OAuth of MCP server ${server} revoked` }),
      );
    // Only once the vault forgot it: a failed archive leaves the tokens in use.
    this.cache.set(server, null);
  }

  /** The id of the server's record in the vault now, read without decrypting anything. */
  private find(server: string): string | undefined {
    return this.vault
      .search({ tag: MCP_OAUTH_TAG, limit: 200 })
      .find((s) => s.name === oauthSecretName(server))?.id;
  }

  private entry(server: string): { id: string; record: McpOAuthRecord } | undefined {
    const cached = this.cache.get(server);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.locked(() => this.find(server));
    let entry: { id: string; record: McpOAuthRecord } | null = null;
    if (found) {
      const text = this.locked(() =>
        this.vault.reveal(found, FIELD, { actor: 'navi', reason: `OAuth tokens of MCP server ${server}` }),
      );
      try {
        entry = { id: found, record: JSON.parse(text) as McpOAuthRecord };
      } catch {
        // A record that is not JSON any more is as good as none: the person authorises again.
        entry = { id: found, record: {} };
      }
    }
    this.cache.set(server, entry);
    return entry ?? undefined;
  }

  /** Runs a vault call, turning a locked vault into TokenStoreLockedError. */
  private locked<T>(call: () => T): T {
    try {
      return call();
    } catch (err) {
      if (err instanceof VaultError && err.code === 'locked') {
        const how = err.locked ? ` (${err.locked.reason}); ${err.locked.howToUnlock}` : `: ${err.message}`;
        throw new TokenStoreLockedError(`the vault, where Navi keeps OAuth tokens, is locked${how}`);
      }
      throw err;
    }
  }
}
