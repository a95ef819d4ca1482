/**
 * The soak run's samples and what they say: one line a minute while it runs, and at the end the
 * heap's growth per hour after warm-up, open files, RSS and the errors, with the verdict.
 *
 * The heap figure of a sample is the lowest heap seen over its window (readings every few
 * seconds): V8 collects garbage when it likes, so a single reading mostly measures how long ago
 * the last collection was, while the window's low point is close to the live heap after a
 * collection. Forcing a collection would need a switch in the server that production must not
 * carry, so the low point stands in for it.
 */
import type { ServerMetrics } from '../src/protocol/rest.js';
import { CLIENT_HELD, type FdKinds, fdDifference } from './fds.js';
import { type Tally, TRAFFIC_KINDS, type TrafficKind } from './tally.js';

export interface Sample {
  /** Minutes since the traffic started. */
  minute: number;
  heapMb: number;
  /** Lowest heap of the window this sample closes. */
  heapLowMb: number;
  rssMb: number;
  fds: number | null;
  loopP99Ms: number;
  loopMaxMs: number;
  runs: number;
  sockets: number;
}

/** Goals of docs/performance.md. */
export const HEAP_GROWTH_LIMIT_MB_PER_HOUR = 5;
/** Open files may differ this much between two idle points (a keep-alive socket, a WAL handle). */
export const FD_SLACK = 3;
/** Below this much time after warm-up a slope is noise, so the heap is reported and not judged. */
export const MIN_JUDGED_MINUTES = 20;

const MB = 1024 * 1024;

export function sampleOf(minute: number, m: ServerMetrics, heapLowBytes: number): Sample {
  return {
    minute,
    heapMb: m.heap_used_bytes / MB,
    heapLowMb: Math.min(heapLowBytes, m.heap_used_bytes) / MB,
    rssMb: m.rss_bytes / MB,
    fds: m.open_fds,
    loopP99Ms: m.event_loop_delay_ms.p99,
    loopMaxMs: m.event_loop_delay_ms.max,
    runs: m.active_runs,
    sockets: m.websockets,
  };
}

/** Least-squares slope of y over x; 0 with fewer than two points. */
export function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const f1 = (n: number) => n.toFixed(1);

export function formatSample(s: Sample, done: Partial<Record<TrafficKind, number>>, errors: number): string {
  const minutes = Math.floor(s.minute);
  const seconds = Math.round((s.minute - minutes) * 60);
  const t = `${String(minutes).padStart(3)}:${String(seconds).padStart(2, '0')}`;
  const actions = Object.entries(done)
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return (
    `${t}  heap ${f1(s.heapMb)} MB (low ${f1(s.heapLowMb)})  rss ${f1(s.rssMb)} MB  fds ${s.fds ?? '?'}  ` +
    `loop p99 ${f1(s.loopP99Ms)} ms max ${f1(s.loopMaxMs)}  runs ${s.runs}  sockets ${s.sockets}  ` +
    `errors ${errors}  | ${actions}`
  );
}

/** An idle point: traffic paused, runs ended, sockets closed. */
export interface IdlePoint {
  minute: number;
  heapMb: number;
  rssMb: number;
  fds: number | null;
  /** The open files by kind, where /proc tells. */
  fdKinds?: FdKinds | null;
}

export interface Summary {
  minutes: number;
  warmupMinutes: number;
  samples: Sample[];
  /** Heap growth after warm-up, MB per hour: through the windows' low points, and the readings. */
  heapGrowthMbPerHour: number;
  heapReadingGrowthMbPerHour: number;
  heapJudged: boolean;
  rssGrowthMbPerHour: number;
  warm: IdlePoint;
  end: IdlePoint;
  fdGrowth: number | null;
  /** What the open files that differ are ("+1 socket to the LLM"), or ''. */
  fdChange: string;
  loopP99MaxMs: number;
  counts: Record<TrafficKind, number>;
  busy: number;
  errors: number;
  serverErrors: number;
  problems: string[];
  failures: string[];
}

export function summarize(
  samples: Sample[],
  warmupMinutes: number,
  minutes: number,
  warm: IdlePoint,
  end: IdlePoint,
  tally: Tally,
): Summary {
  const after = samples.filter((s) => s.minute >= warmupMinutes);
  const perHour = (pick: (s: Sample) => number) =>
    slope(after.map((s) => ({ x: s.minute, y: pick(s) }))) * 60;
  const span = after.length > 1 ? after[after.length - 1]!.minute - after[0]!.minute : 0;
  const heapJudged = span >= MIN_JUDGED_MINUTES && after.length >= 3;
  const heapGrowth = perHour((s) => s.heapLowMb);
  // Connections the driver itself keeps open are its choice, not the server's files.
  const held = (p: IdlePoint) => p.fdKinds?.[CLIENT_HELD] ?? 0;
  const fdGrowth =
    warm.fds !== null && end.fds !== null ? end.fds - held(end) - (warm.fds - held(warm)) : null;
  const failures: string[] = [];
  if (heapJudged && heapGrowth > HEAP_GROWTH_LIMIT_MB_PER_HOUR)
    failures.push(
      `heap grows ${f1(heapGrowth)} MB/hour after warm-up (limit ${HEAP_GROWTH_LIMIT_MB_PER_HOUR})`,
    );
  if (fdGrowth !== null && fdGrowth > FD_SLACK)
    failures.push(`open files grew by ${fdGrowth} between idle points (slack ${FD_SLACK})`);
  if (tally.errors > 0) failures.push(`${tally.errors} unexpected error(s)`);
  return {
    minutes,
    warmupMinutes,
    samples,
    heapGrowthMbPerHour: heapGrowth,
    heapReadingGrowthMbPerHour: perHour((s) => s.heapMb),
    heapJudged,
    rssGrowthMbPerHour: perHour((s) => s.rssMb),
    warm,
    end,
    fdGrowth,
    fdChange: warm.fdKinds && end.fdKinds ? fdDifference(warm.fdKinds, end.fdKinds) : '',
    loopP99MaxMs: Math.max(0, ...after.map((s) => s.loopP99Ms)),
    counts: { ...tally.counts },
    busy: tally.busy,
    errors: tally.errors,
    serverErrors: tally.serverErrors,
    problems: [...tally.problems],
    failures,
  };
}

export function formatSummary(s: Summary): string {
  const idle = (p: IdlePoint) =>
    `heap ${f1(p.heapMb)} MB, rss ${f1(p.rssMb)} MB, fds ${p.fds ?? '?'} (minute ${f1(p.minute)})`;
  const lines = [
    '',
    `soak: ${f1(s.minutes)} minutes, warm-up ${f1(s.warmupMinutes)}, ${s.samples.length} samples`,
    `  idle after warm-up: ${idle(s.warm)}`,
    `  idle at the end:    ${idle(s.end)}`,
    `  heap growth after warm-up: ${f1(s.heapGrowthMbPerHour)} MB/hour through the windows' low points` +
      ` (${f1(s.heapReadingGrowthMbPerHour)} through the readings)` +
      (s.heapJudged
        ? `, limit ${HEAP_GROWTH_LIMIT_MB_PER_HOUR}`
        : `, not judged: under ${MIN_JUDGED_MINUTES} minutes after warm-up`),
    `  rss growth after warm-up: ${f1(s.rssGrowthMbPerHour)} MB/hour`,
    `  open files, end minus warm-up (both idle), the connections the driver holds not counted: ${s.fdGrowth ?? '?'} (slack ${FD_SLACK})` +
      (s.fdChange ? `: ${s.fdChange}` : ''),
    `  event-loop delay p99, worst minute after warm-up: ${f1(s.loopP99MaxMs)} ms`,
    `  traffic: ${TRAFFIC_KINDS.map((k) => `${k} ${s.counts[k]}`).join(', ')}; refused as busy (a recall's run) ${s.busy}`,
    `  errors: ${s.errors} (5xx ${s.serverErrors})`,
    ...s.problems.map((p) => `    ${p}`),
    s.failures.length === 0 ? 'soak: PASS' : `soak: FAIL: ${s.failures.join('; ')}`,
  ];
  return lines.join('\n');
}
