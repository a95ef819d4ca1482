import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../protocol/events.js';
import { type CoalescerTimers, DeltaCoalescer, FlushClock } from './delta-coalescer.js';

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
    const c = new DeltaCoalescer((e) => out.push(e), new FlushClock(30, timers));
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
    const c = new DeltaCoalescer((e) => out.push(e), new FlushClock(30, manualTimers()));
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

  it("keeps a thinking delta's turn when merging", () => {
    const out: AgentEvent[] = [];
    const timers = manualTimers();
    const c = new DeltaCoalescer((e) => out.push(e), new FlushClock(30, timers));
    for (const d of ['a', 'b', 'c']) c.push({ type: 'thinking_delta', delta: d, turn: 2 });
    timers.fire();
    expect(out).toEqual([
      { type: 'thinking_delta', delta: 'a', turn: 2 },
      { type: 'thinking_delta', delta: 'bc', turn: 2 },
    ]);
  });
});

describe('FlushClock shared by many coalescers', () => {
  it('runs one timer for all of them, and each still gets every delta in order', () => {
    const timers = manualTimers();
    const clock = new FlushClock(30, timers);
    const outs = Array.from({ length: 50 }, () => [] as AgentEvent[]);
    const coalescers = outs.map((out) => new DeltaCoalescer((e) => out.push(e), clock));
    for (let round = 0; round < 4; round++) {
      for (let token = 0; token < 3; token++) {
        coalescers.forEach((c, i) => {
          c.push(delta(`${i}.${round}.${token} `));
        });
      }
      expect(timers.pending()).toBe(1);
      timers.fire();
    }
    coalescers.forEach((c, i) => {
      c.push({ type: 'stream_end', content: '', context_tokens: 1, max_context_tokens: 2 });
      const text = outs[i]!.map((e) => (e.type === 'stream_delta' ? e.delta : '')).join('');
      const expected = Array.from({ length: 12 }, (_, k) => `${i}.${Math.floor(k / 3)}.${k % 3} `).join('');
      expect(text).toBe(expected);
      expect(outs[i]!.at(-1)?.type).toBe('stream_end');
      // The first delta at once, then one merged frame per window.
      expect(outs[i]!.length).toBe(1 + 4 + 1);
    });
    // Every window closed: the burst after a quiet window goes out at once again.
    timers.fire();
    expect(timers.pending()).toBe(0);
  });

  it('flushes every coalescer at a tick even when one of them throws', () => {
    const timers = manualTimers();
    const clock = new FlushClock(30, timers);
    const out: AgentEvent[] = [];
    let failing = false;
    const a = new DeltaCoalescer((e) => {
      if (failing) throw new Error('subscriber failed');
      out.push(e);
    }, clock);
    const b = new DeltaCoalescer((e) => out.push(e), clock);
    for (const c of [a, b]) c.push(delta('1'));
    for (const c of [a, b]) c.push(delta('2'));
    failing = true;
    expect(() => timers.fire()).toThrow('subscriber failed');
    expect(out).toEqual([delta('1'), delta('1'), delta('2')]);
    // b kept streaming: its window reopened on the clock.
    b.push(delta('3'));
    timers.fire();
    expect(out.at(-1)).toEqual(delta('3'));
  });

  it('stops its timer when the last waiting coalescer is flushed or disposed', () => {
    const timers = manualTimers();
    const clock = new FlushClock(30, timers);
    const a = new DeltaCoalescer(() => {}, clock);
    const b = new DeltaCoalescer(() => {}, clock);
    a.push(delta('x'));
    b.push(delta('y'));
    expect(clock.size).toBe(2);
    a.flush();
    expect(timers.pending()).toBe(1);
    b.dispose();
    expect(clock.size).toBe(0);
    expect(timers.pending()).toBe(0);
    b.push(delta('ignored'));
    expect(timers.pending()).toBe(0);
  });
});
