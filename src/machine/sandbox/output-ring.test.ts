import { describe, expect, it } from 'vitest';
import { OutputRing } from './output-ring.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('OutputRing', () => {
  it('hands out what arrived since the last read, once', () => {
    const ring = new OutputRing(16);
    ring.write(bytes('one\n'));
    ring.write(bytes('two\n'));
    expect(ring.read(100)).toEqual({ text: 'one\ntwo\n', dropped: 0, remaining: 0 });
    expect(ring.read(100)).toEqual({ text: '', dropped: 0, remaining: 0 });
    ring.write(bytes('three'));
    expect(ring.read(100)).toEqual({ text: 'three', dropped: 0, remaining: 0 });
    expect(ring.total).toBe(13);
  });

  it('keeps the newest bytes across the wrap and counts what was overwritten unread', () => {
    const ring = new OutputRing(10);
    ring.write(bytes('abcdefgh'));
    expect(ring.read(3).text).toBe('abc');
    ring.write(bytes('ijklmnop'));
    // Unread were d…p (13 bytes); the ring holds the last 10: g…p.
    expect(ring.unread).toBe(13);
    expect(ring.read(100)).toEqual({ text: 'ghijklmnop', dropped: 3, remaining: 0 });
  });

  it('keeps only the tail of a chunk larger than the ring', () => {
    const ring = new OutputRing(8);
    ring.write(bytes('0123456789abcdefXYZ'));
    expect(ring.read(100)).toEqual({ text: 'bcdefXYZ', dropped: 11, remaining: 0 });
    ring.write(bytes('0123456789'));
    expect(ring.read(100)).toEqual({ text: '23456789', dropped: 2, remaining: 0 });
  });

  it('caps one read and tells how much is still waiting', () => {
    const ring = new OutputRing(100);
    ring.write(bytes('x'.repeat(50)));
    expect(ring.read(20)).toEqual({ text: 'x'.repeat(20), dropped: 0, remaining: 30 });
    expect(ring.read(20)).toEqual({ text: 'x'.repeat(20), dropped: 0, remaining: 10 });
    expect(ring.read(20)).toEqual({ text: 'x'.repeat(10), dropped: 0, remaining: 0 });
  });

  it('never splits a character, at the end of a capped read or at an overwritten start', () => {
    const ring = new OutputRing(64);
    ring.write(bytes('aé€𝄞b'));
    // 'a' (1) + 'é' (2) + '€' (3) = 6 bytes; a cap of 5 stops before '€'.
    expect(ring.read(5)).toEqual({ text: 'aé', dropped: 0, remaining: 8 });
    expect(ring.read(100)).toEqual({ text: '€𝄞b', dropped: 0, remaining: 0 });

    const small = new OutputRing(5);
    small.write(bytes('ab€cd'));
    small.write(bytes('e'));
    // 8 bytes in all; kept are the last two bytes of '€' and 'cde'. The broken character's
    // remains are skipped and counted as dropped with the three bytes overwritten before it.
    expect(small.read(100)).toEqual({ text: 'cde', dropped: 5, remaining: 0 });
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new OutputRing(0)).toThrow(RangeError);
    expect(() => new OutputRing(1.5)).toThrow(RangeError);
  });
});

describe('OutputRing growth', () => {
  it('grows only as output arrives, and wraps the same way once full', () => {
    const ring = new OutputRing(100_000);
    const text = Array.from({ length: 15_000 }, (_, i) => `line ${i}\n`).join('');
    for (let at = 0; at < text.length; at += 777) ring.write(bytes(text.slice(at, at + 777)));
    const read = ring.read(1_000_000);
    expect(read.dropped).toBeGreaterThan(0);
    expect(read.dropped).toBe(text.length - 100_000);
    expect(read.text).toBe(text.slice(text.length - 100_000));
  });
});
