import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallLimit, MAX_TIMER_MS } from './call-limit.js';

/** A question to the person whose answer the test gives. */
function question<T>(): { asked: Promise<T>; answer: (value: T) => void; fail: (err: Error) => void } {
  let answer!: (value: T) => void;
  let fail!: (err: Error) => void;
  const asked = new Promise<T>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  return { asked, answer, fail };
}

describe('CallLimit', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts with "timed out" once the limit passes, and says it timed out', () => {
    const limit = new CallLimit(new AbortController().signal, 100);
    vi.advanceTimersByTime(99);
    expect(limit.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limit.signal.aborted).toBe(true);
    expect(limit.timedOut).toBe(true);
    expect((limit.signal.reason as Error).message).toBe('timed out after 100 ms');
  });

  it("forwards the caller's stop with its reason, also one that came before", () => {
    const stop = new AbortController();
    const limit = new CallLimit(stop.signal, 100);
    stop.abort(new Error('stopped by the person'));
    expect(limit.signal.reason).toEqual(new Error('stopped by the person'));
    expect(limit.timedOut).toBe(false);
    const late = new CallLimit(stop.signal, 100);
    expect(late.signal.reason).toEqual(new Error('stopped by the person'));
    limit.end();
    late.end();
  });

  it('aborts with the reason it is given', () => {
    const limit = new CallLimit(new AbortController().signal, 50, (ms) => `over ${ms}`);
    vi.advanceTimersByTime(50);
    expect(limit.signal.reason).toBe('over 50');
  });

  it('waits while a question is open and goes on with the time that was left', async () => {
    const limit = new CallLimit(new AbortController().signal, 100);
    vi.advanceTimersByTime(60);
    const q = question<string>();
    const held = limit.hold(q.asked);
    vi.advanceTimersByTime(10_000);
    expect(limit.signal.aborted).toBe(false);
    q.answer('yes');
    expect(await held).toBe('yes');
    vi.advanceTimersByTime(39);
    expect(limit.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limit.timedOut).toBe(true);
  });

  it('counts open questions: the limit goes on only when the last is settled, failed ones too', async () => {
    const limit = new CallLimit(new AbortController().signal, 100);
    const first = question<number>();
    const second = question<number>();
    const held = [limit.hold(first.asked), limit.hold(second.asked).catch((err: Error) => err.message)];
    vi.advanceTimersByTime(50);
    first.answer(1);
    await held[0];
    vi.advanceTimersByTime(10_000);
    expect(limit.signal.aborted).toBe(false);
    second.fail(new Error('the form could not be shown'));
    expect(await held[1]).toBe('the form could not be shown');
    // The second question was put before any time passed: all of it is left.
    vi.advanceTimersByTime(99);
    expect(limit.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limit.timedOut).toBe(true);
  });

  it('starts no timer again after the call ended, nor after it was stopped', async () => {
    const stop = new AbortController();
    const limit = new CallLimit(stop.signal, 100);
    const q = question<void>();
    const held = limit.hold(q.asked);
    limit.end();
    q.answer();
    await held;
    expect(vi.getTimerCount()).toBe(0);
    stop.abort();
    expect(limit.signal.aborted).toBe(false);

    const stopped = new AbortController();
    const other = new CallLimit(stopped.signal, 100);
    const r = question<void>();
    const heldToo = other.hold(r.asked);
    stopped.abort();
    r.answer();
    await heldToo;
    expect(vi.getTimerCount()).toBe(0);
    expect(other.timedOut).toBe(false);
  });

  it('keeps a limit longer than a Node timer takes from firing at once', () => {
    const limit = new CallLimit(new AbortController().signal, MAX_TIMER_MS * 2);
    vi.advanceTimersByTime(1000);
    expect(limit.signal.aborted).toBe(false);
    limit.end();
  });
});
