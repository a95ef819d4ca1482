/**
 * The person's side of OAuth for MCP servers (docs/mcp.md#oauth): starting an authorisation
 * (Connect, `navi mcp login`), completing it from the callback, and revoking it. The manager
 * finds the server and reconnects it; this holds the pending authorisations and talks to the
 * SDK's `auth()` and the token store.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import type { McpConnection } from '../connection.js';
import type { HttpServerConfig, McpServerConfig } from '../types.js';
import { PendingAuthorizations } from './pending.js';
import { NaviOAuthProvider, type NaviOAuthProviderOptions } from './provider.js';
import type { McpOAuthRecord, McpTokenStore } from './token-store.js';

/**
 * An authorisation that cannot go on; the message says why and what to do. `status` is the
 * HTTP status a route answers with: 400 bad request or state, 409 already authorised, 502 the
 * server or its authorisation server failed, 503 nowhere to keep tokens (no vault, locked).
 */
export class McpAuthError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 409 | 502 | 503 = 400,
    /** The server concerned, when known. */
    readonly server?: string,
  ) {
    super(message);
    this.name = 'McpAuthError';
  }
}

export interface AuthorizerDeps {
  tokens?: McpTokenStore;
  logger: Logger;
  /** Where a client secret read from the vault is registered, so it is masked if echoed. */
  secrets?: { add(name: string, value: string): void };
  /** The fetch for discovery, registration, token and revocation requests. */
  fetch?: FetchLike;
  /** Bound of a revocation request (best effort). */
  revokeTimeoutMs?: number;
  /** Bound of a discovery, registration or token request. */
  requestTimeoutMs?: number;
}

export interface AuthTarget {
  config: McpServerConfig;
  connection: McpConnection | undefined;
}

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
}

const MAX_QUERY_CHARS = 4096;

export class McpAuthorizer {
  readonly pending = new PendingAuthorizations();
  private readonly log: Logger;

  constructor(private readonly deps: AuthorizerDeps) {
    this.log = deps.logger.child({ component: 'mcp-oauth' });
  }

  /**
   * The provider a connection to `config` uses: only when tokens are stored, since without a
   * token there is nothing to refresh and a 401 simply means the person must authorise.
   */
  connectionProvider(config: HttpServerConfig, connection: McpConnection): NaviOAuthProvider | undefined {
    const store = this.deps.tokens;
    if (!store) return undefined;
    let record: McpOAuthRecord | undefined;
    try {
      record = store.load(config.name);
    } catch (err) {
      this.log.warn({ mcp_server: config.name, err: messageOf(err) }, 'could not read OAuth tokens');
      return undefined;
    }
    if (!record?.tokens) return undefined;
    return this.provider(config, {
      onTokens: (r) => connection.authStatus.tokensChanged(r),
    });
  }

  /**
   * Starts an authorisation: the page where the person authorises Navi. An HTTP server
   * that is ready on stored tokens is already authorised: `reconnect` is tried first for one
   * that holds tokens but is not ready, and McpAuthError 409 says so, unless one of its tools
   * asked for a scope Navi was not granted (step-up).
   */
  async begin(
    target: AuthTarget,
    redirectBase: string,
    reconnect: () => Promise<McpConnection | undefined>,
  ): Promise<{ authorizationUrl: string }> {
    const config = this.httpConfig(target.config);
    const store = this.usableStore(config.name);
    const base = checkRedirectBase(redirectBase);
    let connection = target.connection;
    const stored = this.read(store, config.name);
    // A ready server whose tool asked for a wider scope (step-up) waits for this authorisation.
    if (
      stored?.tokens &&
      connection?.state !== 'needs_auth' &&
      connection?.authStatus.wantedScope === undefined
    ) {
      if (connection?.state !== 'ready') connection = await reconnect();
      if (connection?.state === 'ready')
        throw new McpAuthError(
          `MCP server ${config.name} is already authorised and connected; to authorise again (another account or scope), revoke it first`,
          409,
          config.name,
        );
    }
    const provider = this.provider(config, { redirectBase: base, ignoreStoredTokens: true });
    const scope = connection?.authStatus.wantedScope ?? config.oauth?.scope;
    const resourceMetadataUrl = connection?.lastFailure?.challenge?.resourceMetadata;
    try {
      await auth(provider, {
        serverUrl: config.url,
        ...(scope !== undefined && { scope }),
        ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl: new URL(resourceMetadataUrl) }),
        fetchFn: this.fetch(),
      });
    } catch (err) {
      throw new McpAuthError(
        `could not start authorising Navi at MCP server ${config.name}: ${messageOf(err)}`,
        502,
        config.name,
      );
    }
    const url = provider.authorizationUrl;
    const state = provider.lastState;
    if (!url || !state)
      throw new McpAuthError(`MCP server ${config.name} gave Navi no authorisation page`, 502, config.name);
    const verifier = provider.codeVerifier();
    const asked = url.searchParams.get('scope') ?? undefined;
    const expiresAt = this.pending.add(state, {
      server: config.name,
      codeVerifier: verifier,
      redirectBase: base,
      ...(asked !== undefined && { scope: asked }),
      ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }),
    });
    connection?.authStatus.pending(asked ?? null, expiresAt);
    this.log.info({ mcp_server: config.name }, 'MCP authorisation started');
    return { authorizationUrl: url.href };
  }

  /**
   * Exchanges the callback's code for tokens and stores them; the caller reconnects the
   * server. Throws McpAuthError for a missing, unknown, expired or used state, the
   * authorisation server's error, or a failed exchange.
   */
  async complete(query: CallbackQuery, find: (server: string) => AuthTarget | undefined): Promise<string> {
    for (const [key, value] of Object.entries(query))
      if (value !== undefined && (typeof value !== 'string' || value.length > MAX_QUERY_CHARS))
        throw new McpAuthError(
          `the callback's "${key}" must be a string of at most ${MAX_QUERY_CHARS} characters`,
        );
    if (!query.state)
      throw new McpAuthError(
        'the callback has no "state", so Navi cannot tell which authorisation it answers; press Connect again',
      );
    const pending = this.pending.take(query.state);
    if (!pending)
      throw new McpAuthError(
        'this authorisation is unknown, expired (after 10 minutes) or already completed; press Connect on the MCP servers page to start a new one',
      );
    const server = pending.server;
    const target = find(server);
    if (query.error !== undefined) {
      target?.connection?.authStatus.refused();
      const description = query.error_description ? `: ${query.error_description.slice(0, 300)}` : '';
      throw new McpAuthError(
        `the authorisation server of MCP server ${server} answered ${query.error.slice(0, 100)}${description}; press Connect to try again`,
        400,
        server,
      );
    }
    if (!query.code)
      throw new McpAuthError(
        'the callback has neither a "code" nor an "error"; press Connect again',
        400,
        server,
      );
    if (!target)
      throw new McpAuthError(
        `MCP server ${server} is no longer configured; nothing was authorised`,
        400,
        server,
      );
    const config = this.httpConfig(target.config);
    const provider = this.provider(config, {
      redirectBase: pending.redirectBase,
      ignoreStoredTokens: true,
      codeVerifier: pending.codeVerifier,
    });
    try {
      await auth(provider, {
        serverUrl: config.url,
        authorizationCode: query.code,
        ...(pending.scope !== undefined && { scope: pending.scope }),
        ...(pending.resourceMetadataUrl !== undefined && {
          resourceMetadataUrl: new URL(pending.resourceMetadataUrl),
        }),
        fetchFn: this.fetch(),
      });
    } catch (err) {
      target.connection?.authStatus.refused();
      throw new McpAuthError(
        `MCP server ${server}'s authorisation server did not exchange the code for a token: ${messageOf(err)}; press Connect to try again`,
        502,
        server,
      );
    }
    this.log.info({ mcp_server: server }, 'MCP server authorised');
    return server;
  }

  /**
   * Revokes the stored tokens at the authorisation server when it offers revocation (best
   * effort, bounded), then forgets them. The caller reconnects the server.
   */
  async revoke(target: AuthTarget): Promise<void> {
    const config = this.httpConfig(target.config);
    const store = this.usableStore(config.name);
    this.pending.drop(config.name);
    const record = this.read(store, config.name);
    if (record?.tokens) await this.revokeAtServer(config, record);
    try {
      store.remove(config.name);
    } catch (err) {
      throw new McpAuthError(
        `could not forget the tokens of ${config.name}: ${messageOf(err)}`,
        503,
        config.name,
      );
    }
    target.connection?.authStatus.tokensChanged(undefined);
    this.log.info({ mcp_server: config.name }, 'MCP authorisation revoked');
  }

  private async revokeAtServer(config: HttpServerConfig, record: McpOAuthRecord): Promise<void> {
    // OAuth metadata may name one (RFC 7009); OpenID provider metadata has no such field.
    const metadata = record.discovery?.authorizationServerMetadata;
    const named = metadata && 'revocation_endpoint' in metadata ? metadata.revocation_endpoint : undefined;
    const endpoint = typeof named === 'string' ? named : undefined;
    const client = this.provider(config, {}).clientInformation();
    if (!endpoint || !client || !record.tokens) return;
    const tokens: [string, string][] = [];
    if (record.tokens.refresh_token) tokens.push([record.tokens.refresh_token, 'refresh_token']);
    tokens.push([record.tokens.access_token, 'access_token']);
    for (const [token, hint] of tokens) {
      const body = new URLSearchParams({ token, token_type_hint: hint, client_id: client.client_id });
      if (client.client_secret) body.set('client_secret', client.client_secret);
      try {
        const response = await this.fetch()(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
          signal: AbortSignal.timeout(this.deps.revokeTimeoutMs ?? 5000),
        });
        await response.body?.cancel();
        if (!response.ok)
          this.log.warn({ mcp_server: config.name, status: response.status }, 'token revocation refused');
      } catch (err) {
        this.log.warn({ mcp_server: config.name, err: messageOf(err) }, 'token revocation failed');
      }
    }
  }

  private provider(
    config: HttpServerConfig,
    options: Partial<
      Pick<NaviOAuthProviderOptions, 'redirectBase' | 'ignoreStoredTokens' | 'codeVerifier' | 'onTokens'>
    >,
  ): NaviOAuthProvider {
    const store = this.deps.tokens;
    if (!store) throw new McpAuthError(NO_STORE, 503, config.name);
    return new NaviOAuthProvider({
      server: config.name,
      ...(config.oauth && { config: config.oauth }),
      store,
      ...options,
      resolveSecret: (reference) => {
        if (!store.resolveReference)
          throw new Error(
            `the client_secret of ${config.name} is a vault reference, and Navi has no vault here`,
          );
        const value = store.resolveReference(reference, `OAuth client secret of MCP server ${config.name}`);
        this.deps.secrets?.add(`${config.name}.oauth.client_secret`, value);
        return value;
      },
    });
  }

  private httpConfig(config: McpServerConfig): HttpServerConfig {
    if (config.transport !== 'http')
      throw new McpAuthError(
        `MCP server ${config.name} runs as a local program (stdio); OAuth is only for servers reached by URL (Streamable HTTP)`,
        400,
        config.name,
      );
    return config;
  }

  private usableStore(server: string): McpTokenStore {
    const store = this.deps.tokens;
    if (!store) throw new McpAuthError(NO_STORE, 503, server);
    try {
      store.assertUsable?.();
    } catch (err) {
      throw new McpAuthError(`${messageOf(err)}, then try again`, 503, server);
    }
    return store;
  }

  private read(store: McpTokenStore, server: string): McpOAuthRecord | undefined {
    try {
      return store.load(server);
    } catch (err) {
      throw new McpAuthError(`${messageOf(err)}, then try again`, 503, server);
    }
  }

  private fetch(): FetchLike {
    const base = this.deps.fetch ?? fetch;
    const limit = this.deps.requestTimeoutMs ?? 30_000;
    // Each request is bounded: an authorisation server that never answers fails the attempt.
    return (url, init) => base(url, { ...init, signal: init?.signal ?? AbortSignal.timeout(limit) });
  }
}

const NO_STORE =
  'Navi has no vault to keep OAuth tokens in here, so it cannot authorise at MCP servers; run it with its vault (navi serve)';

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The origin Navi is reached at: an http(s) URL without query or fragment, no trailing slash. */
function checkRedirectBase(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new McpAuthError(
      `redirect base ${JSON.stringify(value.slice(0, 100))} is not a URL; give the origin Navi is reached at, such as http://127.0.0.1:8000`,
    );
  }
  if (!/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password)
    throw new McpAuthError(
      `redirect base ${JSON.stringify(value.slice(0, 100))} must be an http(s) origin (optionally with a path) without query, fragment or credentials`,
    );
  return url.href.replace(/\/+$/, '');
}
