/**
 * The output of a long-running program, kept in a ring of fixed size: it may print for days, so
 * only the newest bytes are kept. A reader takes what arrived since its last read and learns how
 * much was overwritten before it came back for it.
 */

export interface RingRead {
  /** New output as UTF-8 (never split inside a character). */
  text: string;
  /** Bytes that arrived after the last read but were overwritten before this one. */
  dropped: number;
  /** Bytes still unread after this one (more than `maxBytes` had arrived). */
  remaining: number;
}

/** Bytes allocated at first; the buffer grows to the capacity only for programs that print that much. */
const INITIAL_BYTES = 16 * 1024;

export class OutputRing {
  private buffer: Buffer;
  /** Bytes ever written; the ring holds the last `min(written, capacity)` of them. */
  private written = 0;
  /** Absolute offset up to which the reader has read. */
  private readTo = 0;

  /** `capacity`: bytes kept, at least 1. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
    this.buffer = Buffer.alloc(Math.min(capacity, INITIAL_BYTES));
  }

  /** Bytes written so far, kept or not. */
  get total(): number {
    return this.written;
  }

  /** Bytes that arrived since the last read, whether still kept or not. */
  get unread(): number {
    return this.written - this.readTo;
  }

  write(chunk: Buffer): void {
    this.growFor(chunk.length);
    // Only the tail of a chunk larger than the ring can survive.
    const part = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    const skipped = chunk.length - part.length;
    let at = (this.written + skipped) % this.capacity;
    let from = 0;
    while (from < part.length) {
      const n = Math.min(part.length - from, this.capacity - at);
      part.copy(this.buffer, at, from, from + n);
      from += n;
      at = (at + n) % this.capacity;
    }
    this.written += chunk.length;
  }

  /** Takes up to `maxBytes` of the output not read yet, oldest first. */
  read(maxBytes: number): RingRead {
    const oldest = Math.max(0, this.written - this.capacity);
    let start = Math.max(this.readTo, oldest);
    // A start inside a character (the ring overwrote its first bytes) skips to the next one.
    while (start < this.written && start > this.readTo && isContinuation(this.byteAt(start))) start++;
    let end = Math.min(this.written, start + Math.max(1, maxBytes));
    // An end inside a character waits for the next read, unless nothing else would fit.
    if (end < this.written) {
      let cut = end;
      while (cut > start && isContinuation(this.byteAt(cut))) cut--;
      if (cut > start) end = cut;
    }
    const dropped = start - this.readTo;
    const text = this.slice(start, end).toString('utf8');
    this.readTo = end;
    return { text, dropped, remaining: this.written - end };
  }

  /**
   * Until the ring first fills, bytes lie at their own offset; a buffer still short of the
   * capacity grows (doubling) before a write would pass its end, so the ring only ever wraps at
   * the full capacity.
   */
  private growFor(incoming: number): void {
    const needed = Math.min(this.capacity, this.written + incoming);
    if (needed <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.min(this.capacity, Math.max(needed, this.buffer.length * 2)));
    this.buffer.copy(grown, 0, 0, this.written);
    this.buffer = grown;
  }

  private byteAt(offset: number): number {
    return this.buffer[offset % this.capacity] as number;
  }

  /** Bytes [start, end) by absolute offset; both must be within the kept window. */
  private slice(start: number, end: number): Buffer {
    if (end <= start) return Buffer.alloc(0);
    const a = start % this.capacity;
    const length = end - start;
    if (a + length <= this.capacity) return Buffer.from(this.buffer.subarray(a, a + length));
    return Buffer.concat([this.buffer.subarray(a), this.buffer.subarray(0, length - (this.capacity - a))]);
  }
}

/** A UTF-8 byte that continues a character (10xxxxxx). */
function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}
