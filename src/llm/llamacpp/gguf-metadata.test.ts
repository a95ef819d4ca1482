import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHATML_WITH_TOOLS, tinyGguf } from '../../../test/fixtures/tiny-gguf.js';
import { GgufError, ggufInteger, ggufString, readGgufMetadata } from './gguf-metadata.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-gguf-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
const str = (s: string) => Buffer.concat([u64(BigInt(Buffer.byteLength(s))), Buffer.from(s)]);
/** A GGUF header with `keys` raw key-value bytes after it. */
const header = (keyCount: bigint, ...rest: Buffer[]) =>
  Buffer.concat([Buffer.from('GGUF'), u32(3), u64(0n), u64(keyCount), ...rest]);

describe('readGgufMetadata', () => {
  it('reads the scalars and strings of a GGUF file and keeps only the length of arrays', async () => {
    const meta = await readGgufMetadata(file('tiny.gguf', tinyGguf({ contextLength: 4096 })));
    expect(meta.version).toBe(3);
    expect(meta.tensorCount).toBe(12n);
    expect(ggufString(meta, 'general.architecture')).toBe('llama');
    expect(ggufInteger(meta, 'llama.context_length')).toBe(4096);
    expect(ggufString(meta, 'tokenizer.chat_template')).toBe(CHATML_WITH_TOOLS);
    expect(meta.values.get('tokenizer.ggml.add_space_prefix')).toBe(false);
    expect(meta.values.get('llama.attention.layer_norm_rms_epsilon')).toBeCloseTo(1e-5);
    expect(meta.values.get('tokenizer.ggml.tokens')).toEqual({ elementType: 8, length: 274 });
    expect(meta.values.get('tokenizer.ggml.scores')).toEqual({ elementType: 6, length: 274 });
    // Asking for a key of the wrong type answers undefined rather than a wrong value.
    expect(ggufInteger(meta, 'general.architecture')).toBeUndefined();
    expect(ggufString(meta, 'llama.context_length')).toBeUndefined();
  });

  it('reads 64-bit integers, booleans and nested arrays', async () => {
    const meta = await readGgufMetadata(
      file(
        'types.gguf',
        header(
          3n,
          str('a.big'),
          u32(10),
          u64(1n << 40n),
          str('a.flag'),
          u32(7),
          Buffer.from([1]),
          str('a.nested'),
          u32(9),
          u32(9),
          u64(2n),
          ...[0, 1].flatMap(() => [u32(4), u64(2n), u32(1), u32(2)]),
        ),
      ),
    );
    expect(ggufInteger(meta, 'a.big')).toBe(2 ** 40);
    expect(meta.values.get('a.flag')).toBe(true);
    expect(meta.values.get('a.nested')).toEqual({ elementType: 9, length: 2 });
  });

  it.each([
    ['not GGUF (an HTML page saved as .gguf)', '<html>Please sign in</html>', /not a GGUF file/],
    ['an empty file', '', /cut short/],
    ['GGUF version 1', Buffer.concat([Buffer.from('GGUF'), u32(1), Buffer.alloc(16)]), /version 1.*2 and 3/],
    ['absurdly many keys', header(1n << 60n), /claims \d+ metadata keys/],
    ['a string longer than allowed', header(1n, u64(1n << 40n)), /metadata string of \d+ bytes/],
    [
      'an array longer than the file',
      header(1n, str('x'), u32(9), u32(4), u64(1n << 50n)),
      /array longer than the file/,
    ],
    ['a value of unknown type', header(1n, str('x'), u32(99), u32(0)), /unknown type 99/],
    ['a file cut inside its metadata', tinyGguf().subarray(0, 400), /cut short/],
  ])('refuses %s with a GgufError saying what is wrong', async (_what, bytes, message) => {
    const path = file(`bad-${Math.random()}.gguf`, bytes);
    const error = await readGgufMetadata(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GgufError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(path);
  });

  it('rejects a missing file with the file system error', async () => {
    await expect(readGgufMetadata(join(dir, 'nope.gguf'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
