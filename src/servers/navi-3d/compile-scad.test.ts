/**
 * compile_scad with the real OpenSCAD, on a session folder in a temporary directory: the STL
 * it returns, OpenSCAD's own messages, the files it refuses before running, its time limit
 * and cancellation, and every kind of bad input.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult, EmbeddedResource } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { processGone } from '../../../test/support/processes.js';
import { needsProgram } from '../../../test/support/requirements.js';
import { testSettings } from '../../config/settings.js';
import { FILE_NAME_META_KEY, SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { compileScadTool, MAX_CODE_CHARS, stlStem } from './compile-scad.js';
import { createContext } from './context.js';
import { parseStl } from './stl.js';

const SESSION = 'compile-session';
const inSession = { meta: { [SESSION_META_KEY]: SESSION } };
const noSignal = new AbortController().signal;
/** Minutes of CGAL work: a Minkowski sum with a non-convex shape. */
const SLOW_MODEL =
  'minkowski() {\n  difference() { cube(20, center = true); sphere(12, $fn = 48); }\n  sphere(2, $fn = 24);\n}\n';

let root: string;
let files: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-3d-compile-'));
  files = join(root, 'files');
  const session = join(files, SESSION);
  mkdirSync(session, { recursive: true });
  writeFileSync(join(session, 'parts.scad'), 'module bracket(w = 10) { cube([w, 5, 2]); }\n');
  writeFileSync(join(session, 'broken-part.scad'), 'module broken() {\n  cube(1)\n  x = 2;\n}\n');
  writeFileSync(join(session, 'bracket.scad'), 'include <parts.scad>\nbracket(30);\n');
  writeFileSync(join(session, 'notes.txt'), 'not a model\n');
  writeFileSync(join(root, 'outside.scad'), 'cube(99);\n');
  symlinkSync(join(root, 'outside.scad'), join(session, 'linked.scad'));
  writeFileSync(join(session, 'reaches-out.scad'), `include <${join(root, 'outside.scad')}>\n`);
  writeFileSync(join(session, 'includes-it.scad'), 'include <reaches-out.scad>\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function tool(overrides: Record<string, string> = {}, onSpawn?: (pid: number) => void) {
  const settings = testSettings({ SESSION_FILES_DIR: files, ...overrides });
  return compileScadTool(createContext(settings, files, onSpawn));
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function stlOf(result: CallToolResult): { block: EmbeddedResource; data: Buffer } {
  const block = result.content.find((c) => c.type === 'resource') as EmbeddedResource | undefined;
  if (!block || !('blob' in block.resource)) throw new Error(`no STL in: ${text(result)}`);
  return { block, data: Buffer.from(block.resource.blob, 'base64') };
}

describe('compile_scad input', () => {
  it('makes a safe STL name from name or path', () => {
    expect(stlStem(undefined, undefined)).toBe('model');
    expect(stlStem(undefined, 'lib/bracket.scad')).toBe('bracket');
    expect(stlStem('Wall Hook v2.stl', undefined)).toBe('Wall_Hook_v2');
    expect(stlStem('../../etc/passwd', undefined)).toBe('etc_passwd');
    expect(stlStem('.hidden', undefined)).toBe('hidden');
    expect(stlStem('<script>alert(1)</script>', undefined)).toBe('script_alert_1_script');
    expect(stlStem('...', undefined)).toBe('model');
    expect(stlStem('x'.repeat(500), undefined)).toHaveLength(80);
  });

  it('declares its arguments and refuses wrong types and oversized values', () => {
    const schema = z.object(tool().inputSchema);
    expect(schema.safeParse({ code: 'cube(1);', name: 'a' }).success).toBe(true);
    for (const bad of [
      { code: 1 },
      { path: ['a.scad'] },
      { name: {} },
      { code: 'x'.repeat(MAX_CODE_CHARS + 1) },
      { path: 'p'.repeat(2000) },
      { code: 'cube(1);', name: 'n'.repeat(201) },
    ])
      expect(schema.safeParse(bad).success, JSON.stringify(bad).slice(0, 60)).toBe(false);
  });

  it('says what is missing when OpenSCAD is not installed', async () => {
    const result = await tool({ OPENSCAD_PATH: '/nowhere/openscad' }).handler(
      { code: 'cube(1);' },
      noSignal,
      inSession,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /compile_scad cannot run: OpenSCAD is not installed here \(OPENSCAD_PATH is \/nowhere\/openscad.*apt-get install openscad xvfb xauth/,
    );
  });

  it('refuses neither or both of code and path, empty code, and a NUL in it', async () => {
    const compile = tool();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /Give the OpenSCAD source as code, or the name of a \.scad file/],
      [{ code: 'cube(1);', path: 'bracket.scad' }, /Give either code or path, not both/],
      [{ code: '   ' }, /code is empty/],
      [{ code: 'cube(1);\0' }, /NUL character/],
      [{ code: 'x'.repeat(MAX_CODE_CHARS + 1) }, /at most 500000/],
    ];
    for (const [args, message] of cases) {
      const result = await compile.handler(args, noSignal, inSession);
      expect(result.isError, JSON.stringify(args).slice(0, 60)).toBe(true);
      expect(text(result)).toMatch(message);
    }
  });
});

describe.skipIf(!needsProgram('openscad', 'navi-3d compile_scad'))('compile_scad with OpenSCAD', () => {
  it('compiles a cube into a binary STL of 12 triangles with the right bounding box', async () => {
    const result = await tool().handler({ code: 'cube(10);' }, noSignal, inSession);
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toContain('Compiled code.scad into model.stl: 12 triangles.');
    expect(text(result)).toContain('  x: 0 to 10 (size 10)\n  y: 0 to 10 (size 10)\n  z: 0 to 10 (size 10)');
    const { block, data } = stlOf(result);
    expect(block.resource).toMatchObject({ uri: 'navi-3d://files/model.stl', mimeType: 'model/stl' });
    expect(block._meta).toEqual({ [FILE_NAME_META_KEY]: 'model.stl' });
    expect(parseStl(data)).toEqual({
      format: 'binary',
      triangles: 12,
      bounds: { min: [0, 0, 0], max: [10, 10, 10] },
    });
  });

  it('reports a moved, centred box, and names the file as asked', async () => {
    const code = 'translate([5, -2, 1]) cube([4, 6, 8], center = true);';
    const result = await tool().handler({ code, name: 'Block #1' }, noSignal, inSession);
    expect(text(result)).toContain('into Block_1.stl: 12 triangles.');
    expect(text(result)).toContain('  x: 3 to 7 (size 4)\n  y: -5 to 1 (size 6)\n  z: -3 to 5 (size 8)');
    expect(stlOf(result).block._meta).toEqual({ [FILE_NAME_META_KEY]: 'Block_1.stl' });
  });

  it("fails on broken code with OpenSCAD's own message and line", async () => {
    const syntax = await tool().handler({ code: 'cube(10);\nsphere(5;\n' }, noSignal, inSession);
    expect(syntax.isError).toBe(true);
    expect(text(syntax)).toMatch(/OpenSCAD could not compile code\.scad/);
    expect(text(syntax)).toContain('ERROR: Parser error: syntax error in file code.scad, line 2');
    expect(text(syntax)).not.toContain(tmpdir());

    const assertion = await tool().handler(
      { code: 'cube(1);\nassert(1 > 2, "too big");\n' },
      noSignal,
      inSession,
    );
    expect(assertion.isError).toBe(true);
    expect(text(assertion)).toMatch(
      /ERROR: Assertion '\(1 > 2\)' failed: "too big" in file code\.scad, line 2/,
    );
  });

  it("passes OpenSCAD's warnings on with a successful compile", async () => {
    const result = await tool().handler({ code: 'cube(10);\nfoo();\n' }, noSignal, inSession);
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain("WARNING: Ignoring unknown module 'foo' in file code.scad, line 2");
    expect(text(result)).not.toMatch(/CGAL|Geometries in cache|rendering time/);
  });

  it('fails on an empty or a 2D model, saying what to do', async () => {
    const empty = await tool().handler(
      { code: 'module unused() { cube(1); }\nx = 1;\n' },
      noSignal,
      inSession,
    );
    expect(empty.isError).toBe(true);
    expect(text(empty)).toMatch(/The model is empty: .*Call a module at the top level/);
    const flat = await tool().handler({ code: 'square(10);' }, noSignal, inSession);
    expect(flat.isError).toBe(true);
    expect(text(flat)).toMatch(/The model is 2D.*linear_extrude/);
  });

  it('compiles a session file that includes another, named by the session', async () => {
    const result = await tool().handler({ path: 'bracket.scad' }, noSignal, inSession);
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toContain('Compiled bracket.scad into bracket.stl: 12 triangles.');
    expect(text(result)).toContain('  x: 0 to 30 (size 30)');
    const fromCode = await tool().handler({ code: 'use <parts.scad>\nbracket(7);' }, noSignal, inSession);
    expect(text(fromCode)).toContain('  x: 0 to 7 (size 7)');
    const broken = await tool().handler(
      { code: 'include <broken-part.scad>\nbroken();' },
      noSignal,
      inSession,
    );
    expect(broken.isError).toBe(true);
    expect(text(broken)).toContain('syntax error in file broken-part.scad, line 3');
  });

  it('refuses, before running OpenSCAD, files outside the session, links, missing files and computed names', async () => {
    let spawned = 0;
    const compile = tool({}, () => spawned++);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { code: 'include </etc/passwd>\ncube(1);' },
        /line 1: include <\/etc\/passwd> is outside the session's files/,
      ],
      [
        { code: `include\n<${join(root, 'outside.scad')}>\ncube(1);` },
        /line 1: include <.*outside\.scad> is outside the session's files/,
      ],
      [
        { code: `include <x\n${join(root, 'outside.scad')}>\ncube(1);` },
        /line 1: include <x\\n.*outside\.scad> contains control characters/,
      ],
      // A file an import() read first is still checked when another file includes it.
      [
        { code: 'include <includes-it.scad>\nimport("reaches-out.scad");' },
        /reaches-out\.scad line 1: include <.*outside\.scad> is outside the session's files/,
      ],
      [{ code: 'import(file = "../../x.stl");' }, /uses "\.\.", which leaves the session's folder/],
      [{ code: 'include <linked.scad>' }, /linked\.scad is a symbolic link/],
      [
        { code: 'use <missing.scad>\ncube(1);' },
        /use <missing\.scad>: there is no such file among the session's files/,
      ],
      [{ code: 'p = "/etc/hostname";\nsurface(p);' }, /surface\(\) must be given its file as a quoted name/],
      [{ code: 'include <notes.txt>' }, /notes\.txt is not an OpenSCAD source file/],
      [{ code: 'import(filename = "/etc/hostname");' }, /import\(\) of "\/etc\/hostname" is outside/],
      [
        { code: 'f = "/etc/passwd";\nrotate_extrude(f) square(1);' },
        /rotate_extrude\(\): OpenSCAD reads an unnamed first argument as a file name/,
      ],
      [
        { code: 'f = "/etc/passwd";\nlinear_extrude(f) square(1);' },
        /name the height, as in linear_extrude\(height = h\)/,
      ],
      [{ path: '../x.scad' }, /uses "\.\.", which leaves the session's folder/],
      [{ path: '/etc/passwd' }, /is outside the session's files/],
      [{ path: 'linked.scad' }, /linked\.scad is a symbolic link, and navi-3d does not follow links/],
      [{ path: 'nothere.scad' }, /There is no file nothere\.scad among the session's files/],
      [{ path: 'notes.txt' }, /notes\.txt is not a \.scad file/],
      [{ path: 'bracket.scad\0' }, /control characters/],
    ];
    for (const [args, message] of cases) {
      const result = await compile.handler(args, noSignal, inSession);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(text(result)).toMatch(message);
    }
    expect(spawned).toBe(0);
  });

  it('without a session id compiles code alone, and refuses paths and includes saying why', async () => {
    const alone = await tool().handler({ code: 'cube(2);' }, noSignal, { meta: {} });
    expect(alone.isError).toBeFalsy();
    const byPath = await tool().handler({ path: 'bracket.scad' }, noSignal, { meta: {} });
    expect(text(byPath)).toMatch(
      /cannot read "bracket\.scad": This call came without a session id.* Pass the OpenSCAD source itself as code/,
    );
    const included = await tool().handler({ code: 'include <parts.scad>\nbracket();' }, noSignal);
    expect(text(included)).toMatch(/include <parts\.scad>: this call came without a session id/);
    for (const id of ['../compile-session', '', 'a/b', 42, 'x'.repeat(200)]) {
      const hostile = await tool().handler({ code: 'cube(1);' }, noSignal, {
        meta: { [SESSION_META_KEY]: id },
      });
      expect(hostile.isError).toBe(true);
      expect(text(hostile)).toMatch(/is not a plain folder name/);
    }
  });

  it('stops a model that takes too long, killing OpenSCAD', async () => {
    const pids: number[] = [];
    const compile = tool({ OPENSCAD_TIMEOUT_MS: '1000' }, (pid) => pids.push(pid));
    const result = await compile.handler({ code: SLOW_MODEL }, noSignal, inSession);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /OpenSCAD did not finish within 1 s \(OPENSCAD_TIMEOUT_MS\) and was stopped/,
    );
    expect(pids).toHaveLength(1);
    expect(processGone(pids[0]!)).toBe(true);
  });

  it('stops OpenSCAD when the call is cancelled', async () => {
    const cancel = new AbortController();
    const pids: number[] = [];
    const compile = tool({}, (pid) => {
      pids.push(pid);
      // Once the run is under way, as a client's cancellation would arrive.
      queueMicrotask(() => cancel.abort());
    });
    const result = await compile.handler({ code: SLOW_MODEL }, cancel.signal, inSession);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('compile_scad was cancelled; OpenSCAD was stopped.');
    expect(processGone(pids[0]!)).toBe(true);
  });
});
