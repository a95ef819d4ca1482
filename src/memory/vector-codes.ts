/**
 * Binary codes of embedding vectors (docs/memory.md#vector-search): one sign bit per dimension,
 * packed into 32-bit words. The Hamming distance between two codes tracks the angle between the
 * vectors closely enough to pick a few hundred candidates out of 100 000, which are then ranked
 * by their exact float cosine distance. A 768-dimension vector takes 96 bytes as a code instead
 * of 3 072 as floats, so every code of a large memory fits in a few megabytes of RAM and is
 * compared with a handful of integer operations.
 */

/** Bytes of the code of a `dimension`-long vector: whole 32-bit words, so it is read as an Int32Array. */
export function codeBytes(dimension: number): number {
  return Math.ceil(dimension / 32) * 4;
}

/** Bit i is set when component i is positive. */
export function binaryCode(vector: Float32Array): Buffer {
  const words = new Int32Array(codeBytes(vector.length) / 4);
  for (let i = 0; i < vector.length; i++) if (vector[i]! > 0) words[i >>> 5]! |= 1 << (i & 31);
  return Buffer.from(words.buffer);
}

/** The code's bytes as words, copied when SQLite's buffer is not 4-byte aligned. */
export function codeWords(code: Buffer | Uint8Array): Int32Array {
  if (code.byteOffset % 4 === 0) return new Int32Array(code.buffer, code.byteOffset, code.byteLength >>> 2);
  return new Int32Array(Uint8Array.from(code).buffer);
}

/** The vector's bytes as stored in `memory_facts.embedding` (a view, not a copy). */
export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A Float32 view of a vector blob, copied when SQLite's buffer is not 4-byte aligned. */
export function asFloats(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength >>> 2);
  return new Float32Array(Uint8Array.from(blob).buffer);
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Sums the four bytes of `x` (each at most 192) without letting one spill into the next. */
function byteSum(x: number): number {
  const pairs = (x & 0x00ff00ff) + ((x >>> 8) & 0x00ff00ff);
  return (pairs & 0xffff) + (pairs >>> 16);
}

/**
 * Bits differing between `words` words of `codes` from `offset` and `query`. Three words share
 * one count per nibble (at most 12) and per byte (at most 24), and eight such groups one
 * per-byte total, so the costly step that adds the bytes up runs once per 24 words instead of
 * once per word: 20 to 40 % less time over 100 000 codes of 384 or 768 bits.
 */
export function hamming(codes: Int32Array, offset: number, query: Int32Array, words: number): number {
  let total = 0;
  let bytes = 0;
  let j = 0;
  for (let group = 1; j + 3 <= words; j += 3, group++) {
    let a = codes[offset + j]! ^ query[j]!;
    let b = codes[offset + j + 1]! ^ query[j + 1]!;
    let c = codes[offset + j + 2]! ^ query[j + 2]!;
    a -= (a >>> 1) & 0x55555555;
    b -= (b >>> 1) & 0x55555555;
    c -= (c >>> 1) & 0x55555555;
    const nibbles =
      (a & 0x33333333) +
      ((a >>> 2) & 0x33333333) +
      (b & 0x33333333) +
      ((b >>> 2) & 0x33333333) +
      (c & 0x33333333) +
      ((c >>> 2) & 0x33333333);
    bytes += (nibbles & 0x0f0f0f0f) + ((nibbles >>> 4) & 0x0f0f0f0f);
    if (group % 8 === 0) {
      total += byteSum(bytes);
      bytes = 0;
    }
  }
  total += byteSum(bytes);
  for (; j < words; j++) total += popcount(codes[offset + j]! ^ query[j]!);
  return total;
}

/**
 * The codes of one (model, dimension), packed in one array. Removing a fact moves the last code
 * into its slot, so the array stays dense and a search never skips holes.
 */
export class CodeSet {
  readonly words: number;
  private ids: Int32Array;
  private codes: Int32Array;
  private size = 0;
  private readonly slotOf = new Map<number, number>();
  private distances = new Uint16Array(0);

  constructor(dimension: number, capacity = 64) {
    this.words = codeBytes(dimension) / 4;
    this.ids = new Int32Array(Math.max(1, capacity));
    this.codes = new Int32Array(Math.max(1, capacity) * this.words);
  }

  get count(): number {
    return this.size;
  }

  put(id: number, code: Int32Array): void {
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      if (this.size === this.ids.length) this.grow();
      slot = this.size++;
      this.slotOf.set(id, slot);
      this.ids[slot] = id;
    }
    this.codes.set(code.subarray(0, this.words), slot * this.words);
  }

  remove(id: number): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.slotOf.delete(id);
    const last = --this.size;
    if (slot !== last) {
      const moved = this.ids[last]!;
      this.ids[slot] = moved;
      this.codes.copyWithin(slot * this.words, last * this.words, (last + 1) * this.words);
      this.slotOf.set(moved, slot);
    }
  }

  /** Every id in the set. */
  all(): number[] {
    return Array.from(this.ids.subarray(0, this.size));
  }

  /**
   * The ids of the `count` codes nearest to `query` by Hamming distance (all of them when the
   * set is smaller): every code is scored, then a histogram of the distances gives the cut-off,
   * so there is no sort of 100 000 entries.
   */
  closest(query: Int32Array, count: number): number[] {
    if (this.size <= count) return this.all();
    const { words, codes, size } = this;
    if (this.distances.length < size) this.distances = new Uint16Array(this.ids.length);
    const distances = this.distances;
    const histogram = new Int32Array(words * 32 + 1);
    for (let i = 0, o = 0; i < size; i++, o += words) {
      const d = hamming(codes, o, query, words);
      distances[i] = d;
      histogram[d]!++;
    }
    let cut = 0;
    let closer = 0;
    while (closer + histogram[cut]! < count) closer += histogram[cut++]!;
    // Codes at the cut-off distance fill the remaining places in slot order: a query whose code
    // says little (a sparse vector) would otherwise tie with thousands of them.
    let atCut = count - closer;
    const out: number[] = [];
    for (let i = 0; i < size; i++) {
      const d = distances[i]!;
      if (d < cut || (d === cut && atCut-- > 0)) out.push(this.ids[i]!);
    }
    return out;
  }

  private grow(): void {
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    const codes = new Int32Array(ids.length * this.words);
    codes.set(this.codes);
    this.ids = ids;
    this.codes = codes;
  }
}

/** Whether `v` has a non-zero component (a zero vector has no direction to compare). */
export function hasLength(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return true;
  return false;
}
