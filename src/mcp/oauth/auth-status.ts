/**
 * Where one HTTP server stands with OAuth, as its status shows it (`McpServerInfo.auth`): never
 * asked (null), waiting for the person, an authorisation page handed out, or authorised. A page
 * left unanswered past its expiry falls back to what was shown before it.
 */
import type { McpAuthInfo } from '../types.js';
import { tokenFacts } from './provider.js';
import type { McpOAuthRecord } from './token-store.js';

export class McpAuthStatus {
  /** The scope the server's last 401/403 asked for, to ask for it when the person authorises. */
  wantedScope: string | undefined;
  private current: McpAuthInfo | null = null;
  /** What was shown before an authorisation page was handed out, and when that page expires. */
  private beforePending: { auth: McpAuthInfo | null; until: number } | undefined;

  get info(): McpAuthInfo | null {
    const before = this.beforePending;
    if (before && this.current?.status === 'pending' && Date.now() >= before.until) {
      this.current = before.auth;
      this.beforePending = undefined;
    }
    return this.current;
  }

  /** The server refused Navi's token; `scope` is what it asked for, when it named one. */
  needsAuthorization(scope: string | undefined): void {
    this.wantedScope = scope;
    this.set({ status: 'needs_authorization', scope: scope ?? null, expires_at: null });
  }

  /** A connect succeeded, with the facts of the tokens it used, or without any. */
  connected(facts: Omit<McpAuthInfo, 'status'> | undefined): void {
    this.wantedScope = undefined;
    this.set(facts ? { status: 'authorized', ...facts } : null);
  }

  /** The provider saved or forgot tokens (refresh, revocation). */
  tokensChanged(record: McpOAuthRecord | undefined): void {
    // A refresh keeps the granted scope: a step-up still waiting for the person stays offered.
    if (record?.tokens && this.wantedScope !== undefined) return;
    if (record?.tokens) this.set({ status: 'authorized', ...tokenFacts(record) });
    else if (this.info) this.set({ status: 'needs_authorization', scope: null, expires_at: null });
  }

  /** An authorisation page was handed out; its callback is awaited until `until`. */
  pending(scope: string | null, until: number): void {
    const previous = this.info;
    const auth = previous?.status === 'pending' ? (this.beforePending?.auth ?? null) : previous;
    this.current = { status: 'pending', scope, expires_at: null };
    this.beforePending = { auth, until };
  }

  /** The person or the authorisation server said no: back to waiting for authorisation. */
  refused(): void {
    this.set({ status: 'needs_authorization', scope: this.wantedScope ?? null, expires_at: null });
  }

  private set(value: McpAuthInfo | null): void {
    this.current = value;
    this.beforePending = undefined;
  }
}
