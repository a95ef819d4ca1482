import { describe, expect, it } from 'vitest';
import { describeStats, formatNumber, parseStl, StlError } from './stl.js';

type Triangle = [number, number, number][];

function binaryStl(triangles: Triangle[], header = 'test model'): Buffer {
  const data = Buffer.alloc(84 + triangles.length * 50);
  data.write(header.slice(0, 80), 0, 'latin1');
  data.writeUInt32LE(triangles.length, 80);
  triangles.forEach((triangle, t) => {
    triangle.forEach((vertex, v) => {
      vertex.forEach((value, axis) => {
        data.writeFloatLE(value, 84 + t * 50 + 12 + v * 12 + axis * 4);
      });
    });
  });
  return data;
}

const TWO: Triangle[] = [
  [
    [0, 0, 0],
    [10, 0, 0],
    [0, 5, 0],
  ],
  [
    [0, 0, 2],
    [-3, 0, 0],
    [0, 5, 7.25],
  ],
];

describe('parseStl', () => {
  it('reads a binary STL: triangle count and bounding box', () => {
    expect(parseStl(binaryStl(TWO))).toEqual({
      format: 'binary',
      triangles: 2,
      bounds: { min: [-3, 0, 0], max: [10, 5, 7.25] },
    });
  });

  it('reads a binary STL whose header starts with "solid", as some programs write', () => {
    expect(parseStl(binaryStl(TWO, 'solid exported by a CAD program')).format).toBe('binary');
  });

  it('reads an ASCII STL', () => {
    const ascii = [
      'solid part',
      '  facet normal 0 0 1',
      '    outer loop',
      '      vertex 0 0 0',
      '      vertex 1.5e1 0 0',
      '      vertex 0 -4 3',
      '    endloop',
      '  endfacet',
      'endsolid part',
    ].join('\n');
    expect(parseStl(Buffer.from(ascii))).toEqual({
      format: 'ascii',
      triangles: 1,
      bounds: { min: [0, -4, 0], max: [15, 0, 3] },
    });
  });

  it('an STL without triangles has no bounding box', () => {
    expect(parseStl(binaryStl([]))).toEqual({ format: 'binary', triangles: 0 });
    expect(parseStl(Buffer.from('solid empty\nendsolid empty\n'))).toEqual({ format: 'ascii', triangles: 0 });
  });

  it('refuses what is not an STL, saying why', () => {
    const cases: Array<[Buffer, RegExp]> = [
      [Buffer.from('hello'), /too short/],
      [Buffer.from('cube(10);\n'.repeat(20)), /not an STL file: a binary STL of \d+ triangles would be/],
      [binaryStl(TWO).subarray(0, 150), /not an STL file/],
      [
        Buffer.from('solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\nendloop\nendfacet\n'),
        /not a vertex of three numbers/,
      ],
      [
        Buffer.from('solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nendloop\nendfacet\n'),
        /1 facets should have 3 vertices/,
      ],
    ];
    for (const [data, message] of cases) {
      expect(() => parseStl(data)).toThrow(StlError);
      expect(() => parseStl(data)).toThrow(message);
    }
    const nan = binaryStl(TWO);
    nan.writeFloatLE(Number.NaN, 84 + 12);
    expect(() => parseStl(nan)).toThrow(/not a finite number/);
  });
});

describe('describeStats', () => {
  it('states the triangle count and each axis with its size, rounded for reading', () => {
    expect(formatNumber(1 / 3)).toBe('0.3333');
    expect(formatNumber(-0.00001)).toBe('0');
    expect(describeStats(parseStl(binaryStl(TWO)))).toEqual([
      '2 triangles.',
      'Bounding box (OpenSCAD units, millimetres by convention):',
      '  x: -3 to 10 (size 13)',
      '  y: 0 to 5 (size 5)',
      '  z: 0 to 7.25 (size 7.25)',
    ]);
  });
});
