/**
 * Navi's side of the SDK's OAuth client (`OAuthClientProvider`) for one MCP server
 * (docs/mcp.md#oauth). The SDK does the protocol: discovery, registration, PKCE, the code
 * exchange, refresh and step-up. This provider says who Navi is (client metadata, a client id
 * from the config or a client-ID metadata document) and keeps what the SDK hands it in the
 * token store (the vault). It never opens a browser: `redirectToAuthorization` only records
 * the URL, which the person's Connect click or `navi mcp login` shows.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpOAuthConfig } from '../types.js';
import type { McpOAuthRecord, McpTokenStore } from './token-store.js';

/** Where the authorisation server sends the browser back, under Navi's origin. */
export const OAUTH_CALLBACK_PATH = '/agents/mcp/oauth/callback';

export interface NaviOAuthProviderOptions {
  /** The server's config name: the key of its record in the store. */
  server: string;
  config?: McpOAuthConfig;
  store: McpTokenStore;
  /**
   * The origin the person reaches Navi at (with a path prefix, if any); the redirect URI is
   * `<redirectBase>/agents/mcp/oauth/callback`. Absent for a connection's own provider, which
   * keeps the redirect URI its registration was made with.
   */
  redirectBase?: string;
  /** The value of a `{{secret:…}}` client secret; without it such a secret is refused. */
  resolveSecret?: (reference: string) => string;
  /** Start afresh: stored tokens are not offered, so `auth()` asks the person, never refreshes. */
  ignoreStoredTokens?: boolean;
  /** The PKCE verifier of the authorisation being completed. */
  codeVerifier?: string;
  /** Called after tokens were saved or forgotten. */
  onTokens?: (record: McpOAuthRecord | undefined) => void;
}

/** Used for a refresh when nothing says which redirect URI the registration had. */
const FALLBACK_REDIRECT = `http://localhost${OAUTH_CALLBACK_PATH}`;

export class NaviOAuthProvider implements OAuthClientProvider {
  /** The authorisation page `auth()` chose, once it wanted the person. */
  authorizationUrl: URL | undefined;
  /** The `state` sent with it. */
  lastState: string | undefined;
  private verifier: string | undefined;
  /** Tokens saved through this provider, for a provider that ignores the stored ones. */
  private fresh: OAuthTokens | undefined;

  constructor(private readonly options: NaviOAuthProviderOptions) {
    this.verifier = options.codeVerifier;
  }

  get redirectUrl(): string {
    const base = this.options.redirectBase;
    if (base !== undefined) return `${base.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
    return this.load()?.redirectUrl ?? FALLBACK_REDIRECT;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.config?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const config = this.options.config;
    return {
      client_name: 'Navi',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: config?.clientSecret !== undefined ? 'client_secret_post' : 'none',
      ...(config?.scope !== undefined && { scope: config.scope }),
    };
  }

  state(): string {
    this.lastState = randomBytes(32).toString('base64url');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const config = this.options.config;
    if (config?.clientId !== undefined) {
      const secret = config.clientSecret === undefined ? undefined : this.secret(config.clientSecret);
      return { client_id: config.clientId, ...(secret !== undefined && { client_secret: secret }) };
    }
    const record = this.load();
    // A registration is bound to its redirect URI: reached at another origin, Navi registers again.
    if (!record?.client || record.redirectUrl !== this.redirectUrl) return undefined;
    return record.client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    // A configured client id is the config's; only registrations are stored.
    if (this.options.config?.clientId !== undefined) return;
    const redirectUrl = this.redirectUrl;
    this.update((r) => {
      r.client = client;
      r.redirectUrl = redirectUrl;
    });
  }

  tokens(): OAuthTokens | undefined {
    if (this.options.ignoreStoredTokens) return this.fresh;
    return this.load()?.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.fresh = tokens;
    const redirectUrl = this.redirectUrl;
    const record = this.update((r) => {
      r.tokens = tokens;
      r.tokensAt = Date.now();
      r.redirectUrl ??= redirectUrl;
    });
    this.options.onTokens?.(record);
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined)
      throw new Error('no PKCE verifier for this authorisation; press Connect to start it again');
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.update((r) => {
      r.discovery = state;
    });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.load()?.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') {
      this.verifier = undefined;
      return;
    }
    if (scope === 'tokens' && !this.options.ignoreStoredTokens) {
      // The SDK gave up on a refresh (invalid_grant). Another process sharing the vault may have
      // rotated the tokens, spending the refresh token this one held: then the vault's newer
      // tokens are kept, and the SDK's retry refreshes with them instead of asking the person.
      const failed = this.load()?.tokens;
      const current = this.options.store.reload?.(this.options.server);
      if (current?.tokens && !sameTokens(current.tokens, failed)) {
        this.options.onTokens?.(current);
        return;
      }
    }
    if (scope === 'all') {
      this.fresh = undefined;
      this.options.store.remove(this.options.server);
      this.options.onTokens?.(undefined);
      return;
    }
    const record = this.update((r) => {
      if (scope === 'client') {
        delete r.client;
        delete r.redirectUrl;
      } else if (scope === 'tokens') {
        delete r.tokens;
        delete r.tokensAt;
      } else {
        delete r.discovery;
      }
    });
    if (scope === 'tokens') {
      this.fresh = undefined;
      this.options.onTokens?.(record);
    }
  }

  /** The granted scope and expiry of the stored tokens, for the server's status. */
  facts(): { scope: string | null; expires_at: string | null } {
    return tokenFacts(this.options.ignoreStoredTokens ? { tokens: this.fresh } : this.load());
  }

  private secret(value: string): string {
    if (!value.includes('{{secret:')) return value;
    const resolve = this.options.resolveSecret;
    if (!resolve)
      throw new Error(
        `the client_secret of MCP server ${this.options.server} is a vault reference, and Navi has no vault here`,
      );
    return resolve(value);
  }

  private load(): McpOAuthRecord | undefined {
    return this.options.store.load(this.options.server);
  }

  private update(change: (record: McpOAuthRecord) => void): McpOAuthRecord {
    const record: McpOAuthRecord = { ...(this.load() ?? {}) };
    change(record);
    this.options.store.save(this.options.server, record);
    return record;
  }
}

/** Status figures of a record: granted scope and expiry (ISO), when known. */
export function tokenFacts(record: McpOAuthRecord | undefined): {
  scope: string | null;
  expires_at: string | null;
} {
  const tokens = record?.tokens;
  const expiresIn = tokens?.expires_in;
  const expiresAt =
    expiresIn !== undefined && record?.tokensAt !== undefined
      ? new Date(record.tokensAt + expiresIn * 1000).toISOString()
      : null;
  return { scope: tokens?.scope ?? null, expires_at: expiresAt };
}

function sameTokens(a: OAuthTokens, b: OAuthTokens | undefined): boolean {
  return a.access_token === b?.access_token && a.refresh_token === b?.refresh_token;
}
