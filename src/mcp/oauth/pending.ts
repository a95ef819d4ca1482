/**
 * Authorisations Navi started and waits to hear back about: the OAuth `state` it sent names
 * one, and ties the callback to its server, PKCE verifier and redirect URI. Kept in memory
 * only (a restart of Navi forgets them; the person presses Connect again), each for
 * PENDING_TTL_MS, each usable once.
 */

export interface PendingAuthorization {
  server: string;
  codeVerifier: string;
  redirectBase: string;
  /** The scope asked for, if any. */
  scope?: string;
  /** Where the server's protected resource metadata was found, when it said. */
  resourceMetadataUrl?: string;
  expiresAt: number;
}

export const PENDING_TTL_MS = 10 * 60_000;
/** More unanswered authorisations than this and the oldest are forgotten. */
const MAX_PENDING = 100;

export class PendingAuthorizations {
  private readonly byState = new Map<string, PendingAuthorization>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Keeps the authorisation `state` names; returns when it expires (ms since the epoch). */
  add(state: string, pending: Omit<PendingAuthorization, 'expiresAt'>): number {
    this.prune();
    // A server has one authorisation in progress: a newer Connect replaces the older one.
    for (const [s, p] of this.byState) if (p.server === pending.server) this.byState.delete(s);
    while (this.byState.size >= MAX_PENDING) {
      const oldest = this.byState.keys().next().value;
      if (oldest === undefined) break;
      this.byState.delete(oldest);
    }
    const expiresAt = this.now() + PENDING_TTL_MS;
    this.byState.set(state, { ...pending, expiresAt });
    return expiresAt;
  }

  /** The authorisation `state` names, removed so it cannot be used twice; undefined if none. */
  take(state: string): PendingAuthorization | undefined {
    this.prune();
    const found = this.byState.get(state);
    this.byState.delete(state);
    return found;
  }

  /** The server's authorisation in progress, if any (for its status). */
  forServer(server: string): PendingAuthorization | undefined {
    this.prune();
    return [...this.byState.values()].find((p) => p.server === server);
  }

  /** Forgets the server's authorisation in progress (revoked, removed). */
  drop(server: string): void {
    for (const [s, p] of this.byState) if (p.server === server) this.byState.delete(s);
  }

  private prune(): void {
    const now = this.now();
    for (const [s, p] of this.byState) if (p.expiresAt <= now) this.byState.delete(s);
  }
}
