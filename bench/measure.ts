/** Figures the bench groups share: a percentile of samples, and a process's CPU time. */
import { readFileSync } from 'node:fs';

/** Linux reports process CPU in clock ticks; 100 per second on every distribution we run on. */
const CLOCK_TICKS = 100;

/** The `p`th percentile of `samples` (nearest rank, rounding down); 0 when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

/** User plus system CPU the process `pid` has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
