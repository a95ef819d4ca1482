/**
 * OpenSCAD inside bubblewrap, with the real OpenSCAD and bwrap. The runner is called directly
 * with code naming files outside the session, as if navi-3d's own check had been bypassed: run
 * directly OpenSCAD reads them (so each case can fail), sandboxed it cannot. Then what a
 * sandboxed program sees, the tools compiling and rendering sandboxed, a cancelled run taking
 * OpenSCAD with it, and NAVI_SANDBOX's three modes.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult, EmbeddedResource, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descendants, eventually, processGone } from '../../../test/support/processes.js';
import { findProgram, needsProgram, requireAll } from '../../../test/support/requirements.js';
import { testSettings } from '../../config/settings.js';
import { probeBwrap } from '../../machine/sandbox/bwrap.js';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { compileScadTool } from './compile-scad.js';
import { type ContextOptions, createContext, type Navi3dContext } from './context.js';
import { createWorkspace, runOpenscad } from './openscad.js';
import { type Confinement, sandboxedOpenscad } from './openscad-sandbox.js';
import { renderStlTool } from './render-stl.js';
import { parseStl } from './stl.js';

const SESSION = 'sandbox-session';
const inSession = { meta: { [SESSION_META_KEY]: SESSION } };
const noSignal = new AbortController().signal;
/** Minutes of CGAL work: a Minkowski sum with a non-convex shape. */
const SLOW_MODEL =
  'minkowski() {\n  difference() { cube(20, center = true); sphere(12, $fn = 48); }\n  sphere(2, $fn = 24);\n}\n';

async function bwrapWorks(): Promise<boolean> {
  if (!needsProgram('bwrap', 'navi-3d sandbox')) return false;
  const probe = await probeBwrap();
  if (probe.available) return true;
  const reason = `navi-3d sandbox: ${probe.reason}`;
  if (requireAll) throw new Error(`${reason}, and NAVI_REQUIRE_ALL=1 forbids skipping`);
  process.stderr.write(`SKIP ${reason}\n`);
  return false;
}
const sandboxed = (await bwrapWorks()) && needsProgram('openscad', 'navi-3d sandbox');
const OPENSCAD = findProgram('openscad') ?? 'openscad';
const BWRAP: Confinement = { use: 'bwrap', bwrapPath: findProgram('bwrap') ?? 'bwrap' };
const DIRECT: Confinement = { use: 'direct' };

let root: string;
let files: string;
let host: string;
const contexts: Navi3dContext[] = [];

/** A tetrahedron: 4 facets, as OpenSCAD imports it. */
const TETRAHEDRON = [
  'solid t',
  ...[
    ['0 0 0', '1 0 0', '0 1 0'],
    ['0 0 0', '0 1 0', '0 0 1'],
    ['0 0 0', '0 0 1', '1 0 0'],
    ['1 0 0', '0 0 1', '0 1 0'],
  ].map(
    (v) => `facet normal 0 0 0\nouter loop\n${v.map((p) => `vertex ${p}`).join('\n')}\nendloop\nendfacet`,
  ),
  'endsolid t',
].join('\n');

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-3d-sandbox-'));
  files = join(root, 'files');
  host = join(root, 'host');
  mkdirSync(join(files, SESSION), { recursive: true });
  mkdirSync(host);
  // Files on the host, outside anything OpenSCAD should see: one beside, one in a session.
  writeFileSync(join(host, 'part.scad'), 'module secret() { cube(7); }\n');
  writeFileSync(join(host, 'shape.stl'), TETRAHEDRON);
  writeFileSync(join(files, SESSION, 'private.scad'), 'module private() { cube(3); }\n');
  // A stand-in OpenSCAD that says what it can see and do.
  writeFileSync(
    join(root, 'look-around'),
    [
      '#!/bin/sh',
      'echo "root: $(ls -A / | tr "\\n" " ")"',
      'echo "etc: $(ls -A /etc | tr "\\n" " ")"',
      'echo "tmp: $(ls -A /tmp | tr "\\n" " ")"',
      `echo "beside: $(ls -A ${root} | tr "\\n" " ")"`,
      'echo "network: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" " ")"',
      // In a PID namespace of its own, the shell is the child of bwrap's init, process 1.
      'echo "pid: $$"',
      'cat /etc/passwd >/dev/null 2>&1 && echo "passwd: read" || echo "passwd: unreadable"',
      'touch /usr/navi-probe 2>/dev/null && echo "usr: written" || echo "usr: read-only"',
      'touch "$OPENSCADPATH/../out/probe" && echo "work: written" || echo "work: read-only"',
      '',
    ].join('\n'),
  );
  chmodSync(join(root, 'look-around'), 0o755);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.display.close()));
  rmSync(root, { recursive: true, force: true });
});

function context(
  overrides: Record<string, string> = {},
  onSpawn?: (pid: number) => void,
  options?: ContextOptions,
): Navi3dContext {
  const made = createContext(
    testSettings({ SESSION_FILES_DIR: files, ...overrides }),
    files,
    onSpawn,
    options,
  );
  contexts.push(made);
  return made;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** The program name of a process that has just been spawned (exec has happened by then). */
const programOf = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();

/** Compiles `code` with the low-level runner: no check of the file names in it. */
async function compileUnchecked(code: string, confinement: Confinement, program = OPENSCAD) {
  const workspace = await createWorkspace();
  try {
    await workspace.stage(new Map([['code.scad', code]]));
    const output = join(workspace.out, 'model.stl');
    const run = await runOpenscad({
      program,
      workspace,
      args: ['-o', output, '--export-format', 'binstl', join(workspace.src, 'code.scad')],
      timeoutMs: 60_000,
      signal: noSignal,
      confinement,
    });
    const stl = await readFile(output).catch(() => undefined);
    return { run, said: `${run.stderr}\n${run.stdout}`, triangles: stl ? parseStl(stl).triangles : 0 };
  } finally {
    await workspace.remove();
  }
}

describe('the bwrap command line for OpenSCAD', () => {
  it('shows system folders, fonts, the work folder and the screen, never /etc, a home or the network', () => {
    const work = join(root, 'work');
    const cookie = join(root, 'x', 'Xauthority');
    mkdirSync(work, { recursive: true });
    mkdirSync(join(root, 'x'), { recursive: true });
    writeFileSync(cookie, '');
    const { command, args } = sandboxedOpenscad('/usr/bin/bwrap', {
      program: '/bin/sh',
      workspace: work,
      cwd: join(work, 'src'),
      env: { HOME: join(work, 'home') },
      display: { display: ':4242', xauthority: cookie },
    });
    expect(command).toBe('/usr/bin/bwrap');
    const line = args.join(' ');
    for (const part of [
      '--unshare-net',
      '--unshare-pid',
      '--die-with-parent',
      '--cap-drop ALL',
      '--clearenv',
      `--bind ${work} ${work}`,
      '--ro-bind /etc/fonts /etc/fonts',
      `--ro-bind ${cookie} ${cookie}`,
      '--remount-ro /',
      `--chdir ${join(work, 'src')} --`,
    ])
      expect(line).toContain(part);
    // No /etc as a whole, no home, nothing of the folders around the work folder; a screen that
    // does not exist is not mounted; the program stays in bwrap's process group.
    expect(line).not.toMatch(/--(ro-)?bind \/(etc|home|root) |X4242|--new-session/);
    expect(line).not.toContain(`--ro-bind ${root} `);
    // The program runs by its real path; inside /usr it needs no mount of its own.
    expect(args.at(-1)).toBe(realpathSync('/bin/sh'));
    expect(line).not.toContain(`--ro-bind ${realpathSync('/bin/sh')}`);

    const outside = sandboxedOpenscad('/usr/bin/bwrap', {
      program: join(root, 'look-around'),
      workspace: work,
      cwd: work,
      env: {},
    });
    expect(outside.args.join(' ')).toContain(
      `--ro-bind ${join(root, 'look-around')} ${join(root, 'look-around')}`,
    );
    expect(outside.args.join(' ')).not.toContain(cookie);
  });
});

describe.skipIf(!sandboxed)('OpenSCAD in the sandbox', () => {
  const cases: Array<{ what: string; code: () => string; direct: RegExp | number; inside: RegExp }> = [
    {
      what: 'an include of a file beside the session',
      code: () => `include <${join(host, 'part.scad')}>\nsecret();\n`,
      direct: 12,
      inside: /WARNING: Can't open include file '.*part\.scad'/,
    },
    {
      what: 'a use of a file beside the session',
      code: () => `use <${join(host, 'part.scad')}>\nsecret();\n`,
      direct: 12,
      inside: /WARNING: Can't open library '.*part\.scad'/,
    },
    {
      what: 'an import of an STL beside the session',
      code: () => `import("${join(host, 'shape.stl')}");\n`,
      direct: 4,
      inside: /WARNING: Can't open import file '.*shape\.stl'/,
    },
    {
      what: "an include from the session's own folder by its absolute path",
      code: () => `include <${join(files, SESSION, 'private.scad')}>\nprivate();\n`,
      direct: 12,
      inside: /WARNING: Can't open include file '.*private\.scad'/,
    },
    {
      what: 'an include of /etc/passwd',
      code: () => 'include </etc/passwd>\n',
      direct: /ERROR: Parser error: syntax error in file .*etc\/passwd, line 1/,
      inside: /WARNING: Can't open include file '\/etc\/passwd'/,
    },
  ];

  it.each(cases)('reads $what directly, and not in the sandbox', async ({ code, direct, inside }) => {
    const plain = await compileUnchecked(code(), DIRECT);
    if (typeof direct === 'number') {
      expect(plain.run.exitCode, plain.said).toBe(0);
      expect(plain.triangles).toBe(direct);
    } else expect(plain.said).toMatch(direct);

    const boxed = await compileUnchecked(code(), BWRAP);
    expect(boxed.said).toMatch(inside);
    expect(boxed.triangles).toBe(0);
  });

  it('lets the program see only system folders, fonts and its work folder, with no network', async () => {
    const { run } = await compileUnchecked('cube(1);', BWRAP, join(root, 'look-around'));
    const said = Object.fromEntries(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const names = (key: string) => (said[key] ?? '').split(' ').filter(Boolean).sort();
    const system = [
      'bin',
      'sbin',
      'lib',
      'lib32',
      'lib64',
      'libx32',
      'usr',
      'etc',
      'var',
      'dev',
      'proc',
      'tmp',
    ];
    expect(names('root').filter((n) => !system.includes(n))).toEqual([]);
    expect(names('root')).toEqual(expect.arrayContaining(['usr', 'etc', 'tmp', 'proc']));
    expect(names('etc').every((n) => ['alternatives', 'fonts', 'ld.so.cache'].includes(n))).toBe(true);
    expect(names('etc')).toContain('fonts');
    // /tmp: the work folder and the folder of the program itself (which shows only the program).
    expect(names('tmp').every((n) => n.startsWith('navi-3d-'))).toBe(true);
    expect(names('beside')).toEqual(['look-around']);
    expect(names('network')).toEqual(['lo']);
    expect(Number(said.pid)).toBeLessThanOrEqual(3);
    expect([said.passwd, said.usr, said.work]).toEqual(['unreadable', 'read-only', 'written']);
  });

  it('compiles and renders through the tools, OpenSCAD inside bwrap each time', async () => {
    const programs: string[] = [];
    const shared = context({}, (pid) => programs.push(programOf(pid)));
    const compiled = await compileScadTool(shared).handler(
      { code: 'cube(10);', name: 'boxed' },
      noSignal,
      inSession,
    );
    expect(text(compiled)).toContain('Compiled code.scad into boxed.stl: 12 triangles.');
    const block = compiled.content.find((c) => c.type === 'resource') as EmbeddedResource;
    if (!('blob' in block.resource)) throw new Error(text(compiled));
    writeFileSync(join(files, SESSION, 'boxed.stl'), Buffer.from(block.resource.blob, 'base64'));

    const rendered = await renderStlTool(shared).handler({ path: 'boxed.stl' }, noSignal, inSession);
    expect(rendered.isError, text(rendered)).toBeFalsy();
    const shots = rendered.content.filter((c): c is ImageContent => c.type === 'image');
    expect(shots).toHaveLength(3);
    for (const shot of shots) {
      const { channels } = await sharp(Buffer.from(shot.data, 'base64')).stats();
      expect(Math.max(...channels.map((c) => c.stdev))).toBeGreaterThan(10);
    }
    expect(programs).toEqual(['bwrap', 'bwrap', 'bwrap', 'bwrap']);
  });

  it('takes OpenSCAD inside down with bwrap when the call is cancelled', async () => {
    const cancel = new AbortController();
    const seen = new Map<number, string>();
    const pids: number[] = [];
    const compile = compileScadTool(
      context({}, (pid) => {
        pids.push(pid);
        // Cancelled once OpenSCAD itself runs inside the sandbox.
        void eventually(() => {
          for (const { pid: child, name } of descendants(pid)) seen.set(child, name);
          return [...seen.values()].includes('openscad');
        }).then(() => cancel.abort());
      }),
    );
    const result = await compile.handler({ code: SLOW_MODEL }, cancel.signal, inSession);
    expect(text(result)).toBe('compile_scad was cancelled; OpenSCAD was stopped.');
    expect([...seen.values()]).toContain('openscad');
    for (const pid of pids) expect(processGone(pid)).toBe(true);
    // bwrap's init inside may still be on its way out once the call has returned; it goes.
    await eventually(() => [...seen.keys()].every(processGone));
  });
});

describe('NAVI_SANDBOX for OpenSCAD', () => {
  const missing = { bwrapPath: '/nowhere/bwrap' };

  it('required: refuses to run OpenSCAD without a working bwrap, saying what to do', async () => {
    let spawned = 0;
    const strict = context(
      { NAVI_SANDBOX: 'required', OPENSCAD_PATH: '/bin/true' },
      () => spawned++,
      missing,
    );
    writeFileSync(join(files, SESSION, 'shape.stl'), TETRAHEDRON);
    const compiled = await compileScadTool(strict).handler({ code: 'cube(1);' }, noSignal, inSession);
    const rendered = await renderStlTool(
      context(
        { NAVI_SANDBOX: 'required', OPENSCAD_PATH: '/bin/true', XVFB_PATH: '/bin/true' },
        () => spawned++,
        missing,
      ),
    ).handler({ path: 'shape.stl' }, noSignal, inSession);
    for (const [tool, result] of [
      ['compile_scad', compiled],
      ['render_stl', rendered],
    ] as const) {
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        `${tool} did not run OpenSCAD. Refused: NAVI_SANDBOX=required but the bubblewrap sandbox is unavailable ("/nowhere/bwrap" is not installed). Install bubblewrap (apt-get install bubblewrap) or set NAVI_SANDBOX=auto or off.`,
      );
    }
    expect(spawned).toBe(0);
  });

  it.skipIf(!findProgram('openscad'))(
    'auto: runs OpenSCAD directly without bwrap, and says so once',
    async () => {
      const warnings: string[] = [];
      const programs: string[] = [];
      const compile = compileScadTool(
        context({ NAVI_SANDBOX: 'auto' }, (pid) => programs.push(programOf(pid)), {
          ...missing,
          warn: (line) => warnings.push(line),
        }),
      );
      for (const code of ['cube(1);', 'cube(2);'])
        expect(text(await compile.handler({ code }, noSignal, inSession))).toContain('12 triangles');
      expect(programs).toEqual(['openscad', 'openscad']);
      expect(warnings).toEqual([
        'navi-3d: the bubblewrap sandbox is unavailable ("/nowhere/bwrap" is not installed); OpenSCAD runs without it. Install bubblewrap, or set NAVI_SANDBOX=off to silence this.',
      ]);
    },
  );

  it.skipIf(!sandboxed)('off: runs OpenSCAD directly even where bwrap works, without a warning', async () => {
    const warnings: string[] = [];
    const programs: string[] = [];
    const compile = compileScadTool(
      context({ NAVI_SANDBOX: 'off' }, (pid) => programs.push(programOf(pid)), {
        warn: (line) => warnings.push(line),
      }),
    );
    expect(text(await compile.handler({ code: 'cube(1);' }, noSignal, inSession))).toContain('12 triangles');
    expect(programs).toEqual(['openscad']);
    expect(warnings).toEqual([]);
  });
});
