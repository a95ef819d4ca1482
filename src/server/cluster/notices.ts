/**
 * What the members of a cluster say to each other through PostgreSQL NOTIFY, on one channel.
 * A notice only names things by id and wakes its receiver: events, of runs and outside them,
 * are read from `run_events`, which only Navi's role can read (anyone who may connect to the
 * database can LISTEN). Notices travel sealed (`notice-seal.ts`); every one names its sender
 * (`p`), so a member ignores its own.
 */

/** NOTIFY refuses payloads of 8000 bytes or more; what is left is for the seal. */
export const MAX_NOTICE_BYTES = 7900;

export type Notice =
  /** A run's events `f…l` were written; `end` when the last of them ends the run. */
  | { k: 'ev'; p: string; s: string; r: string; f: number; l: number; end?: 1 }
  /** An event after the run's end (post-turn compression), written as the run's seq `q`. */
  | { k: 'after'; p: string; s: string; r: string; q: number }
  /** An event outside any run (a profile changed between runs), written as seq 1 of `r`. */
  | { k: 'note'; p: string; s: string; r: string }
  /** How many sockets watch each listed session on `p` now (absolute, so repeating is harmless). */
  | { k: 'presence'; p: string; w: [string, number][] }
  /** `p` (re)joined: everyone tells it who they watch. */
  | { k: 'hello'; p: string }
  /** `p` leaves: forget what it watched. */
  | { k: 'bye'; p: string }
  /** A request to the member `to`, which runs the session's run. */
  | {
      k: 'ctl';
      p: string;
      to: string;
      id: string;
      s: string;
      r: string;
      op: 'stop' | 'answer';
      c?: string;
      a?: boolean;
    }
  /** The answer to request `id`. */
  | { k: 'reply'; p: string; to: string; id: string; ok: boolean };

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;
const isSeq = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;

/**
 * The notice in `body` (a sealed payload's, once its seal verified), or undefined when it is not
 * one: a malformed notice is ignored, never trusted.
 */
export function parseNotice(body: string): Notice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const n = value as Record<string, unknown>;
  if (!isString(n.p)) return undefined;
  switch (n.k) {
    case 'ev':
      if (!isString(n.s) || !isString(n.r) || !isSeq(n.f) || !isSeq(n.l) || n.l < n.f) return undefined;
      return { k: 'ev', p: n.p, s: n.s, r: n.r, f: n.f, l: n.l, ...(n.end === 1 ? { end: 1 } : {}) };
    case 'after':
      return isString(n.s) && isString(n.r) && isSeq(n.q) ? (n as Notice) : undefined;
    case 'note':
      return isString(n.s) && isString(n.r) ? (n as Notice) : undefined;
    case 'presence':
      if (
        !Array.isArray(n.w) ||
        !n.w.every((x) => Array.isArray(x) && isString(x[0]) && Number.isInteger(x[1]) && x[1] >= 0)
      )
        return undefined;
      return n as Notice;
    case 'hello':
    case 'bye':
      return n as Notice;
    case 'ctl':
      if (!isString(n.to) || !isString(n.id) || !isString(n.s) || !isString(n.r)) return undefined;
      if (n.op === 'stop') return n as Notice;
      if (n.op === 'answer' && isString(n.c) && typeof n.a === 'boolean') return n as Notice;
      return undefined;
    case 'reply':
      return isString(n.to) && isString(n.id) && typeof n.ok === 'boolean' ? (n as Notice) : undefined;
    default:
      return undefined;
  }
}

/** A notice as one string. */
export function encodeNotice(notice: Notice): string {
  const text = JSON.stringify(notice);
  if (Buffer.byteLength(text) <= MAX_NOTICE_BYTES) return text;
  throw new Error(
    `a ${notice.k} notice of ${Buffer.byteLength(text)} bytes does not fit in a NOTIFY payload`,
  );
}

/** `presence` notices for `entries`, each within the payload limit. */
export function presenceNotices(sender: string, entries: readonly [string, number][]): string[] {
  const out: string[] = [];
  let batch: [string, number][] = [];
  let size = 64;
  for (const entry of entries) {
    const entrySize = Buffer.byteLength(entry[0]) + 16;
    if (batch.length > 0 && size + entrySize > MAX_NOTICE_BYTES) {
      out.push(JSON.stringify({ k: 'presence', p: sender, w: batch }));
      batch = [];
      size = 64;
    }
    batch.push(entry);
    size += entrySize;
  }
  if (batch.length > 0) out.push(JSON.stringify({ k: 'presence', p: sender, w: batch }));
  return out;
}
