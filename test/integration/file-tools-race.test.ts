import { type ChildProcess, spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { testSettings } from '../../src/config/settings.js';
import { SessionFiles } from '../../src/server/session-files.js';
import { createContentPublishTool } from '../../src/tools/builtin/content-publish.js';
import { createFilesystemTool } from '../../src/tools/builtin/filesystem.js';
import { createImageViewTool } from '../../src/tools/builtin/image-view.js';
import { createShareFileTool } from '../../src/tools/builtin/share-file.js';
import { makeCtx, memoryFileStore } from '../../src/tools/builtin/test-support.js';
import { createWriteToolTool } from '../../src/tools/builtin/write-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { moduleTool, testGuard } from '../../src/tools/test-helpers.js';
import type { ToolDefinition, ToolResult } from '../../src/tools/types.js';

// A second process flips <root>/racedir between a real folder and a link to a folder outside
// the root while every file tool works on paths through it. Afterwards nothing outside may
// have been read, created, changed or deleted.

const RACE_MS = 2500;
const MARKER = 'OUTSIDE-SECRET';

/** Flips the folder until the time is up; prints how many flips it made. */
const RACER = `
const fs = require('node:fs');
const [race, victim, ms] = process.argv.slice(1);
const end = Date.now() + Number(ms);
// On a loaded machine the test's own writes can keep the folder busy for a long while; the race
// goes on past its time until the folder has turned into a link a few times, within a bound.
const hardEnd = end + 15000;
let flips = 0;
while (Date.now() < end || (flips < 20 && Date.now() < hardEnd)) {
  try {
    fs.rmSync(race, { recursive: true, force: true });
    fs.mkdirSync(race);
    fs.mkdirSync(race + '/sub');
    fs.writeFileSync(race + '/f.txt', 'inside\\n');
    fs.writeFileSync(race + '/sub/g.txt', 'inside g\\n');
    fs.copyFileSync(race + '/../img-inside.png', race + '/img.png');
  } catch {}
  try {
    fs.rmSync(race, { recursive: true, force: true });
    fs.symlinkSync(victim, race);
    flips++;
  } catch {}
}
// The count goes out first: the test's own calls may recreate the folder while it is put back,
// and a failed clean-up must not hide how many flips there were.
process.stdout.write(String(flips));
try {
  fs.rmSync(race, { recursive: true, force: true });
  fs.mkdirSync(race, { recursive: true });
} catch {}
`;

interface Entry {
  type: string;
  mtimeMs: number;
  size: number;
  content?: string;
}

/** Every entry below `dir` with its kind, mtime, size and (for files) content. */
function snapshot(dir: string, into: Record<string, Entry> = {}, rel = ''): Record<string, Entry> {
  const info = lstatSync(dir);
  into[rel || '.'] = { type: 'dir', mtimeMs: info.mtimeMs, size: 0 };
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const r = rel ? `${rel}/${name}` : name;
    const s = lstatSync(path);
    if (s.isDirectory()) snapshot(path, into, r);
    else
      into[r] = {
        type: s.isSymbolicLink() ? 'link' : 'file',
        mtimeMs: s.mtimeMs,
        size: s.size,
        content: s.isFile() ? readFileSync(path, 'base64') : undefined,
      };
  }
  return into;
}

/** Text of every file below `dir` (links not followed). */
function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = lstatSync(path);
    if (s.isDirectory()) text += allText(path);
    else if (s.isFile()) text += readFileSync(path, 'latin1');
  }
  return text;
}

let base: string;
let root: string;
let race: string;
let victim: string;
let racer: ChildProcess;

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'navi-race-')));
  root = join(base, 'root');
  race = join(root, 'racedir');
  victim = join(base, 'outside', 'victim');
  mkdirSync(join(race, 'sub'), { recursive: true });
  mkdirSync(join(root, 'plaindir'));
  writeFileSync(join(root, 'plaindir', 'p.txt'), 'plain\n');
  writeFileSync(join(root, 'plain.txt'), 'plain\n');
  mkdirSync(join(victim, 'sub'), { recursive: true });
  mkdirSync(join(victim, 'new'));
  writeFileSync(join(victim, 'f.txt'), `${MARKER} f\n`);
  writeFileSync(join(victim, 'sub', 'g.txt'), `${MARKER} g\n`);
  writeFileSync(join(victim, 'victim-only.txt'), `${MARKER} only\n`);
  const png = (side: number) =>
    sharp({ create: { width: side, height: side, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
  writeFileSync(join(root, 'img-inside.png'), await png(3));
  writeFileSync(join(victim, 'img.png'), await png(7));
});

afterAll(() => {
  racer?.kill();
  rmSync(base, { recursive: true, force: true });
});

describe('file tools under a folder that keeps turning into a link to the outside', () => {
  it('never read, create, change or delete anything outside the root', async () => {
    const before = snapshot(join(base, 'outside'));
    const settings = testSettings({
      FS_ALLOWED_PATHS: root,
      SESSION_FILES_DIR: race,
      SESSION_FILES_MAX_SIZE_MB: '1',
    });
    // Built while racedir is a plain folder: Navi's own folders are fixed at start.
    const ctx = makeCtx({ sessionId: 'race' });
    const files = memoryFileStore();
    const fs = createFilesystemTool({ settings, guard: testGuard(settings) });
    const share = createShareFileTool({ settings, files, guard: testGuard(settings) });
    const publish = createContentPublishTool({ settings, files });
    const image = createImageViewTool({ settings, guard: testGuard(settings) });
    const registry = new ToolRegistry();
    const writeTool = createWriteToolTool({ registry, toolsDir: race });
    registry.register({ tool: writeTool, source: 'builtin' });
    const uploads = new SessionFiles({
      root: race,
      files: memoryFileStore(),
      ttlHours: 1,
      maxBytes: 1024 * 1024,
      clock: () => new Date(),
      logger: silentLogger(),
    });

    const results: ToolResult[] = [];
    const call = async (tool: ToolDefinition, args: Record<string, unknown>) => {
      // A tool that throws is turned into a failed result by the executor; the same here.
      results.push(
        await tool.execute(args, ctx).catch((err: Error) => ({ success: false, output: err.message })),
      );
    };
    const r = (p: string) => join(race, p);
    let n = 0;
    const fsOps = (i: number): Record<string, unknown>[] => [
      { action: 'read', path: r('f.txt') },
      { action: 'read', path: r('img.png'), encoding: 'base64' },
      { action: 'read', path: r('sub/g.txt') },
      { action: 'write', path: r('f.txt'), content: 'written' },
      { action: 'append', path: r('f.txt'), content: 'appended' },
      // Would rewrite the outside file (its marker has three E) if the guard let it through.
      { action: 'edit', path: r('f.txt'), old_text: 'E', new_text: 'e', replace_all: true },
      { action: 'edit', path: r('f.txt'), old_text: 'written', new_text: 'edited' },
      { action: 'stat', path: r('f.txt') },
      { action: 'stat', path: r('sub') },
      { action: 'write', path: r(`new/deeper-${i}/x.txt`), content: 'deep' },
      { action: 'list', path: race },
      { action: 'list', path: race, recursive: true },
      { action: 'grep', path: race, pattern: 'SECRET|inside' },
      { action: 'grep', path: r('f.txt'), pattern: '.' },
      { action: 'diff', path: r('f.txt'), other_path: r('sub/g.txt') },
      { action: 'copy', path: r('f.txt'), destination: join(root, `copies/f-${i}.txt`) },
      { action: 'copy', path: r('sub'), destination: join(root, `copies/sub-${i}`) },
      { action: 'copy', path: join(root, 'plain.txt'), destination: r('f.txt'), overwrite: true },
      { action: 'copy', path: join(root, 'plain.txt'), destination: r(`c-${i}.txt`) },
      { action: 'copy', path: join(root, 'plaindir'), destination: r('sub'), overwrite: true },
      { action: 'copy', path: join(root, 'plaindir'), destination: r(`pd-${i}`) },
      { action: 'write', path: join(root, `mv-${i}.txt`), content: 'to move' },
      { action: 'move', path: join(root, `mv-${i}.txt`), destination: r('f.txt'), overwrite: true },
      { action: 'write', path: join(root, `mv2-${i}.txt`), content: 'to move' },
      { action: 'move', path: join(root, `mv2-${i}.txt`), destination: r(`moved-${i}.txt`) },
      { action: 'move', path: r('sub/g.txt'), destination: join(root, `copies/g-${i}.txt`) },
      { action: 'move', path: r('sub'), destination: join(root, `copies/msub-${i}`) },
      { action: 'delete', path: r('f.txt') },
      { action: 'delete', path: r('sub'), recursive: true },
      { action: 'delete', path: r('new'), recursive: true },
    ];

    racer = spawn(process.execPath, ['-e', RACER, race, victim, String(RACE_MS)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let flips = '';
    let racerErr = '';
    let racerExit = '';
    racer.stdout?.on('data', (d: Buffer) => {
      flips += d.toString();
    });
    racer.stderr?.on('data', (d: Buffer) => {
      racerErr += d.toString();
    });
    // 'close', not 'exit': the count is printed last, and 'exit' may come before stdout is read.
    const finished = new Promise<void>((done) =>
      racer.on('close', (code, signal) => {
        racerExit = `code ${code}, signal ${signal}`;
        done();
      }),
    );
    let running = true;
    void finished.then(() => {
      running = false;
    });

    const fileLoop = async () => {
      while (running && n < 400) {
        const i = n++;
        for (const args of fsOps(i)) await call(fs, args);
        await call(share, { path: r('f.txt'), name: `shared-${i}.txt` });
        await call(share, { path: r('img.png') });
        await call(publish, { name: `shared-${i}.txt` });
        await call(image, { source: r('img.png') });
      }
    };
    const slowLoop = async () => {
      for (let i = 0; running && i < 40; i++) {
        await call(writeTool, { name: `racetool${i}`, code: moduleTool(`racetool${i}`, 'hi') });
        try {
          await uploads.save('up', `u-${i}.txt`, Readable.from([Buffer.from('uploaded')]));
        } catch {
          // Refused while the folder is a link: what matters is where nothing was written.
        }
      }
    };
    await Promise.all([fileLoop(), slowLoop(), finished]);

    expect(Number(flips), `the racer ended with ${racerExit}: ${racerErr}`).toBeGreaterThan(0);
    expect(n).toBeGreaterThan(0);
    // Which calls met which state during the race depends on the machine's load; that the guard
    // tells the two states apart is shown without a race: the folder a real folder, then a link.
    const raced = results.length;
    rmSync(race, { recursive: true, force: true });
    mkdirSync(join(race, 'sub'), { recursive: true });
    writeFileSync(join(race, 'f.txt'), 'inside\n');
    await call(fs, { action: 'read', path: r('f.txt') });
    expect(results[raced]).toMatchObject({ success: true });
    rmSync(race, { recursive: true, force: true });
    symlinkSync(victim, race);
    const throughLink: Record<string, unknown>[] = [
      { action: 'read', path: r('f.txt') },
      { action: 'write', path: r('f.txt'), content: 'written' },
      { action: 'edit', path: r('f.txt'), old_text: 'E', new_text: 'e', replace_all: true },
      { action: 'stat', path: r('f.txt') },
      { action: 'write', path: r('new/x.txt'), content: 'deep' },
      { action: 'list', path: race, recursive: true },
      { action: 'copy', path: r('sub'), destination: join(root, 'copies/through-link') },
      { action: 'delete', path: r('f.txt') },
    ];
    for (const args of throughLink) await call(fs, args);
    await call(share, { path: r('f.txt') });
    const linked = results.slice(raced + 1);
    expect(linked.filter((x) => x.success).map((x) => x.output)).toEqual([]);
    expect(linked.some((x) => x.output.includes('outside the allowed folders'))).toBe(true);

    // Nothing outside changed: same entries, contents and mtimes (folders' too).
    expect(snapshot(join(base, 'outside'))).toEqual(before);
    // Nothing outside was read: no result and no file in the root carries the outside marker.
    for (const x of results) {
      expect(`${x.output}${JSON.stringify(x.metadata ?? {})}`).not.toContain(MARKER);
      expect(x.output).not.toContain('victim-only');
      expect(x.output).not.toMatch(/\b7x7\b/);
    }
    expect(allText(root)).not.toContain(MARKER);
    const shared = [...files.records.values()].map((rec) => rec.path);
    expect(shared.every((p) => p.startsWith(`${race}/`))).toBe(true);
  }, 60_000);
});
