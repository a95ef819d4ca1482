import { describe, expect, it } from 'vitest';
import { untilAborted } from './abortable.js';

describe('untilAborted', () => {
  it('settles with the work when nothing aborts', async () => {
    const signal = new AbortController().signal;
    await expect(untilAborted(Promise.resolve(7), signal)).resolves.toBe(7);
    await expect(untilAborted(Promise.reject(new Error('broke')), signal)).rejects.toThrow('broke');
  });

  it('rejects as soon as the signal aborts, while the work goes on to its end unheard', async () => {
    const cancel = new AbortController();
    let finished = false;
    let release: () => void = () => undefined;
    const work = new Promise<string>((resolve) => {
      release = () => resolve('late');
    }).finally(() => {
      finished = true;
    });
    const waiting = untilAborted(work, cancel.signal);
    cancel.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(finished).toBe(false);
    release();
    await work;
    expect(finished).toBe(true);
  });

  it('rejects at once for a signal that already aborted, and a late failure of the work is not unhandled', async () => {
    const cancel = new AbortController();
    cancel.abort(new Error('before'));
    let fail: (err: Error) => void = () => undefined;
    const work = new Promise<never>((_, reject) => {
      fail = reject;
    });
    await expect(untilAborted(work, cancel.signal)).rejects.toThrow('before');
    fail(new Error('too late'));
    await expect(work).rejects.toThrow('too late');
  });
});
