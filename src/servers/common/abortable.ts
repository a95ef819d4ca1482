/**
 * A cancelled call must answer at once, whatever the work under it is still waiting for (a
 * browser busy under load may take its time to notice a closed page). `untilAborted` settles
 * with the work, or rejects with the signal's reason as soon as it aborts; the work then
 * finishes on its own, its clean-up (`finally`) included, and its outcome is dropped.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
