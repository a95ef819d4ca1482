/**
 * Why a notice can be believed. Any role that may connect to the database can LISTEN and NOTIFY
 * on the cluster's channel, so a notice proves nothing by parsing. Each one is sealed with an
 * HMAC-SHA256 keyed by the secret in `cluster_secret` (a table only Navi's role reads), over the
 * sender's running count and the body; a member drops every notice whose seal does not verify,
 * and every sealed notice it has already taken (an overheard notice sent again).
 *
 * Sealed payload: `<mac, base64url>.<count>.<body>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** base64url of a SHA-256 MAC. */
const MAC_LENGTH = 43;
/** How far behind the newest count of a sender a notice may arrive (they overtake each other: several connections send them). */
const WINDOW = 10_000;
/** Senders remembered; the oldest is forgotten past this. */
const SENDERS = 1000;

export class NoticeSeal {
  private sent = 0;

  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('the cluster secret is shorter than 32 bytes');
  }

  /** `body` sealed, with the next count of this sender. */
  seal(body: string): string {
    const counted = `${++this.sent}.${body}`;
    return `${this.mac(counted)}.${counted}`;
  }

  /** The count and body of a sealed payload, or undefined when the seal does not verify. */
  open(payload: string): { count: number; body: string } | undefined {
    if (payload.length < MAC_LENGTH + 3 || payload[MAC_LENGTH] !== '.') return undefined;
    const counted = payload.slice(MAC_LENGTH + 1);
    const given = Buffer.from(payload.slice(0, MAC_LENGTH));
    const expected = Buffer.from(this.mac(counted));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const dot = counted.indexOf('.');
    const count = Number(counted.slice(0, dot));
    if (dot < 1 || !Number.isSafeInteger(count) || count < 1) return undefined;
    return { count, body: counted.slice(dot + 1) };
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}

/**
 * The counts taken from each sender, to refuse one taken before. Counts may arrive out of order
 * (a sender's notices go out on several connections), so each sender has a window of recent
 * counts rather than a single high mark; a count older than the window is refused.
 */
export class ReplayWindow {
  private readonly senders = new Map<string, { top: number; seen: Set<number> }>();

  /** Whether `count` of `sender` is new (and remembers it). */
  take(sender: string, count: number): boolean {
    const state = this.senders.get(sender);
    if (!state) {
      this.senders.set(sender, { top: count, seen: new Set([count]) });
      if (this.senders.size > SENDERS) {
        const oldest = this.senders.keys().next().value;
        if (oldest !== undefined) this.senders.delete(oldest);
      }
      return true;
    }
    if (count <= state.top - WINDOW || state.seen.has(count)) return false;
    state.seen.add(count);
    if (count > state.top) {
      state.top = count;
      if (state.seen.size > 2 * WINDOW) {
        for (const old of state.seen) if (old <= count - WINDOW) state.seen.delete(old);
      }
    }
    return true;
  }
}
