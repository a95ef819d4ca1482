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
  /** Its position among the unnamed arguments; -1 when it is taken by name only. */
  position: number;
  /** The names it may be given by: `file`, and for the import() family `filename` too. */
  names: readonly string[];
  /**
   * linear_extrude: a number in that position is the height, and OpenSCAD reads a file only
   * when the value is a string. A plain number is let through; a computed value could be
   * either, so it is refused like any computed name.
   */
  numberIsHeight?: boolean;
  /** What to say instead when the unnamed argument was probably meant as something else. */
  positionalHint?: string;
}

const IMPORT: FileArgument = { position: 0, names: ['file', 'filename'] };
const LINEAR_EXTRUDE: FileArgument = {
  position: 0,
  names: ['file'],
  numberIsHeight: true,
  positionalHint:
    'OpenSCAD reads a computed unnamed first argument as a file name when it is a string, which navi-3d cannot check before the run: name the height, as in linear_extrude(height = h)',
};
const ROTATE_EXTRUDE: FileArgument = {
  position: 0,
  names: ['file'],
  positionalHint:
    'OpenSCAD reads an unnamed first argument as a file name, even a number, which navi-3d cannot check before the run: name the angle, as in rotate_extrude(angle = 90)',
};

/**
 * Calls that read a file, each checked against OpenSCAD 2021.01 (`filename =` works for the
 * import() family only). Navi checks each name before OpenSCAD runs, so (but for a plain
 * number as linear_extrude's height) it must be a quoted string, not something computed.
 */
export const FILE_READERS: ReadonlyMap<string, FileArgument> = new Map([
  ['import', IMPORT],
  ['import_stl', IMPORT],
  ['import_off', IMPORT],
  ['import_dxf', IMPORT],
  ['surface', { position: 0, names: ['file'] }],
  ['linear_extrude', LINEAR_EXTRUDE],
  ['dxf_linear_extrude', LINEAR_EXTRUDE],
  ['rotate_extrude', ROTATE_EXTRUDE],
  ['dxf_rotate_extrude', ROTATE_EXTRUDE],
  ['dxf_dim', { position: -1, names: ['file'] }],
  ['dxf_cross', { position: -1, names: ['file'] }],
]);
