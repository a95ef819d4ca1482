/**
 * Where Navi keeps what OAuth gave it for one MCP server (docs/mcp.md#oauth): the tokens, the
 * client registration and what discovery found. The PKCE verifier of an authorisation in
 * progress is not kept here: it lives in memory with its state (pending.ts). The store behind it is the vault, so all of it is encrypted at rest; none of it is
 * ever logged.
 */
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface McpOAuthRecord {
  tokens?: OAuthTokens;
  /** When `tokens` were received (ms since the epoch), to tell when they expire. */
  tokensAt?: number;
  /** The registration (dynamic, or the config's client id); tied to `redirectUrl`. */
  client?: OAuthClientInformationMixed;
  /** The redirect URI the client was registered with. */
  redirectUrl?: string;
  discovery?: OAuthDiscoveryState;
}

export interface McpTokenStore {
  load(server: string): McpOAuthRecord | undefined;
  save(server: string, record: McpOAuthRecord): void;
  /**
   * The record read again from where it is kept, past any cache: another process sharing the
   * store may have changed it (rotated the tokens). Without it, `load` is taken as current.
   */
  reload?(server: string): McpOAuthRecord | undefined;
  /** Forgets everything kept for the server; nothing happens when there was nothing. */
  remove(server: string): void;
  /** Throws, saying why and what to do, when nothing can be stored now (a locked vault). */
  assertUsable?(): void;
  /** The value of a vault reference `{{secret:<id>.<field>}}` (a config's client_secret). */
  resolveReference?(reference: string, purpose: string): string;
}
