/**
 * The modules and functions OpenSCAD 2021.01 knows without a definition, checked against that
 * version (each name below is accepted by it; `roof`, `object` and `textmetrics` came later and
 * are not). Lint calls anything else unknown unless the code or a file it includes defines it.
 */

export const BUILTIN_MODULES: ReadonlySet<string> = new Set([
  // 3D and 2D shapes
  'cube',
  'sphere',
  'cylinder',
  'polyhedron',
  'square',
  'circle',
  'polygon',
  'text',
  'import',
  'surface',
  // extrusion and projection
  'linear_extrude',
  'rotate_extrude',
  'projection',
  // transformations
  'translate',
  'rotate',
  'scale',
  'resize',
  'mirror',
  'multmatrix',
  'color',
  'offset',
  'hull',
  'minkowski',
  // booleans and the rest
  'union',
  'difference',
  'intersection',
  'render',
  'children',
  'echo',
  'assert',
  'for',
  'intersection_for',
  'let',
  'group',
  // deprecated in 2021.01, still accepted
  'child',
  'assign',
  'import_stl',
  'import_off',
  'import_dxf',
  'dxf_linear_extrude',
  'dxf_rotate_extrude',
]);

export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set([
  'abs',
  'sign',
  'sin',
  'cos',
  'tan',
  'asin',
  'acos',
  'atan',
  'atan2',
  'floor',
  'round',
  'ceil',
  'ln',
  'log',
  'pow',
  'sqrt',
  'exp',
  'len',
  'min',
  'max',
  'norm',
  'cross',
  'concat',
  'lookup',
  'str',
  'chr',
  'ord',
  'search',
  'version',
  'version_num',
  'parent_module',
  'rands',
  'is_undef',
  'is_bool',
  'is_num',
  'is_string',
  'is_list',
  'is_function',
  'dxf_dim',
  'dxf_cross',
  'assert',
  'echo',
  'let',
]);

/**
 * Shapes that take no children: `cube(10)` followed by another call is almost always a
 * forgotten `;` (OpenSCAD reads the next call as the cube's child and only warns).
 */
export const CHILDLESS_MODULES: ReadonlySet<string> = new Set([
  'cube',
  'sphere',
  'cylinder',
  'polyhedron',
  'square',
  'circle',
  'polygon',
  'text',
  'import',
  'surface',
  'import_stl',
  'import_off',
  'import_dxf',
  'dxf_linear_extrude',
  'dxf_rotate_extrude',
]);

/** Where a call that reads a file takes the file's name. */
export interface FileArgument {
  /** Its position when given without `file=`; -1 when it is taken by name only. */
  position: number;
  /**
   * Whether the positional argument is often not a file at all (`linear_extrude(10)` is a
   * height): then only a quoted name there is checked, and any other value is let through.
   */
  positionalMayBeOther?: boolean;
}

/**
 * Calls that read a file. Navi checks each name before OpenSCAD runs, so (apart from the
 * exception above) the name must be a quoted string, not something computed.
 */
export const FILE_READERS: ReadonlyMap<string, FileArgument> = new Map([
  ['import', { position: 0 }],
  ['surface', { position: 0 }],
  ['import_stl', { position: 0 }],
  ['import_off', { position: 0 }],
  ['import_dxf', { position: 0 }],
  ['dxf_linear_extrude', { position: 0 }],
  ['dxf_rotate_extrude', { position: 0 }],
  ['linear_extrude', { position: 0, positionalMayBeOther: true }],
  ['rotate_extrude', { position: 0, positionalMayBeOther: true }],
  ['dxf_dim', { position: -1 }],
  ['dxf_cross', { position: -1 }],
]);
