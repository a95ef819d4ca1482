/**
 * Process information is never reachable through a file tool, whatever FS_ALLOWED_PATHS says:
 * /proc/<pid>, /proc/self and /proc/thread-self hold every process's environment (Navi's API
 * keys among them), memory, open files and command line. The terminal shows process
 * information when it is needed. /dev/fd and /dev/std* are refused by name too: they lead
 * into /proc/self.
 *
 * The path rule below is the readable first check. The walk in path-guard.ts applies the same
 * rule to what it actually opened (a procfs root by inode, its entries by name), so a link or
 * a second /proc mount reaching the same place is refused as well.
 */
import { PathRefusedError } from './beneath.js';

const PROCESS_ENTRY = /^(?:\d+|self|thread-self)$/;
const PROCESS_PATH = /^\/proc\/(?:\d+|self|thread-self)(?:\/|$)/;
const FD_PATH = /^\/dev\/(?:fd|stdin|stdout|stderr)(?:\/|$)/;

function refusal(path: string, shown: string): PathRefusedError {
  const via = shown === path ? path : `"${shown}" (${path})`;
  return new PathRefusedError(
    `Access denied: ${via} is process information (environment, memory, open files of a running ` +
      'process); no file tool reads /proc/<pid>, /proc/self, /proc/thread-self or /dev/fd. Use the ' +
      'terminal (ps, top) for process information.',
  );
}

/** Refuses an absolute, normalised path naming a process's entry in /proc or a /dev/fd alias. */
export function assertNotProcessPath(path: string, shown: string = path): void {
  if (PROCESS_PATH.test(path) || FD_PATH.test(path)) throw refusal(path, shown);
}

/** Refuses entry `name` of a procfs root folder when it is a process's folder. */
export function assertNotProcessEntry(name: string, path: string, shown: string = path): void {
  if (PROCESS_ENTRY.test(name)) throw refusal(path, shown);
}
