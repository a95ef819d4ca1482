/**
 * render_stl with the real OpenSCAD and Xvfb, on an STL compile_scad made and the test saved
 * among a session's files the way Navi does: the pictures, the one Xvfb behind them, and
 * every kind of bad input.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult, EmbeddedResource, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { descendants, eventually, processGone } from '../../../test/support/processes.js';
import { needsProgram } from '../../../test/support/requirements.js';
import { testSettings } from '../../config/settings.js';
import { FILE_NAME_META_KEY, SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { compileScadTool } from './compile-scad.js';
import { createContext, type Navi3dContext } from './context.js';
import { renderStlTool } from './render-stl.js';

const SESSION = 'render-session';
const inSession = { meta: { [SESSION_META_KEY]: SESSION } };
const noSignal = new AbortController().signal;
/** A shape that looks different from every side: a sphere on +X, a rod along +Y, a cone on top. */
const MODEL = [
  'cube(10, center = true);',
  'translate([10, 0, 0]) sphere(4);',
  'translate([0, 10, 0]) rotate([90, 0, 0]) cylinder(r = 2, h = 8, center = true);',
  'translate([0, 0, 10]) cylinder(r1 = 4, r2 = 0, h = 6);',
].join('\n');

let root: string;
let files: string;
let session: string;
const contexts: Navi3dContext[] = [];

function context(overrides: Record<string, string> = {}, onSpawn?: (pid: number) => void): Navi3dContext {
  const made = createContext(testSettings({ SESSION_FILES_DIR: files, ...overrides }), files, onSpawn);
  contexts.push(made);
  return made;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function images(result: CallToolResult): ImageContent[] {
  return result.content.filter((c): c is ImageContent => c.type === 'image');
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-3d-render-'));
  files = join(root, 'files');
  session = join(files, SESSION);
  mkdirSync(session, { recursive: true });
  writeFileSync(
    join(session, 'fake.stl'),
    'this is not an STL file at all, only text that says so.\n'.repeat(3),
  );
  writeFileSync(join(session, 'notes.txt'), 'notes\n');
  writeFileSync(join(root, 'outside.stl'), 'solid x\nendsolid x\n');
  symlinkSync(join(root, 'outside.stl'), join(session, 'linked.stl'));
  writeFileSync(join(session, 'empty.stl'), 'solid empty\nendsolid empty\n');
  // A stand-in for OpenSCAD that never finishes, and starts a child that must die with it.
  writeFileSync(join(root, 'stuck-openscad'), '#!/bin/sh\nsleep 300 &\nsleep 300\n');
  chmodSync(join(root, 'stuck-openscad'), 0o755);
  // Stand-ins that die of SIGSEGV: the first only on its first run (it leaves a mark in the
  // call's work folder, then draws a picture's first bytes), the second every time.
  writeFileSync(
    join(root, 'crash-once-openscad'),
    '#!/bin/sh\nmark="$OPENSCADPATH/../out/crashed"\nif [ -e "$mark" ]; then printf "\\211PNG\\r\\n\\032\\n" > "$2"; exit 0; fi\ntouch "$mark"\nkill -SEGV $$\n',
  );
  writeFileSync(join(root, 'crash-openscad'), '#!/bin/sh\nkill -SEGV $$\n');
  chmodSync(join(root, 'crash-once-openscad'), 0o755);
  chmodSync(join(root, 'crash-openscad'), 0o755);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.display.close()));
  rmSync(root, { recursive: true, force: true });
});

describe('render_stl input', () => {
  it('declares its views and refuses unknown ones, more than three, and wrong types', () => {
    const schema = z.object(renderStlTool(context()).inputSchema);
    expect(schema.safeParse({ path: 'a.stl' }).success).toBe(true);
    expect(schema.safeParse({ path: 'a.stl', views: ['left', 'right', 'bottom'] }).success).toBe(true);
    for (const bad of [
      {},
      { path: 1 },
      { path: 'a.stl', views: ['sideways'] },
      { path: 'a.stl', views: ['front', 'back', 'left', 'right'] },
      { path: 'a.stl', views: 'front' },
      { path: 'p'.repeat(2000) },
    ])
      expect(schema.safeParse(bad).success, JSON.stringify(bad).slice(0, 60)).toBe(false);
  });

  it('says what is missing when OpenSCAD or Xvfb is not installed', async () => {
    const noOpenscad = renderStlTool(context({ OPENSCAD_PATH: '/nowhere/openscad' }));
    expect(text(await noOpenscad.handler({ path: 'a.stl' }, noSignal, inSession))).toMatch(
      /render_stl cannot run: OpenSCAD is not installed here .*apt-get install openscad xvfb xauth/,
    );
    const noXvfb = renderStlTool(context({ XVFB_PATH: 'no-such-xvfb', OPENSCAD_PATH: '/bin/true' }));
    expect(text(await noXvfb.handler({ path: 'a.stl' }, noSignal, inSession))).toMatch(
      /render_stl cannot run: Xvfb .* is not installed here \(XVFB_PATH is no-such-xvfb, and no program no-such-xvfb is on PATH\)/,
    );
  });
});

describe.skipIf(
  !(needsProgram('openscad', 'navi-3d render_stl') && needsProgram('Xvfb', 'navi-3d render_stl')),
)('render_stl with OpenSCAD and Xvfb', () => {
  let shared: Navi3dContext;

  beforeAll(async () => {
    shared = context();
    // Navi's side of compile_scad: the STL it returns, saved among the session's files.
    const compiled = await compileScadTool(shared).handler(
      { code: MODEL, name: 'probe' },
      noSignal,
      inSession,
    );
    const block = compiled.content.find((c) => c.type === 'resource') as EmbeddedResource;
    if (!('blob' in block.resource)) throw new Error(text(compiled));
    writeFileSync(join(session, 'probe.stl'), Buffer.from(block.resource.blob, 'base64'));
  });

  it('renders three views as PNGs that are not blank and differ from each other', async () => {
    const result = await renderStlTool(shared).handler({ path: 'probe.stl' }, noSignal, inSession);
    expect(result.isError, text(result)).toBeFalsy();
    const shots = images(result);
    expect(shots.map((s) => s._meta?.[FILE_NAME_META_KEY])).toEqual([
      'probe-front.png',
      'probe-top.png',
      'probe-isometric.png',
    ]);
    expect(text(result)).toMatch(/View 1, front: from the front .*File probe-front\.png/);
    expect(text(result)).toMatch(/View 3, isometric: .*File probe-isometric\.png/);
    expect(text(result)).toContain('  z: -5 to 16 (size 21)');
    const pixels: Buffer[] = [];
    for (const shot of shots) {
      expect(shot.mimeType).toBe('image/png');
      const png = Buffer.from(shot.data, 'base64');
      const meta = await sharp(png).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 800, 600]);
      const { channels } = await sharp(png).stats();
      expect(Math.max(...channels.map((c) => c.stdev))).toBeGreaterThan(10);
      pixels.push(await sharp(png).removeAlpha().raw().toBuffer());
    }
    for (const [a, b] of [
      [0, 1],
      [0, 2],
      [1, 2],
    ] as const) {
      let differing = 0;
      for (let i = 0; i < pixels[a]!.length; i++) if (pixels[a]![i] !== pixels[b]![i]) differing++;
      expect(differing / pixels[a]!.length).toBeGreaterThan(0.01);
    }
  });

  it('renders the views asked for, each once', async () => {
    const result = await renderStlTool(shared).handler(
      { path: 'probe.stl', views: ['left', 'bottom', 'left'] },
      noSignal,
      inSession,
    );
    expect(result.isError, text(result)).toBeFalsy();
    expect(images(result).map((s) => s._meta?.[FILE_NAME_META_KEY])).toEqual([
      'probe-left.png',
      'probe-bottom.png',
    ]);
    expect(text(result)).toContain(
      "2 views follow, each saved among the session's files: probe-left.png, probe-bottom.png.",
    );
    const one = await renderStlTool(shared).handler(
      { path: 'probe.stl', views: ['top'] },
      noSignal,
      inSession,
    );
    expect(text(one)).toContain("One view follows, saved among the session's files: probe-top.png.");
  });

  it('keeps one Xvfb for many renders, and starts a new one when it was killed', async () => {
    const own = context();
    const render = renderStlTool(own);
    expect(own.display.pid()).toBeUndefined();
    await render.handler({ path: 'probe.stl', views: ['top'] }, noSignal, inSession);
    const first = own.display.pid();
    expect(first).toBeTypeOf('number');
    await render.handler({ path: 'probe.stl', views: ['front', 'back'] }, noSignal, inSession);
    expect(own.display.pid()).toBe(first);

    process.kill(first!, 'SIGKILL');
    await expect.poll(() => processGone(first!)).toBe(true);
    const after = await render.handler({ path: 'probe.stl', views: ['right'] }, noSignal, inSession);
    expect(after.isError, text(after)).toBeFalsy();
    expect(images(after)).toHaveLength(1);
    const second = own.display.pid();
    expect(second).toBeTypeOf('number');
    expect(second).not.toBe(first);

    await own.display.close();
    expect(own.display.pid()).toBeUndefined();
    expect(processGone(second!)).toBe(true);
  });

  it('says so when Xvfb cannot start', async () => {
    const broken = renderStlTool(context({ XVFB_PATH: '/bin/false' }));
    const result = await broken.handler({ path: 'probe.stl' }, noSignal, inSession);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /render_stl needs a virtual screen, and Xvfb stopped before it was ready \(exit code 1\)/,
    );
  });

  it('stops OpenSCAD, and what it started, at the time limit and when cancelled', async () => {
    // What the run started (bubblewrap's processes, the stand-in, its sleeps), seen from outside:
    // inside a sandbox their own process ids mean nothing here.
    const seen = new Map<number, string>();
    const watch = (pid: number) => {
      for (const { pid: child, name } of descendants(pid)) seen.set(child, name);
      return [...seen.values()].filter((name) => name === 'sleep').length >= 2;
    };
    const pids: number[] = [];
    const slow = renderStlTool(
      context({ OPENSCAD_PATH: join(root, 'stuck-openscad'), OPENSCAD_TIMEOUT_MS: '500' }, (pid) => {
        pids.push(pid);
        void eventually(() => processGone(pid) || watch(pid));
      }),
    );
    const late = await slow.handler({ path: 'probe.stl', views: ['top'] }, noSignal, inSession);
    expect(late.isError).toBe(true);
    expect(text(late)).toMatch(/did not finish within 0\.5 s \(OPENSCAD_TIMEOUT_MS\) and was stopped/);
    expect(processGone(pids[0]!)).toBe(true);

    // Cancelled only once the stand-in has started both its sleeps.
    const cancel = new AbortController();
    const cancelled = renderStlTool(
      context({ OPENSCAD_PATH: join(root, 'stuck-openscad') }, (pid) => {
        pids.push(pid);
        void eventually(() => watch(pid)).then(() => cancel.abort());
      }),
    );
    const result = await cancelled.handler({ path: 'probe.stl', views: ['top'] }, cancel.signal, inSession);
    expect(text(result)).toMatch(/render_stl was cancelled/);
    expect(processGone(pids[1]!)).toBe(true);
    expect([...seen.values()].filter((name) => name === 'sleep').length).toBeGreaterThanOrEqual(2);
    // bwrap's init inside may still be on its way out once the call has returned; it goes.
    await eventually(() => [...seen.keys()].every(processGone));
  });

  it('draws a view once more when OpenSCAD crashed, and only once', async () => {
    let spawned = 0;
    const once = renderStlTool(
      context({ OPENSCAD_PATH: join(root, 'crash-once-openscad') }, () => spawned++),
    );
    const drawn = await once.handler({ path: 'probe.stl', views: ['top'] }, noSignal, inSession);
    expect(drawn.isError, text(drawn)).toBeFalsy();
    expect(Buffer.from(images(drawn)[0]!.data, 'base64').subarray(0, 4).toString('latin1')).toBe('\x89PNG');
    expect(spawned).toBe(2);

    spawned = 0;
    const always = renderStlTool(context({ OPENSCAD_PATH: join(root, 'crash-openscad') }, () => spawned++));
    const failed = await always.handler({ path: 'probe.stl', views: ['top'] }, noSignal, inSession);
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(
      /OpenSCAD could not render probe\.stl: the top view failed \(exit (139|SIGSEGV)\)/,
    );
    expect(spawned).toBe(2);
  });

  it('refuses bad paths and files that are not STLs, saying why', async () => {
    const render = renderStlTool(shared);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ path: '../probe.stl' }, /uses "\.\.", which leaves the session's folder/],
      [{ path: '/etc/passwd' }, /is outside the session's files/],
      [{ path: 'linked.stl' }, /linked\.stl is a symbolic link/],
      [{ path: 'missing.stl' }, /There is no file missing\.stl among the session's files/],
      [{ path: 'notes.txt' }, /notes\.txt is not an \.stl file/],
      [{ path: 'fake.stl' }, /fake\.stl cannot be rendered: it is not an STL file/],
      [{ path: 'empty.stl' }, /empty\.stl holds no triangles/],
      [{ path: '' }, /the path is empty/],
      [
        { path: 'probe.stl', views: ['sideways'] },
        /Unknown view "sideways": choose from front, back, left, right, top, bottom, isometric/,
      ],
      [
        { path: 'probe.stl', views: ['front', 'back', 'left', 'right'] },
        /4 views asked for; render_stl makes at most 3/,
      ],
      [{ path: 'probe.stl', views: [] }, /views is empty/],
    ];
    for (const [args, message] of cases) {
      const result = await render.handler(args as { path: string }, noSignal, inSession);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(text(result)).toMatch(message);
    }
  });

  it('without a session id, or with a hostile one, refuses to read any file', async () => {
    const render = renderStlTool(shared);
    const noSession = text(await render.handler({ path: 'probe.stl' }, noSignal, { meta: {} }));
    expect(noSession).toMatch(/render_stl cannot read "probe\.stl": This call came without a session id/);
    // Compiling code is the way out for compile_scad; render_stl has none, and says none.
    expect(noSession).not.toMatch(/as code/);
    expect(text(await render.handler({ path: 'probe.stl' }, noSignal))).toMatch(/without a session id/);
    const hostile = await render.handler({ path: 'probe.stl' }, noSignal, {
      meta: { [SESSION_META_KEY]: '../render-session' },
    });
    expect(text(hostile)).toMatch(/is not a plain folder name/);
  });
});
