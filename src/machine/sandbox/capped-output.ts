/**
 * The output of a program, kept up to a byte cap. A program may print without end; what is
 * past the cap is counted, not stored, so a flood costs no memory and the reader learns how much
 * was left out.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes received beyond the cap. */
  dropped = 0;

  /** `max`: bytes kept; must be 0 or more. */
  constructor(private readonly max: number) {}

  /** Keeps what fits of `chunk`; returns false when some of it went past the cap. */
  push(chunk: Buffer): boolean {
    const room = this.max - this.kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
    }
    const over = chunk.length - Math.max(0, room);
    if (over > 0) this.dropped += over;
    return over <= 0;
  }

  /** The kept bytes as UTF-8 (a character cut by the cap becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** `text()` followed by a note of how many bytes were left out, when any were. */
  textWithNote(): string {
    return withDropNote(this.text(), this.dropped);
  }
}

/** Appends a note about dropped bytes to a captured stream. */
export function withDropNote(text: string, dropped: number): string {
  return dropped > 0 ? `${text}\n[… ${dropped} more bytes not shown]` : text;
}
