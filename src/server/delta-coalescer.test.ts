import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../protocol/events.js';
import { type CoalescerTimers, DeltaCoalescer } from './delta-coalescer.js';

/** Timers the test fires by hand. */
function manualTimers(): CoalescerTimers & { fire(): void; pending(): number } {
  let next = 0;
  const timers = new Map<number, () => void>();
  return {
    setTimeout: (fn) => {
      next += 1;
      timers.set(next, fn);
      return next;
    },
    clearTimeout: (handle) => {
      timers.delete(handle as number);
    },
    fire() {
      const due = [...timers.entries()];
      timers.clear();
      for (const [, fn] of due) fn();
    },
    pending: () => timers.size,
  };
}

const delta = (d: string): AgentEvent => ({ type: 'stream_delta', delta: d });

describe('DeltaCoalescer', () => {
  it('sends the first delta at once and merges the rest until the timer fires', () => {
    const out: AgentEvent[] = [];
    const timers = manualTimers();
    const c = new DeltaCoalescer((e) => out.push(e), 30, timers);
    for (const ch of 'hello') c.push(delta(ch));
    expect(out).toEqual([delta('h')]);
    timers.fire();
    expect(out).toEqual([delta('h'), delta('ello')]);
    timers.fire(); // a quiet window closes the burst
    expect(timers.pending()).toBe(0);
    c.push(delta('!'));
    expect(out.at(-1)).toEqual(delta('!'));
  });

  it('flushes pending text before any other event and between delta kinds', () => {
    const out: AgentEvent[] = [];
    const c = new DeltaCoalescer((e) => out.push(e), 30, manualTimers());
    c.push({ type: 'thinking_delta', delta: 'a' });
    c.push({ type: 'thinking_delta', delta: 'b' });
    c.push({ type: 'thinking_delta', delta: 'c' });
    c.push(delta('x'));
    c.push(delta('y'));
    c.push({ type: 'stream_end', content: 'xy', context_tokens: 1, max_context_tokens: 2 });
    expect(out).toEqual([
      { type: 'thinking_delta', delta: 'a' },
      { type: 'thinking_delta', delta: 'bc' },
      delta('xy'),
      { type: 'stream_end', content: 'xy', context_tokens: 1, max_context_tokens: 2 },
    ]);
  });
});
