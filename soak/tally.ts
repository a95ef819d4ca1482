/**
 * What the soak run did and what went wrong, as counters: an hour of traffic keeps a few numbers
 * and the first problems seen, never a list that grows with the run.
 */

/** Every kind of traffic the driver sends; the summary says how many of each ran. */
export const TRAFFIC_KINDS = [
  'session_created',
  'session_deleted',
  'turn_fast',
  'turn_slow',
  'turn_rest',
  'turn_tools',
  'tool_calls',
  'recall_scheduled',
  'recall_fired',
  'stop',
  'reconnect',
  'upload',
  'download',
  'rest_read',
  'page_back',
  'search',
] as const;

export type TrafficKind = (typeof TRAFFIC_KINDS)[number];

/** Problems kept word for word; beyond this only the count grows. */
const KEPT_PROBLEMS = 50;

export class Tally {
  readonly counts = Object.fromEntries(TRAFFIC_KINDS.map((k) => [k, 0])) as Record<TrafficKind, number>;
  /** Requests refused because a recall's run held the session (409 / RUN_ACTIVE): expected. */
  busy = 0;
  errors = 0;
  serverErrors = 0;
  readonly problems: string[] = [];

  add(kind: TrafficKind, n = 1): void {
    this.counts[kind] += n;
  }

  /** An unexpected failure: a 5xx, a wrong answer, a lost or reordered event, an `error` event. */
  error(what: string, status?: number): void {
    this.errors += 1;
    if (status !== undefined && status >= 500) this.serverErrors += 1;
    if (this.problems.length < KEPT_PROBLEMS) this.problems.push(`${new Date().toISOString()} ${what}`);
  }

  /** Counters as they are now, to print the difference over a minute. */
  snapshot(): Record<TrafficKind, number> {
    return { ...this.counts };
  }
}
