/**
 * Killing a program together with everything it started. Every program Navi runs is the leader
 * of its own process group (spawned `detached`), so a shell pipeline, a build tool's workers and
 * a `sleep 999 &` all go with one signal to the group.
 */

/**
 * Sends `sig` to the whole group led by `pid`. Returns false when no such group exists any
 * more (it had already exited), which is not an error.
 */
export function killGroup(pid: number | undefined, sig: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    // ESRCH: the group has already exited.
    return false;
  }
}
