/** The soak run's verdict: the fit, and each reason it fails. */
import { describe, expect, it } from 'vitest';
import { CLIENT_HELD, fdDifference, fdKinds } from '../../soak/fds.js';
import { FD_SLACK, type IdlePoint, type Sample, slope, summarize } from '../../soak/report.js';
import { Tally } from '../../soak/tally.js';

function samples(minutes: number, heapAt: (minute: number) => number): Sample[] {
  return Array.from({ length: minutes }, (_, i) => ({
    minute: i + 1,
    heapMb: heapAt(i + 1) + 10,
    heapLowMb: heapAt(i + 1),
    rssMb: 150,
    fds: 40,
    loopP99Ms: 5,
    loopMaxMs: 9,
    runs: 1,
    sockets: 12,
  }));
}

const idle = (fds: number | null, minute = 5): IdlePoint => ({ minute, heapMb: 50, rssMb: 150, fds });

describe('soak report', () => {
  it('fits the least-squares slope, and 0 for fewer than two points', () => {
    expect(
      slope([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toBeCloseTo(2);
    expect(
      slope([
        { x: 0, y: 4 },
        { x: 1, y: 2 },
        { x: 2, y: 6 },
        { x: 3, y: 4 },
      ]),
    ).toBeCloseTo(0.4);
    expect(slope([{ x: 1, y: 7 }])).toBe(0);
    expect(
      slope([
        { x: 1, y: 7 },
        { x: 1, y: 9 },
      ]),
    ).toBe(0);
  });

  it('passes a flat heap that only the warm-up raised, whatever the readings do', () => {
    const heap = (m: number) => (m < 5 ? 30 + m * 4 : 50 + (m % 2) * 0.5);
    const s = summarize(samples(60, heap), 5, 60, idle(40), idle(41, 60), new Tally());
    expect(s.heapJudged).toBe(true);
    expect(Math.abs(s.heapGrowthMbPerHour)).toBeLessThan(1);
    expect(s.failures).toEqual([]);
  });

  it('fails a heap that keeps growing after warm-up, naming the rate', () => {
    const s = summarize(
      samples(60, (m) => 50 + m * 0.2),
      5,
      60,
      idle(40),
      idle(40, 60),
      new Tally(),
    );
    expect(s.heapGrowthMbPerHour).toBeCloseTo(12);
    expect(s.failures).toEqual(['heap grows 12.0 MB/hour after warm-up (limit 5)']);
  });

  it('reports but does not judge the heap of a run too short to fit', () => {
    const s = summarize(
      samples(10, (m) => 50 + m),
      2,
      10,
      idle(40),
      idle(40, 10),
      new Tally(),
    );
    expect(s.heapJudged).toBe(false);
    expect(s.heapGrowthMbPerHour).toBeCloseTo(60);
    expect(s.failures).toEqual([]);
  });

  it('fails open files that grew beyond the slack between the idle points, not within it', () => {
    const flat = samples(60, () => 50);
    expect(summarize(flat, 5, 60, idle(40), idle(40 + FD_SLACK, 60), new Tally()).failures).toEqual([]);
    expect(summarize(flat, 5, 60, idle(40), idle(41 + FD_SLACK, 60), new Tally()).failures).toEqual([
      `open files grew by ${FD_SLACK + 1} between idle points (slack ${FD_SLACK})`,
    ]);
    expect(summarize(flat, 5, 60, idle(null), idle(90, 60), new Tally()).fdGrowth).toBeNull();
  });

  it('fails on any unexpected error, keeping the first ones word for word and counting 5xx apart', () => {
    const tally = new Tally();
    tally.error('GET /sessions → 500', 500);
    for (let i = 0; i < 60; i++) tally.error(`run r${i} seq 3 where 2 was due`);
    const s = summarize(
      samples(60, () => 50),
      5,
      60,
      idle(40),
      idle(40, 60),
      tally,
    );
    expect(s.errors).toBe(61);
    expect(s.serverErrors).toBe(1);
    expect(s.problems).toHaveLength(50);
    expect(s.problems[0]).toContain('GET /sessions → 500');
    expect(s.failures).toEqual(['61 unexpected error(s)']);
  });

  it('does not count connections the driver keeps open, and names what else changed', () => {
    const warm = { ...idle(40), fdKinds: { [CLIENT_HELD]: 6, pipe: 10 } };
    const held = { ...idle(44, 60), fdKinds: { [CLIENT_HELD]: 10, pipe: 10 } };
    expect(
      summarize(
        samples(60, () => 50),
        5,
        60,
        warm,
        held,
        new Tally(),
      ).fdGrowth,
    ).toBe(0);
    const leaked = { ...idle(50, 60), fdKinds: { [CLIENT_HELD]: 6, pipe: 20 } };
    const s = summarize(
      samples(60, () => 50),
      5,
      60,
      warm,
      leaked,
      new Tally(),
    );
    expect(s.fdGrowth).toBe(10);
    expect(s.fdChange).toBe('+10 pipe');
    expect(s.failures).toEqual([`open files grew by 10 between idle points (slack ${FD_SLACK})`]);
  });

  it('lists open files by kind from /proc, and the difference between two listings', () => {
    const kinds = fdKinds(process.pid, 1, 2);
    expect(kinds).not.toBeNull();
    expect(Object.values(kinds!).reduce((a, b) => a + b, 0)).toBeGreaterThan(2);
    expect(fdDifference({ a: 1, b: 2 }, { b: 3, c: 1 })).toBe('-1 a, +1 b, +1 c');
    expect(fdDifference({ a: 1 }, { a: 1 })).toBe('');
    expect(fdKinds(2 ** 30, 1, 2)).toBeNull();
  });
});
