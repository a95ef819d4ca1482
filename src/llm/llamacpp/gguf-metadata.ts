/**
 * Reads the metadata of a GGUF file (the key-value section at its start) without the runtime:
 * what a model can do is known before node-llama-cpp is installed, and listing or probing a
 * model never loads its weights. Arrays (the vocabulary) are skipped, only their length kept.
 * A file is untrusted input: lengths are checked against the file's size before anything is
 * read, so a damaged or hostile file fails with a message instead of exhausting memory.
 */
import { open } from 'node:fs/promises';

export type GgufScalar = string | number | bigint | boolean;

/** An array value: its element type and length (its elements are not kept). */
export interface GgufArray {
  elementType: number;
  length: number;
}

export interface GgufMetadata {
  version: number;
  tensorCount: bigint;
  values: Map<string, GgufScalar | GgufArray>;
}

export class GgufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufError';
  }
}

const STRING = 8;
const ARRAY = 9;
/** Bytes of each fixed-size value type, by GGUF type id. */
const SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const MAX_KEYS = 1_000_000;
const MAX_STRING = 64 * 1024 * 1024;
const WINDOW = 1024 * 1024;

/** The file's metadata; rejects with `GgufError` when it is not a GGUF file it can read. */
export async function readGgufMetadata(path: string): Promise<GgufMetadata> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const reader = new Reader(handle, size, path);
    const magic = (await reader.bytes(4)).toString('latin1');
    if (magic !== 'GGUF') throw new GgufError(`${path} is not a GGUF file (it does not start with "GGUF")`);
    const version = (await reader.bytes(4)).readUInt32LE();
    if (version < 2 || version > 3)
      throw new GgufError(
        `${path} is GGUF version ${version}; Navi reads versions 2 and 3 (download a newer file)`,
      );
    const tensorCount = await reader.u64();
    const keyCount = await reader.u64();
    if (keyCount > BigInt(MAX_KEYS))
      throw new GgufError(`${path} claims ${keyCount} metadata keys: the file is damaged`);
    const values = new Map<string, GgufScalar | GgufArray>();
    for (let i = 0; i < Number(keyCount); i++) {
      const key = await reader.string();
      const type = (await reader.bytes(4)).readUInt32LE();
      values.set(key, await reader.value(type));
    }
    return { version, tensorCount, values };
  } finally {
    await handle.close();
  }
}

/** A string value, or undefined when the key is missing or holds something else. */
export function ggufString(meta: GgufMetadata, key: string): string | undefined {
  const value = meta.values.get(key);
  return typeof value === 'string' ? value : undefined;
}

/** A whole number value (any integer type), or undefined. */
export function ggufInteger(meta: GgufMetadata, key: string): number | undefined {
  const value = meta.values.get(key);
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

type Handle = Awaited<ReturnType<typeof open>>;

/** Sequential reads through a window of the file. */
class Reader {
  private window = Buffer.alloc(0);
  private windowStart = 0;
  private pos = 0;

  constructor(
    private readonly handle: Handle,
    private readonly size: number,
    private readonly path: string,
  ) {}

  async bytes(n: number): Promise<Buffer> {
    if (this.pos + n > this.size)
      throw new GgufError(`${this.path} ends inside its metadata: the file is cut short`);
    const offset = this.pos - this.windowStart;
    if (offset < 0 || offset + n > this.window.length) {
      const length = Math.min(Math.max(n, WINDOW), this.size - this.pos);
      const buffer = Buffer.alloc(length);
      await this.handle.read(buffer, 0, length, this.pos);
      this.window = buffer;
      this.windowStart = this.pos;
    }
    const start = this.pos - this.windowStart;
    this.pos += n;
    return this.window.subarray(start, start + n);
  }

  skip(n: number): void {
    if (this.pos + n > this.size)
      throw new GgufError(`${this.path} ends inside its metadata: the file is cut short`);
    this.pos += n;
  }

  async u64(): Promise<bigint> {
    return (await this.bytes(8)).readBigUInt64LE();
  }

  async string(): Promise<string> {
    const length = await this.u64();
    if (length > BigInt(MAX_STRING))
      throw new GgufError(`${this.path} has a metadata string of ${length} bytes: the file is damaged`);
    return (await this.bytes(Number(length))).toString('utf8');
  }

  async value(type: number): Promise<GgufScalar | GgufArray> {
    if (type === STRING) return this.string();
    if (type === ARRAY) {
      const elementType = (await this.bytes(4)).readUInt32LE();
      const length = await this.u64();
      if (length > BigInt(this.size))
        throw new GgufError(`${this.path} has an array longer than the file: it is damaged`);
      const count = Number(length);
      const size = SIZES[elementType];
      if (size !== undefined) this.skip(size * count);
      else if (elementType === STRING) for (let i = 0; i < count; i++) this.skip(Number(await this.u64()));
      else for (let i = 0; i < count; i++) await this.value(elementType);
      return { elementType, length: count };
    }
    const size = SIZES[type];
    if (size === undefined) throw new GgufError(`${this.path} has a metadata value of unknown type ${type}`);
    const b = await this.bytes(size);
    switch (type) {
      case 0:
        return b.readUInt8();
      case 1:
        return b.readInt8();
      case 2:
        return b.readUInt16LE();
      case 3:
        return b.readInt16LE();
      case 4:
        return b.readUInt32LE();
      case 5:
        return b.readInt32LE();
      case 6:
        return b.readFloatLE();
      case 7:
        return b.readUInt8() !== 0;
      case 10:
        return b.readBigUInt64LE();
      case 11:
        return b.readBigInt64LE();
      default:
        return b.readDoubleLE();
    }
  }
}
