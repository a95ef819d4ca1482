/** Checks on processes the tests started. */
import { readFileSync } from 'node:fs';

/**
 * Whether `pid` no longer runs. A killed grandchild is re-parented to PID 1, which in some
 * containers never reaps it, so a zombie (or a dying process) counts as gone.
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}
