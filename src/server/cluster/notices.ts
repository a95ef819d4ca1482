/**
 * What the members of a cluster say to each other through PostgreSQL NOTIFY, on one channel.
 * A payload is at most 8000 bytes, so a notice names things by id and carries events only when
 * they are small; the rest is read from `run_events`. Every notice names its sender (`p`), so a
 * member ignores its own.
 */
import type { ServerEvent } from '../../protocol/events.js';

/** NOTIFY refuses payloads of 8000 bytes or more; what is left is for the envelope. */
export const MAX_NOTICE_BYTES = 7900;

export type Notice =
  /** A run's events `f…l` were written; `e` holds them when they fit; `end` when the run ended. */
  | { k: 'ev'; p: string; s: string; r: string; f: number; l: number; e?: ServerEvent[]; end?: 1 }
  /** An event after the run's end (post-turn compression), stamped with the run's next seq. */
  | { k: 'after'; p: string; s: string; r: string; q: number; e?: ServerEvent }
  /** An event outside any run (a profile changed between runs), for the session's watchers. */
  | { k: 'note'; p: string; s: string; e: ServerEvent }
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
const isEvent = (v: unknown): v is ServerEvent =>
  typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';

/**
 * The notice in `payload`, or undefined when it is not one (anyone who may connect to the
 * database can NOTIFY on the channel; a malformed payload is ignored, never trusted).
 */
export function parseNotice(payload: string): Notice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const n = value as Record<string, unknown>;
  if (!isString(n.p)) return undefined;
  switch (n.k) {
    case 'ev':
      if (!isString(n.s) || !isString(n.r) || !isSeq(n.f) || !isSeq(n.l) || n.l < n.f) return undefined;
      if (n.e !== undefined && (!Array.isArray(n.e) || n.e.length !== n.l - n.f + 1 || !n.e.every(isEvent)))
        return undefined;
      return n as Notice;
    case 'after':
      if (!isString(n.s) || !isString(n.r) || !isSeq(n.q) || (n.e !== undefined && !isEvent(n.e)))
        return undefined;
      return n as Notice;
    case 'note':
      return isString(n.s) && isEvent(n.e) ? (n as Notice) : undefined;
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

/**
 * The `ev` notice of events `first…` as one string, with the events inline when the whole fits
 * (they are already JSON; they are not serialised again).
 */
export function eventsNotice(args: {
  sender: string;
  sessionId: string;
  runId: string;
  first: number;
  events: readonly string[];
  ended: boolean;
}): string {
  const head = JSON.stringify({
    k: 'ev',
    p: args.sender,
    s: args.sessionId,
    r: args.runId,
    f: args.first,
    l: args.first + args.events.length - 1,
    ...(args.ended ? { end: 1 } : {}),
  });
  let size = Buffer.byteLength(head) + 8;
  for (const json of args.events) {
    size += Buffer.byteLength(json) + 1;
    if (size > MAX_NOTICE_BYTES) return head;
  }
  return `${head.slice(0, -1)},"e":[${args.events.join(',')}]}`;
}

/** A notice as one string, dropping `e` when it would not fit. */
export function encodeNotice(notice: Notice): string {
  const text = JSON.stringify(notice);
  if (Buffer.byteLength(text) <= MAX_NOTICE_BYTES) return text;
  if ('e' in notice && notice.k === 'after') {
    const { e: _dropped, ...rest } = notice;
    return JSON.stringify(rest);
  }
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
