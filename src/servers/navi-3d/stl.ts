/**
 * Reading an STL file for its facts: how many triangles, and the box around them. Binary STL
 * (an 80-byte header, a triangle count, then 50 bytes per triangle) is what compile_scad
 * makes; ASCII STL (`solid … facet … vertex x y z …`) is read too, since people upload both.
 * Pure: a buffer in, numbers out.
 */

export type Vec3 = [number, number, number];

export interface StlStats {
  format: 'binary' | 'ascii';
  triangles: number;
  /** Undefined when there are no triangles. */
  bounds?: { min: Vec3; max: Vec3 };
}

/** The buffer is not an STL; the message says what was expected. */
export class StlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StlError';
  }
}

const HEADER_BYTES = 80;
const TRIANGLE_BYTES = 50;

export function parseStl(data: Buffer): StlStats {
  if (data.length >= HEADER_BYTES + 4) {
    const count = data.readUInt32LE(HEADER_BYTES);
    // The size check comes first: some binary files start their header with "solid" too.
    if (data.length === HEADER_BYTES + 4 + count * TRIANGLE_BYTES) return parseBinary(data, count);
  }
  const head = data.subarray(0, 512).toString('latin1').trimStart();
  if (/^solid(\s|$)/i.test(head) && !data.subarray(0, 4096).includes(0))
    return parseAscii(data.toString('latin1'));
  if (data.length >= HEADER_BYTES + 4) {
    const count = data.readUInt32LE(HEADER_BYTES);
    throw new StlError(
      `it is not an STL file: a binary STL of ${count} triangles would be ${HEADER_BYTES + 4 + count * TRIANGLE_BYTES} bytes, this file is ${data.length}, and it does not start with "solid" as an ASCII STL does`,
    );
  }
  throw new StlError(`it is not an STL file: at ${data.length} bytes it is too short for one`);
}

function parseBinary(data: Buffer, count: number): StlStats {
  const box = new Box();
  for (let t = 0; t < count; t++) {
    // Each triangle: a normal (3 floats), three vertices (9 floats), two attribute bytes.
    const base = HEADER_BYTES + 4 + t * TRIANGLE_BYTES + 12;
    for (let v = 0; v < 3; v++) {
      const at = base + v * 12;
      box.add(data.readFloatLE(at), data.readFloatLE(at + 4), data.readFloatLE(at + 8));
    }
  }
  return { format: 'binary', triangles: count, ...box.result() };
}

function parseAscii(text: string): StlStats {
  const box = new Box();
  let vertices = 0;
  const vertex = /vertex\s+(\S+)\s+(\S+)\s+(\S+)/gi;
  for (let m = vertex.exec(text); m; m = vertex.exec(text)) {
    const [x, y, z] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (![x, y, z].every(Number.isFinite))
      throw new StlError(
        `it is not a valid ASCII STL: "${m[0].slice(0, 60)}" is not a vertex of three numbers`,
      );
    box.add(x, y, z);
    vertices++;
  }
  const facets = (text.match(/\bendfacet\b/gi) ?? []).length;
  if (vertices !== facets * 3)
    throw new StlError(
      `it is not a valid ASCII STL: ${facets} facets should have ${facets * 3} vertices, and it has ${vertices}`,
    );
  return { format: 'ascii', triangles: facets, ...box.result() };
}

class Box {
  private readonly min: Vec3 = [Infinity, Infinity, Infinity];
  private readonly max: Vec3 = [-Infinity, -Infinity, -Infinity];
  private any = false;

  add(x: number, y: number, z: number): void {
    if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z))
      throw new StlError(
        'it holds a vertex that is not a finite number (NaN or infinite): the file is damaged',
      );
    this.any = true;
    const p = [x, y, z];
    for (let i = 0; i < 3; i++) {
      this.min[i] = Math.min(this.min[i]!, p[i]!);
      this.max[i] = Math.max(this.max[i]!, p[i]!);
    }
  }

  result(): { bounds?: { min: Vec3; max: Vec3 } } {
    return this.any ? { bounds: { min: this.min, max: this.max } } : {};
  }
}

/** A coordinate as a person reads it: at most 4 decimals, no trailing zeros, no -0. */
export function formatNumber(n: number): string {
  const rounded = Math.round(n * 10_000) / 10_000;
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

/** The lines describing the model's size, for the text of a result. */
export function describeStats(stats: StlStats): string[] {
  const lines = [`${stats.triangles} triangle${stats.triangles === 1 ? '' : 's'}.`];
  if (!stats.bounds) return lines;
  const { min, max } = stats.bounds;
  lines.push('Bounding box (OpenSCAD units, millimetres by convention):');
  for (const [i, axis] of ['x', 'y', 'z'].entries())
    lines.push(
      `  ${axis}: ${formatNumber(min[i]!)} to ${formatNumber(max[i]!)} (size ${formatNumber(max[i]! - min[i]!)})`,
    );
  return lines;
}
