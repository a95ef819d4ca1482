/**
 * Who watches which session, across processes: how many sockets watch each session here (told
 * to the others as absolute counts whenever they change), and what the others said of theirs.
 * A run asks it, synchronously, whether anyone elsewhere could answer a tool confirmation.
 *
 * A process that starts (or whose listening connection came back) says hello and everyone
 * repeats their counts to it; one that leaves says bye; one that dies says nothing, and is
 * forgotten at the next sweep that finds its connections gone.
 */
import type { RunSubscriber } from '../run-subscriber.js';
import { type Notice, presenceNotices } from './notices.js';

export class Presence {
  private readonly local = new Map<string, number>();
  private readonly remote = new Map<string, Map<string, number>>();

  constructor(
    private readonly member: string,
    /** Sends notices (in order: a later count must not arrive before an earlier one). */
    private readonly send: (payloads: string[]) => void,
  ) {}

  /** A subscriber started watching here; only sockets are people who can answer. */
  added(sessionId: string, subscriber: RunSubscriber): void {
    if (subscriber.kind !== 'socket') return;
    this.set(sessionId, (this.local.get(sessionId) ?? 0) + 1);
  }

  removed(sessionId: string, subscriber: RunSubscriber): void {
    if (subscriber.kind !== 'socket') return;
    this.set(sessionId, Math.max(0, (this.local.get(sessionId) ?? 0) - 1));
  }

  /** Whether another process said a socket watches the session. */
  watchedElsewhere(sessionId: string): boolean {
    for (const sessions of this.remote.values()) {
      if ((sessions.get(sessionId) ?? 0) > 0) return true;
    }
    return false;
  }

  /** Every count of this process, for a member that said hello (and after reconnecting). */
  announceAll(): void {
    const entries = [...this.local.entries()];
    if (entries.length > 0) this.send(presenceNotices(this.member, entries));
  }

  /** Takes in a presence notice of another member. */
  heard(notice: Extract<Notice, { k: 'presence' }>): void {
    let sessions = this.remote.get(notice.p);
    if (!sessions) {
      sessions = new Map();
      this.remote.set(notice.p, sessions);
    }
    for (const [sessionId, count] of notice.w) {
      if (count > 0) sessions.set(sessionId, count);
      else sessions.delete(sessionId);
    }
    if (sessions.size === 0) this.remote.delete(notice.p);
  }

  /** Forgets a member that left or died. */
  forget(member: string): void {
    this.remote.delete(member);
  }

  /** The members this one has heard watching something. */
  members(): string[] {
    return [...this.remote.keys()];
  }

  private set(sessionId: string, count: number): void {
    if (count > 0) this.local.set(sessionId, count);
    else this.local.delete(sessionId);
    this.send(presenceNotices(this.member, [[sessionId, count]]));
  }
}
