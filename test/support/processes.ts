/** Checks on processes the tests started. */
import { readdirSync, readFileSync } from 'node:fs';

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

/** Live (not zombie) members of process group `pgid`, read from /proc. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name: state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') members.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

/**
 * Whether nothing of process group `pgid` runs any more: `kill(-pgid, 0)` fails with ESRCH, or
 * only zombies are left (an orphan re-parented to a PID 1 that never reaps stays a zombie).
 */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw err;
  }
  return groupMembers(pgid).length === 0;
}

/** Resolves once `check` holds, polling; the test's own time limit bounds the wait. */
export async function eventually(check: () => boolean | Promise<boolean>, pollMs = 25): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, pollMs));
}

/**
 * The live processes descended from `pid` (children, grandchildren…), with their command names,
 * read from /proc: what a sandbox or a shell started, whatever group or session it moved to.
 */
export function descendants(pid: number): Array<{ pid: number; name: string }> {
  const parents = new Map<number, { parent: number; name: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const match = /^\d+ \((.*)\) (\S) (\d+)/s.exec(stat);
      if (match && match[2] !== 'Z' && match[2] !== 'X')
        parents.set(Number(entry), { parent: Number(match[3]), name: match[1]! });
    } catch {
      // exited meanwhile
    }
  }
  const found: Array<{ pid: number; name: string }> = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const [child, { parent, name }] of parents) {
      if (parent !== current) continue;
      found.push({ pid: child, name });
      queue.push(child);
    }
  }
  return found;
}
