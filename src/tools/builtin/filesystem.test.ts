import {
  constants,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import { testGuard } from '../test-helpers.js';
import type { ToolDefinition } from '../types.js';
import { createFilesystemTool } from './filesystem.js';
import { makeCtx } from './test-support.js';

let base: string;
let root: string;
let outside: string;
let tool: ToolDefinition;
const ctx = makeCtx();
const run = (args: Record<string, unknown>) => tool.execute(args, ctx);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'navi-fs-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
  tool = createFilesystemTool({
    settings: testSettings({ FS_ALLOWED_PATHS: root }),
    guard: testGuard(testSettings({ FS_ALLOWED_PATHS: root })),
  });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('filesystem: normal use', () => {
  it('writes, appends and reads a file, creating folders', async () => {
    expect((await run({ action: 'write', path: join(root, 'a/b/note.txt'), content: 'one\n' })).success).toBe(
      true,
    );
    await run({ action: 'append', path: join(root, 'a/b/note.txt'), content: 'two\n' });
    const r = await run({ action: 'read', path: join(root, 'a/b/note.txt') });
    expect(r).toMatchObject({ success: true, output: 'one\ntwo' });
  });

  it('resolves relative paths against the first root', async () => {
    await run({ action: 'write', path: 'rel.txt', content: 'x' });
    expect(readFileSync(join(root, 'rel.txt'), 'utf8')).toBe('x');
  });

  it('reads a window of lines with offset and limit', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n');
    writeFileSync(join(root, 'big.txt'), lines);
    const r = await run({ action: 'read', path: join(root, 'big.txt'), offset: 10, limit: 3 });
    expect(r.output).toBe('[lines 10-12 of 100; continue with offset=13]\nline 10\nline 11\nline 12');
  });

  it('refuses binary files unless base64 is asked for, and writes base64', async () => {
    const bin = Buffer.from([0, 1, 2, 255, 0, 10]);
    writeFileSync(join(root, 'b.bin'), bin);
    const r = await run({ action: 'read', path: join(root, 'b.bin') });
    expect(r.success).toBe(false);
    expect(r.output).toContain('looks like a binary file');
    expect(r.output).toContain('encoding "base64"');
    const b = await run({ action: 'read', path: join(root, 'b.bin'), encoding: 'base64' });
    expect(b.output).toBe(bin.toString('base64'));
    await run({
      action: 'write',
      path: join(root, 'c.bin'),
      content: bin.toString('base64'),
      encoding: 'base64',
    });
    expect(readFileSync(join(root, 'c.bin')).equals(bin)).toBe(true);
  });

  it('lists a folder, recursively and bounded', async () => {
    mkdirSync(join(root, 'd/e'), { recursive: true });
    writeFileSync(join(root, 'd/e/f.txt'), 'hello');
    writeFileSync(join(root, 'g.txt'), '');
    const flat = await run({ action: 'list', path: root });
    expect(flat.output).toContain('d/');
    expect(flat.output).not.toContain('f.txt');
    const deep = await run({ action: 'list', path: root, recursive: true });
    expect(deep.output).toContain('d/e/f.txt (5 bytes)');
    const small = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: root }),
      guard: testGuard(testSettings({ FS_ALLOWED_PATHS: root })),
      limits: { listEntries: 2 },
    });
    const cut = await small.execute({ action: 'list', path: root, recursive: true }, ctx);
    expect(cut.output).toContain('[listing stopped after 2 entries');
  });

  it('copies and moves, refusing to overwrite unless asked', async () => {
    writeFileSync(join(root, 'src.txt'), 'data');
    expect(
      (await run({ action: 'copy', path: join(root, 'src.txt'), destination: join(root, 'copy.txt') }))
        .success,
    ).toBe(true);
    expect(readFileSync(join(root, 'copy.txt'), 'utf8')).toBe('data');
    const again = await run({
      action: 'copy',
      path: join(root, 'src.txt'),
      destination: join(root, 'copy.txt'),
    });
    expect(again.output).toContain('already exists; pass "overwrite": true');
    mkdirSync(join(root, 'dir'));
    await run({ action: 'move', path: join(root, 'copy.txt'), destination: join(root, 'dir') });
    expect(existsSync(join(root, 'dir/copy.txt'))).toBe(true);
    expect(existsSync(join(root, 'copy.txt'))).toBe(false);
  });

  it('deletes files, and folders only with recursive', async () => {
    mkdirSync(join(root, 'x/y'), { recursive: true });
    const r = await run({ action: 'delete', path: join(root, 'x') });
    expect(r.output).toContain('pass "recursive": true');
    expect((await run({ action: 'delete', path: join(root, 'x'), recursive: true })).success).toBe(true);
    expect(existsSync(join(root, 'x'))).toBe(false);
    const self = await run({ action: 'delete', path: root, recursive: true });
    expect(self.success).toBe(false);
    expect(existsSync(root)).toBe(true);
  });

  it('deleting a link removes the link, not its target', async () => {
    writeFileSync(join(root, 'target.txt'), 'keep');
    symlinkSync(join(root, 'target.txt'), join(root, 'link'));
    await run({ action: 'delete', path: join(root, 'link') });
    expect(readFileSync(join(root, 'target.txt'), 'utf8')).toBe('keep');
  });

  it('greps with file and line numbers, case option and result bound', async () => {
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src/a.ts'), 'const x = 1;\nTODO: fix\ntodo later\n');
    writeFileSync(join(root, 'src/b.bin'), Buffer.from([0, 0, 84, 79, 68, 79]));
    const r = await run({ action: 'grep', path: root, pattern: 'TODO' });
    expect(r.output).toContain(`${join(root, 'src/a.ts')}:2: TODO: fix`);
    expect(r.output).not.toContain('todo later');
    expect(r.output).toContain('1 binary files skipped');
    const ci = await run({ action: 'grep', path: root, pattern: 'todo', ignore_case: true, max_results: 1 });
    expect(ci.output).toContain('1 matches');
    expect(ci.output).toContain('results cut at 1 matches');
    const bad = await run({ action: 'grep', path: root, pattern: '(' });
    expect(bad.output).toContain('Invalid regular expression');
  });

  it('diffs two files and a file against new content', async () => {
    writeFileSync(join(root, 'v1.txt'), 'a\nb\nc\n');
    writeFileSync(join(root, 'v2.txt'), 'a\nB\nc\n');
    const r = await run({ action: 'diff', path: join(root, 'v1.txt'), other_path: join(root, 'v2.txt') });
    expect(r.output).toBe(
      `--- ${join(root, 'v1.txt')}\n+++ ${join(root, 'v2.txt')}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`,
    );
    const c = await run({ action: 'diff', path: join(root, 'v1.txt'), content: 'a\nb\nc\nd\n' });
    expect(c.output).toContain('@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n');
    const same = await run({ action: 'diff', path: join(root, 'v1.txt'), content: 'a\nb\nc\n' });
    expect(same.output).toBe('No differences.');
  });
});

describe('filesystem: hostile paths', () => {
  it('refuses traversal out of the root and names the allowed roots', async () => {
    const r = await run({ action: 'read', path: join(root, '../../../../etc/passwd') });
    expect(r.success).toBe(false);
    expect(r.output).toContain('Access denied');
    expect(r.output).toContain(`outside the allowed folders (${root})`);
    const rel = await run({ action: 'read', path: '../../etc/passwd' });
    expect(rel.output).toContain(`resolves to ${join(root, '../../etc/passwd')}`);
  });

  it('refuses absolute paths outside the roots for every action', async () => {
    const target = join(outside, 'secret.txt');
    for (const args of [
      { action: 'read', path: target },
      { action: 'write', path: join(outside, 'new.txt'), content: 'x' },
      { action: 'delete', path: target },
      { action: 'list', path: outside },
      { action: 'grep', path: outside, pattern: 'SECRET' },
      { action: 'copy', path: target, destination: join(root, 'stolen.txt') },
      { action: 'copy', path: join(root, '.'), destination: join(outside, 'x') },
    ]) {
      const r = await run(args);
      expect(r.success, JSON.stringify(args)).toBe(false);
      expect(r.output).toContain('outside the allowed folders');
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(root, 'stolen.txt'))).toBe(false);
  });

  it('refuses a symbolic link inside the root that points out', async () => {
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling.txt'));
    expect((await run({ action: 'read', path: join(root, 'escape/secret.txt') })).output).toContain(
      'Access denied',
    );
    expect((await run({ action: 'read', path: join(root, 'leak.txt') })).output).toContain('Access denied');
    const w = await run({ action: 'write', path: join(root, 'dangling.txt'), content: 'x' });
    expect(w.output).toContain('Access denied');
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
  });

  it('follows links that stay inside the root, for reading, writing and listing', async () => {
    mkdirSync(join(root, 'real/deep'), { recursive: true });
    writeFileSync(join(root, 'real/deep/f.txt'), 'in root');
    symlinkSync('real', join(root, 'alias'));
    symlinkSync('../f.txt', join(root, 'real/deep/up'));
    symlinkSync(join(root, 'alias/deep'), join(root, 'chain'));
    expect((await run({ action: 'read', path: join(root, 'alias/deep/f.txt') })).output).toBe('in root');
    expect((await run({ action: 'read', path: join(root, 'chain/f.txt') })).output).toBe('in root');
    await run({ action: 'write', path: join(root, 'chain/up'), content: 'via links' });
    expect(readFileSync(join(root, 'real/f.txt'), 'utf8')).toBe('via links');
    expect((await run({ action: 'list', path: join(root, 'alias') })).output).toContain('deep/');
    symlinkSync('loop', join(root, 'loop'));
    expect((await run({ action: 'read', path: join(root, 'loop') })).output).toContain(
      'Too many symbolic links',
    );
  });

  it('refuses a private file by identity, whatever name reaches it', async () => {
    const secret = join(root, 'navi.db');
    writeFileSync(secret, 'private');
    linkSync(secret, join(root, 'innocent.txt'));
    const guarded = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: root }),
      guard: new PathGuard({ roots: [root], hidden: [secret] }),
    });
    for (const path of [secret, join(root, 'innocent.txt')]) {
      const r = await guarded.execute({ action: 'read', path }, ctx);
      expect(r.output).toContain("is Navi's own private data");
    }
    const del = await guarded.execute({ action: 'delete', path: root, recursive: true }, ctx);
    expect(del.success).toBe(false);
    expect(existsSync(secret)).toBe(true);
  });

  it('expands ~ before checking', async () => {
    const r = await run({ action: 'list', path: '~' });
    expect(r.output).toContain('outside the allowed folders');
  });
});

describe('PathGuard: a file swapped for a link between check and use', () => {
  it('refuses when the last component became a link', async () => {
    const guard = new PathGuard({ roots: [root] });
    writeFileSync(join(root, 'f.txt'), 'ok');
    const checked = await guard.resolve(join(root, 'f.txt'));
    unlinkSync(checked);
    symlinkSync(join(outside, 'secret.txt'), checked);
    await expect(guard.open(checked, constants.O_RDONLY)).rejects.toThrow(PathRefusedError);
    await expect(guard.open(checked, constants.O_RDONLY)).rejects.toThrow(
      `resolves to ${join(outside, 'secret.txt')}, which is outside the allowed folders`,
    );
  });

  it('refuses when a folder on the way became a link', async () => {
    const guard = new PathGuard({ roots: [root] });
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub/secret.txt'), 'mine');
    const checked = await guard.resolve(join(root, 'sub/secret.txt'));
    rmSync(join(root, 'sub'), { recursive: true });
    symlinkSync(outside, join(root, 'sub'));
    await expect(guard.open(checked, constants.O_RDONLY)).rejects.toThrow(
      `resolves to ${join(outside, 'secret.txt')}, which is outside`,
    );
  });

  it('does not truncate a file reached through a swapped folder', async () => {
    const guard = new PathGuard({ roots: [root] });
    mkdirSync(join(root, 'sub'));
    const checked = await guard.resolve(join(root, 'sub/secret.txt'));
    rmSync(join(root, 'sub'), { recursive: true });
    symlinkSync(outside, join(root, 'sub'));
    await expect(guard.open(checked, constants.O_WRONLY | constants.O_CREAT)).rejects.toThrow(
      'outside the allowed folders',
    );
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('allows everything with *', async () => {
    const open = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: '*' }),
      guard: testGuard(testSettings({ FS_ALLOWED_PATHS: '*' })),
    });
    const r = await open.execute({ action: 'read', path: join(outside, 'secret.txt') }, ctx);
    expect(r.output).toBe('TOP SECRET');
  });
});
