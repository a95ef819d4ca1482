/** filesystem `edit` and `stat`: search and replace with a diff, and an entry's metadata, both through the path guard. */
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { PathGuard } from '../../machine/fs/path-guard.js';
import { runValidated, testGuard } from '../test-helpers.js';
import type { ToolDefinition } from '../types.js';
import { createFilesystemTool } from './filesystem.js';
import { makeCtx } from './test-support.js';

let base: string;
let root: string;
let outside: string;
let tool: ToolDefinition;
const ctx = makeCtx();
const run = (args: Record<string, unknown>) => runValidated(tool, args, ctx);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'navi-fs-edit-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
  const settings = testSettings({ FS_ALLOWED_PATHS: root });
  tool = createFilesystemTool({ settings, guard: testGuard(settings) });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('filesystem edit', () => {
  it('replaces text that occurs once and shows the unified diff', async () => {
    const file = join(root, 'app.ts');
    writeFileSync(file, 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const r = await run({ action: 'edit', path: file, old_text: 'const b = 2;', new_text: 'const b = 20;' });
    expect(r.success).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
    expect(r.output).toBe(
      `Edited ${file}: replaced one occurrence.\n--- ${file}\n+++ ${file}\n` +
        '@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;\n',
    );
    expect(r.metadata).toMatchObject({ path: file, replaced: 1 });
  });

  it('refuses several matches, naming the count and the lines, unless replace_all', async () => {
    const file = join(root, 'todo.txt');
    writeFileSync(file, 'x TODO\ny\nTODO z\nw\nlast TODO\n');
    const r = await run({ action: 'edit', path: file, old_text: 'TODO', new_text: 'DONE' });
    expect(r.success).toBe(false);
    expect(r.output).toContain('"old_text" occurs 3 times (starting on lines 1, 3, 5)');
    expect(r.output).toContain('"replace_all": true');
    expect(r.metadata).toMatchObject({ matches: 3, lines: [1, 3, 5] });
    expect(readFileSync(file, 'utf8')).toBe('x TODO\ny\nTODO z\nw\nlast TODO\n');

    const all = await run({
      action: 'edit',
      path: file,
      old_text: 'TODO',
      new_text: 'DONE',
      replace_all: true,
    });
    expect(all.success).toBe(true);
    expect(all.output).toContain('replaced 3 occurrences');
    expect(readFileSync(file, 'utf8')).toBe('x DONE\ny\nDONE z\nw\nlast DONE\n');
  });

  it('says 0 matches when the text is not there, and notices Windows line endings', async () => {
    const file = join(root, 'crlf.txt');
    writeFileSync(file, 'one\r\ntwo\r\n');
    const r = await run({ action: 'edit', path: file, old_text: 'one\ntwo', new_text: 'x' });
    expect(r.success).toBe(false);
    expect(r.output).toContain('was not found (0 matches)');
    expect(r.output).toContain('Windows line endings');
    expect(readFileSync(file, 'utf8')).toBe('one\r\ntwo\r\n');
    const fixed = await run({ action: 'edit', path: file, old_text: 'one\r\ntwo', new_text: 'x' });
    expect(fixed.success).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('x\r\n');
  });

  it('inserts replacement text literally, $ patterns included', async () => {
    const file = join(root, 'price.txt');
    writeFileSync(file, 'price: N\n');
    await run({ action: 'edit', path: file, old_text: 'N', new_text: "$& $' $1 $$" });
    expect(readFileSync(file, 'utf8')).toBe("price: $& $' $1 $$\n");
  });

  it('deletes old_text when new_text is empty, and keeps a multibyte text intact', async () => {
    const file = join(root, 'u.txt');
    writeFileSync(file, 'grüße — 你好 — remove me\n');
    const r = await run({ action: 'edit', path: file, old_text: ' — remove me', new_text: '' });
    expect(r.success).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('grüße — 你好\n');
  });

  it('refuses missing, wrong-typed, empty and pointless arguments with what to pass', async () => {
    const file = join(root, 'f.txt');
    writeFileSync(file, 'abc\n');
    const missing = await run({ action: 'edit', path: file, new_text: 'x' });
    expect(missing.output).toContain('needs "old_text"');
    const noNew = await run({ action: 'edit', path: file, old_text: 'abc' });
    expect(noNew.output).toContain('"new_text"');
    const typed = await run({ action: 'edit', path: file, old_text: ['a'], new_text: 'x' });
    expect(typed.success).toBe(false);
    expect(typed.output).toContain('old_text');
    const empty = await run({ action: 'edit', path: file, old_text: '', new_text: 'x' });
    expect(empty.output).toContain('"old_text" is empty');
    const same = await run({ action: 'edit', path: file, old_text: 'abc', new_text: 'abc' });
    expect(same.output).toContain('the same');
    const noPath = await run({ action: 'edit', old_text: 'a', new_text: 'b' });
    expect(noPath.success).toBe(false);
    expect(noPath.output).toContain('path');
    const huge = await run({ action: 'edit', path: file, old_text: 'a'.repeat(3_000_000), new_text: 'b' });
    expect(huge.output).toContain('0 matches');
    expect(readFileSync(file, 'utf8')).toBe('abc\n');
  });

  it('refuses folders, binary files, missing files and files over the size limit', async () => {
    mkdirSync(join(root, 'dir'));
    expect(
      (await run({ action: 'edit', path: join(root, 'dir'), old_text: 'a', new_text: 'b' })).output,
    ).toContain('is a directory');
    writeFileSync(join(root, 'b.bin'), Buffer.from([0, 97, 0, 98]));
    const bin = await run({ action: 'edit', path: join(root, 'b.bin'), old_text: 'a', new_text: 'b' });
    expect(bin.output).toContain('binary file');
    const gone = await run({ action: 'edit', path: join(root, 'nope.txt'), old_text: 'a', new_text: 'b' });
    expect(gone.output).toContain('No such file or folder');
    const small = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: root }),
      guard: testGuard(testSettings({ FS_ALLOWED_PATHS: root })),
      limits: { editBytes: 10 },
    });
    writeFileSync(join(root, 'big.txt'), 'a'.repeat(11));
    const big = await small.execute(
      { action: 'edit', path: join(root, 'big.txt'), old_text: 'a', new_text: 'b' },
      ctx,
    );
    expect(big.output).toContain('edit works on files up to 10 bytes');
  });

  it('never edits outside the allowed folders: traversal, absolute paths and links leading out', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    symlinkSync(outside, join(root, 'escape'));
    for (const path of [
      join(root, '../outside/secret.txt'),
      '../outside/secret.txt',
      join(outside, 'secret.txt'),
      join(root, 'leak.txt'),
      join(root, 'escape/secret.txt'),
    ]) {
      const r = await run({ action: 'edit', path, old_text: 'TOP', new_text: 'PWNED' });
      expect(r.success, path).toBe(false);
      expect(r.output, path).toContain('outside the allowed folders');
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it("edits through links that stay inside, and never Navi's private or read-only files", async () => {
    writeFileSync(join(root, 'real.txt'), 'old\n');
    symlinkSync('real.txt', join(root, 'alias.txt'));
    expect(
      (await run({ action: 'edit', path: join(root, 'alias.txt'), old_text: 'old', new_text: 'new' }))
        .success,
    ).toBe(true);
    expect(readFileSync(join(root, 'real.txt'), 'utf8')).toBe('new\n');

    const secret = join(root, 'navi.db');
    writeFileSync(secret, 'private rows\n');
    linkSync(secret, join(root, 'innocent.txt'));
    mkdirSync(join(root, 'tools'));
    writeFileSync(join(root, 'tools', 't.ts'), 'export const name = "t";\n');
    const guarded = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: root }),
      guard: new PathGuard({
        roots: [root],
        hidden: [secret],
        readOnly: [{ path: join(root, 'tools'), why: 'the user tools folder.' }],
      }),
    });
    for (const path of [secret, join(root, 'innocent.txt')]) {
      const r = await guarded.execute({ action: 'edit', path, old_text: 'private', new_text: 'public' }, ctx);
      expect(r.output).toContain("is Navi's own private data");
    }
    const ro = await guarded.execute(
      { action: 'edit', path: join(root, 'tools', 't.ts'), old_text: '"t"', new_text: '"u"' },
      ctx,
    );
    expect(ro.output).toContain('the user tools folder');
    expect(readFileSync(secret, 'utf8')).toBe('private rows\n');
    expect(readFileSync(join(root, 'tools', 't.ts'), 'utf8')).toBe('export const name = "t";\n');
  });
});

describe('filesystem stat', () => {
  it('describes a file, a folder and the root', async () => {
    const file = join(root, 'f.txt');
    writeFileSync(file, 'hello');
    chmodSync(file, 0o640);
    const r = await run({ action: 'stat', path: file });
    expect(r.success).toBe(true);
    const mtime = lstatSync(file).mtime.toISOString();
    expect(r.output).toBe(`${file}: file, 5 bytes\npermissions: rw-r----- (0640)\nmodified: ${mtime}`);
    expect(r.metadata).toMatchObject({ path: file, type: 'file', size: 5, mode: '0640', modified: mtime });
    mkdirSync(join(root, 'd'));
    expect((await run({ action: 'stat', path: join(root, 'd') })).metadata).toMatchObject({
      type: 'directory',
    });
    expect((await run({ action: 'stat', path: root })).metadata).toMatchObject({
      type: 'directory',
      path: root,
    });
  });

  it('shows a link and where it leads, when that is inside', async () => {
    writeFileSync(join(root, 'target.txt'), 'abc');
    symlinkSync('target.txt', join(root, 'link'));
    const r = await run({ action: 'stat', path: join(root, 'link') });
    expect(r.output).toContain(`${join(root, 'link')}: symlink -> target.txt`);
    expect(r.output).toContain(`leads to ${join(root, 'target.txt')}: file, 3 bytes`);
    expect(r.metadata).toMatchObject({ type: 'symlink', link_target: 'target.txt' });
    symlinkSync('nowhere.txt', join(root, 'dangling'));
    expect((await run({ action: 'stat', path: join(root, 'dangling') })).output).toContain('dangling');
  });

  it('describes a link pointing outside the allowed folders without examining its target', async () => {
    // An outside time no entry inside can share.
    utimesSync(
      join(outside, 'secret.txt'),
      new Date('2001-02-03T04:05:06Z'),
      new Date('2001-02-03T04:05:06Z'),
    );
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak'));
    const r = await run({ action: 'stat', path: join(root, 'leak') });
    expect(r.success).toBe(true);
    expect(r.output).toContain(`symlink -> ${join(outside, 'secret.txt')}`);
    expect(r.output).toContain('where it leads is not examined');
    expect(r.output).toContain('outside the allowed folders');
    // Nothing of the outside file: neither its size (11 bytes) nor its times.
    expect(r.output).not.toContain('11 bytes');
    expect(`${r.output}${JSON.stringify(r.metadata)}`).not.toContain('2001-02-03');
  });

  it('refuses paths outside the allowed folders, through traversal or a linked folder', async () => {
    symlinkSync(outside, join(root, 'escape'));
    for (const path of [
      join(root, '../outside/secret.txt'),
      join(outside, 'secret.txt'),
      join(root, 'escape/secret.txt'),
      '~',
    ]) {
      const r = await run({ action: 'stat', path });
      expect(r.success, path).toBe(false);
      expect(r.output, path).toContain('outside the allowed folders');
    }
  });

  it("refuses Navi's private files by name and by identity", async () => {
    const secret = join(root, 'navi.db');
    writeFileSync(secret, 'x');
    linkSync(secret, join(root, 'hard.txt'));
    const guarded = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: root }),
      guard: new PathGuard({ roots: [root], hidden: [secret] }),
    });
    for (const path of [secret, join(root, 'hard.txt')]) {
      const r = await guarded.execute({ action: 'stat', path }, ctx);
      expect(r.output, path).toContain("is Navi's own private data");
    }
  });

  it('says what is missing or wrong', async () => {
    const gone = await run({ action: 'stat', path: join(root, 'nope') });
    expect(gone.success).toBe(false);
    expect(gone.output).toBe(`No such file or folder: ${join(root, 'nope')}.`);
    const typed = await run({ action: 'stat', path: { nested: true } });
    expect(typed.success).toBe(false);
    expect(typed.output).toContain('path');
    const nul = await run({ action: 'stat', path: 'a\0b' });
    expect(nul.output).toContain('NUL byte');
    const unknown = await run({ action: 'chmod', path: root });
    expect(unknown.success).toBe(false);
    expect(unknown.output).toContain('stat');
  });
});
