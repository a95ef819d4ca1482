/**
 * Resolves to `promise`'s value, or to `onAbort` as soon as `signal` aborts: the caller stops
 * waiting while the work goes on (and its late rejection is swallowed, not left unhandled).
 */
export function raceAbort<T, U>(promise: Promise<T>, signal: AbortSignal, onAbort: U): Promise<T | U> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.resolve(onAbort);
  }
  return new Promise<T | U>((resolve, reject) => {
    const abort = () => resolve(onAbort);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}
