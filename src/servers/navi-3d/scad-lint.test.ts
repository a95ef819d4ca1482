/**
 * lint_scad on code with one mistake each, named by line; on clean code; and on code naming
 * files among a real session folder in a temporary directory (links, escapes, missing files).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testSettings } from '../../config/settings.js';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import type { ShippedTool } from '../common/tool.js';
import { MAX_CODE_CHARS } from './compile-scad.js';
import { createContext } from './context.js';
import { lintScadTool } from './lint-scad.js';

const signal = new AbortController().signal;
const SESSION = 'lint-session';

let root: string;
let lint: ShippedTool<{ code: z.ZodString }>;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-3d-lint-'));
  const files = join(root, 'files');
  const session = join(files, SESSION);
  mkdirSync(session, { recursive: true });
  writeFileSync(
    join(session, 'parts.scad'),
    'module bracket(w = 10) { cube([w, 5, 2]); }\nfunction half(x) = x / 2;\n',
  );
  writeFileSync(join(session, 'shapes.scad'), 'module peg() { cylinder(r = 1, h = 4); }\n');
  writeFileSync(join(session, 'part.stl'), 'solid x\nendsolid x\n');
  writeFileSync(join(root, 'outside.scad'), 'module secret() { cube(1); }\n');
  symlinkSync(join(root, 'outside.scad'), join(session, 'linked.scad'));
  mkdirSync(join(root, 'elsewhere'));
  symlinkSync(join(root, 'elsewhere'), join(session, 'dir-link'));
  const settings = testSettings({ SESSION_FILES_DIR: files });
  lint = lintScadTool(createContext(settings, files));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const inSession = { meta: { [SESSION_META_KEY]: SESSION } };

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function problems(
  code: string,
  request: { meta: Record<string, unknown> } = inSession,
): Promise<string[]> {
  const result = await lint.handler({ code }, signal, request);
  expect(result.isError, text(result)).toBeFalsy();
  const out = text(result);
  if (out.startsWith('No problems found')) return [];
  return out.split('\n').filter((line) => /^\S+ line \d+: /.test(line));
}

describe('lint_scad', () => {
  it('passes clean code, with modules, loops, comprehensions, function values and included files', async () => {
    const code = [
      'include <parts.scad>',
      'use <shapes.scad>',
      '$fn = 32;',
      'width = 40; // a comment with ( and [',
      '/* a block comment ] } */',
      'module plate(w, d = 20) {',
      '  difference() {',
      '    cube([w, d, 3]);',
      '    for (i = [0 : 3]) translate([5 + i * 10, d / 2, -1]) cylinder(r = 2, h = 5);',
      '  }',
      '}',
      'double = function (x) x * 2;',
      'xs = [for (i = [1 : 4]) if (i % 2 == 0) let (y = double(i)) y];',
      'label = str("w = (", width, ")");',
      'plate(width);',
      'translate([0, 0, 3]) bracket(half(width));',
      'if (len(xs) > 1) peg(); else sphere(1);',
      'color("red") linear_extrude(height = 2) text(label, size = 4);',
      'import("part.stl");',
    ].join('\n');
    expect(await problems(code)).toEqual([]);
    const result = await lint.handler({ code }, signal, inSession);
    expect(text(result)).toMatch(/^No problems found/);
  });

  it('finds unmatched brackets of each kind, by line, ignoring those in strings and comments', async () => {
    expect(await problems('cube([10, 10, 10);\n')).toEqual([
      "code.scad line 1: ')' closes the '[' opened on line 1, which needs ']'",
    ]);
    expect(await problems('module m() {\n  cube(1);\n\nm();\n')).toEqual([
      "code.scad line 1: '{' is never closed: add '}'",
    ]);
    expect(await problems('echo("(");\ncube(1));\n')).toEqual([
      "code.scad line 2: ')' has no matching '(' before it",
    ]);
    expect(await problems('// (\n/* [ */\necho("{");\nsphere(2;\n')).toEqual([
      "code.scad line 4: '(' is never closed: add ')'",
    ]);
    expect(await problems('cube(1);\necho("never closed);\n')).toEqual([
      'code.scad line 2: this string is never closed: end it with a double quote (")',
    ]);
    expect(await problems('cube(1);\n/* never closed\n')).toEqual([
      'code.scad line 2: this /* comment is never closed: end it with */',
    ]);
  });

  it('finds missing semicolons after calls, assignments and functions, on the line where one belongs', async () => {
    expect(await problems('cube(10)\nsphere(5);\n')).toEqual([
      "code.scad line 1: missing ';' after `cube(…)`: without it the call on line 2 becomes its child, which it ignores",
    ]);
    expect(await problems('x = 5\ny = 6;\ncube(x + y);\n')).toEqual([
      "code.scad line 1: missing ';' at the end of `x = …`",
    ]);
    expect(await problems('function f(x) = x * 2\nfunction g(x) = x;\necho(f(g(1)));\n')).toEqual([
      "code.scad line 1: missing ';' at the end of `function f(…) = …`",
    ]);
    expect(await problems('translate([1, 0, 0])\n  cube(2)\nx = 1;\n')).toEqual([
      "code.scad line 2: missing ';' after `cube(…)`",
    ]);
    expect(await problems('cube(3);\nsphere(1)')).toEqual([
      "code.scad line 2: missing ';' after `sphere(…)`",
    ]);
    // A transformation on its own line before its child is fine.
    expect(
      await problems('translate([0, 0, 5])\n  rotate([0, 90, 0])\n    cylinder(r = 1, h = 3);\n'),
    ).toEqual([]);
  });

  it('finds unknown modules and functions, with a suggestion when one is close', async () => {
    expect(await problems('cub(10);\n')).toEqual([
      'code.scad line 1: unknown module cub(): not an OpenSCAD 2021.01 module, and not defined by the code or a file it includes. Did you mean cube?',
    ]);
    expect(await problems('x = 1;\ny = sqroot(x);\ncube(y);\n')).toEqual([
      'code.scad line 2: unknown function sqroot(): not an OpenSCAD 2021.01 function, and not defined by the code or a file it includes. Did you mean sqrt?',
    ]);
    expect(await problems('h = cube(2);\n')).toEqual([
      'code.scad line 1: unknown function cube(): not an OpenSCAD 2021.01 function, and not defined by the code or a file it includes. cube is a module, not a function: call it as a statement, cube(…);',
    ]);
    // Added in later OpenSCAD versions, so unknown to 2021.01.
    expect(await problems('roof() square(5);\n')).toHaveLength(1);
    // Defined by a file it includes, or by the code itself: known.
    expect(await problems('use <shapes.scad>\npeg();\nmodule mine() { peg(); }\nmine();\n')).toEqual([]);
    expect(await problems('peg();\n')).toEqual([
      'code.scad line 1: unknown module peg(): not an OpenSCAD 2021.01 module, and not defined by the code or a file it includes.',
    ]);
  });

  it('refuses files outside the session folder: absolute, .., links, computed names; and names missing ones', async () => {
    expect(await problems('include </etc/passwd>\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: include <\/etc\/passwd> is outside the session's files/),
    ]);
    expect(await problems('cube(1);\nuse <../other/x.scad>\n')).toEqual([
      expect.stringMatching(
        /^code\.scad line 2: use <\.\.\/other\/x\.scad> uses "\.\.", which leaves the session's folder/,
      ),
    ]);
    expect(await problems('import(file = "../../secret.stl");\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: import\(\) of "\.\.\/\.\.\/secret\.stl" uses "\.\."/),
    ]);
    expect(await problems('include <linked.scad>\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: include <linked\.scad>: .*linked\.scad is a symbolic link/),
    ]);
    expect(await problems('include <dir-link/x.scad>\n')).toEqual([
      expect.stringMatching(/dir-link is a symbolic link, and navi-3d does not follow links/),
    ]);
    expect(await problems('f = "/etc/hostname";\nsurface(f);\n')).toEqual([
      expect.stringMatching(/^code\.scad line 2: surface\(\) must be given its file as a quoted name/),
    ]);
    expect(await problems('import(file = str("/etc/", "passwd"));\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: import\(\) must be given its file as a quoted name/),
    ]);
    // import() still takes the deprecated filename =, and reads the file it names.
    expect(await problems('import(filename = "/etc/passwd");\n')).toEqual([
      expect.stringMatching(
        /^code\.scad line 1: import\(\) of "\/etc\/passwd" is outside the session's files/,
      ),
    ]);
    expect(await problems('import_stl(filename = "../x.stl");\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: import_stl\(\) of "\.\.\/x\.stl" uses "\.\."/),
    ]);
    // An unnamed first argument: a file to rotate_extrude() always, to linear_extrude() when a string.
    expect(await problems('f = "/etc/passwd";\nlinear_extrude(f) square(1);\n')).toEqual([
      'code.scad line 2: linear_extrude(): OpenSCAD reads a computed unnamed first argument as a file name when it is a string, which navi-3d cannot check before the run: name the height, as in linear_extrude(height = h)',
    ]);
    expect(await problems('rotate_extrude(90) translate([5, 0]) square(1);\n')).toEqual([
      expect.stringMatching(
        /^code\.scad line 1: rotate_extrude\(\): OpenSCAD reads an unnamed first argument as a file name, even a number.*name the angle, as in rotate_extrude\(angle = 90\)$/,
      ),
    ]);
    expect(await problems('linear_extrude(10) square(1);\nlinear_extrude(-2) square(1);\n')).toEqual([]);
    expect(await problems('h = 3;\nlinear_extrude(height = h) square(1);\n')).toEqual([]);
    expect(await problems('import("\\x2e\\x2e/secret.stl");\n')).toEqual([
      expect.stringMatching(/without backslash escapes/),
    ]);
    // OpenSCAD takes a line break before the `<` and a name running over lines; so does the check.
    expect(await problems('cube(1);\ninclude\n</etc/passwd>\n')).toEqual([
      expect.stringMatching(/^code\.scad line 2: include <\/etc\/passwd> is outside the session's files/),
    ]);
    expect(await problems('use\r\n  <../x.scad>\n')).toEqual([
      expect.stringMatching(/^code\.scad line 1: use <\.\.\/x\.scad> uses "\.\."/),
    ]);
    expect(await problems('include <x\n/etc/passwd>\ncube(1);\n')).toEqual([
      'code.scad line 1: include <x\\n/etc/passwd> contains control characters; name the file plainly.',
    ]);
    expect(await problems('include <\tparts.scad>\nbracket();\n')).toEqual([]);
    const long = `include <${'./'.repeat(3000)}../x.scad>\n`;
    expect(await problems(long)).toEqual([
      `code.scad line 1: include <${'./'.repeat(40)}…> is 6009 characters long; a path has at most 1024.`,
    ]);
    expect(await problems('cube(1);\ninclude <parts.scad\n')).toEqual([
      'code.scad line 2: this include <… is never closed: end the file name with >, as in include <parts.scad>',
    ]);
    expect(await problems('include <nothere.scad>\n')).toEqual([
      "code.scad line 1: include <nothere.scad>: there is no such file among the session's files. Write it there first, or put its code into this file.",
    ]);
    // Even when the brackets are broken, a call reading a file is found.
    const broken = await problems('import("/etc/passwd");\ncube(1;\n');
    expect(broken).toContain("code.scad line 2: '(' is never closed: add ')'");
    expect(broken.some((p) => /line 1: import\(\) of "\/etc\/passwd" is outside/.test(p))).toBe(true);
    // And when the statement around it is one the parser gives up on.
    const skipped = await problems('if (!echo(1) 0) import("/etc/passwd");\n');
    expect(skipped).toContain("code.scad line 1: expected ')' to close the condition of if, found '0'");
    expect(skipped.some((p) => /line 1: import\(\) of "\/etc\/passwd" is outside/.test(p))).toBe(true);
  });

  it('without a session id, says files cannot be read, and still lints the code', async () => {
    expect(await problems('include <parts.scad>\ncube(1)\nsphere(2);\n', { meta: {} })).toEqual([
      "code.scad line 1: include <parts.scad>: this call came without a session id (Navi sends one), so navi-3d cannot read the session's files",
      "code.scad line 2: missing ';' after `cube(…)`: without it the call on line 3 becomes its child, which it ignores",
    ]);
    const hostile = await problems('include <parts.scad>\n', { meta: { [SESSION_META_KEY]: '../other' } });
    expect(hostile[0]).toMatch(/session id .* is not a plain folder name/);
  });

  it('says where code is nested too deep to read, rather than running out of stack', async () => {
    const tooDeep = [
      'code.scad line 1: the code is nested more than 200 levels deep here; lint reads no deeper',
    ];
    for (const code of [
      `x = ${'('.repeat(100_000)}1${')'.repeat(100_000)};`,
      `x = ${'['.repeat(100_000)}${']'.repeat(100_000)};`,
      `${'{'.repeat(100_000)}${'}'.repeat(100_000)}`,
      `${'if (1) '.repeat(50_000)}cube(1);`,
      `x = [${'each '.repeat(90_000)}[1]];`,
      `x = 1${' ? 1 : 1'.repeat(50_000)};`,
    ])
      expect(await problems(code), code.slice(0, 12)).toEqual(tooDeep);
    // Long chains that need no nesting are read in full.
    expect(await problems(`x = ${'-'.repeat(100_000)}1 ${'^ 2 '.repeat(50_000)};\ncube(x);\n`)).toEqual([]);
    // Ordinary nesting is far from the limit.
    expect(await problems(`x = ${'('.repeat(150)}1${')'.repeat(150)};\ncube(x);\n`)).toEqual([]);
  });

  it('fails only for code it cannot read: empty, with NUL characters, or too long', async () => {
    for (const [code, message] of [
      ['', /code is empty/],
      ['  \n ', /code is empty/],
      ['cube(1);\0', /NUL character/],
      ['x'.repeat(MAX_CODE_CHARS + 1), /lint_scad reads at most/],
    ] as const) {
      const result = await lint.handler({ code }, signal, inSession);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(message);
    }
    const schema = z.object(lint.inputSchema);
    expect(schema.safeParse({ code: 'cube(1);' }).success).toBe(true);
    for (const bad of [
      {},
      { code: 42 },
      { code: null },
      { code: ['cube(1);'] },
      { code: 'x'.repeat(MAX_CODE_CHARS + 1) },
    ])
      expect(schema.safeParse(bad).success).toBe(false);
  });
});
