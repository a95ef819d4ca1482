import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { PathGuard } from '../../machine/fs/path-guard.js';
import { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import { testGuard } from '../test-helpers.js';
import { createContentPublishTool } from './content-publish.js';
import { createShareFileTool } from './share-file.js';
import { makeCtx, memoryFileStore } from './test-support.js';

let base: string;
let root: string;
let outside: string;
let filesDir: string;
let files: ReturnType<typeof memoryFileStore>;
let scratch: ScratchDirs;
const clock = new Date('2026-11-22T12:00:00Z');
const ctx = makeCtx({ sessionId: 'sess1' });

function settings() {
  return testSettings({
    FS_ALLOWED_PATHS: root,
    SESSION_FILES_DIR: filesDir,
    SESSION_FILES_MAX_SIZE_MB: '1',
    SESSION_FILES_TTL_HOURS: '24',
  });
}
const share = (guard?: PathGuard) =>
  createShareFileTool({
    settings: settings(),
    guard: testGuard(settings()),
    files,
    scratch,
    now: () => clock,
    ...(guard ? { guard } : {}),
  });
const publish = (now = clock) => createContentPublishTool({ settings: settings(), files, now: () => now });

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'navi-share-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  filesDir = join(base, 'session_files');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
  files = memoryFileStore();
  scratch = new ScratchDirs({ parent: base });
});
afterEach(() => {
  scratch.clear();
  rmSync(base, { recursive: true, force: true });
});

describe('share_file', () => {
  it('copies a file into the session and returns its download link', async () => {
    writeFileSync(join(root, 'report.md'), '# Report\n');
    const r = await share().execute({ path: join(root, 'report.md') }, ctx);
    expect(r.success).toBe(true);
    expect(r.output).toBe(
      `Shared ${join(root, 'report.md')} as "report.md" (9 bytes). Download link: /sessions/sess1/files/report.md ` +
        '(kept until 2026-11-23T12:00:00.000Z). Use content_publish with name "report.md" to show it inline.',
    );
    expect(readFileSync(join(filesDir, 'sess1', 'report.md'), 'utf8')).toBe('# Report\n');
    expect(await files.get('sess1', 'report.md')).toMatchObject({
      size: 9,
      mime_type: 'text/markdown',
      path: join(filesDir, 'sess1', 'report.md'),
      expires_at: '2026-11-23T12:00:00.000Z',
    });
  });

  it('takes a display name, makes it safe and numbers collisions', async () => {
    writeFileSync(join(root, 'a.txt'), 'one');
    const first = await share().execute({ path: join(root, 'a.txt'), name: '../../evil name.txt' }, ctx);
    expect(first.metadata).toMatchObject({ shared_file: { name: 'evil name.txt' } });
    const second = await share().execute({ path: join(root, 'a.txt'), name: '../../evil name.txt' }, ctx);
    expect(second.metadata).toMatchObject({ shared_file: { name: 'evil name (1).txt' } });
    expect(readFileSync(join(filesDir, 'sess1', 'evil name (1).txt'), 'utf8')).toBe('one');
    expect(existsSync(join(filesDir, 'evil name.txt'))).toBe(false);
  });

  it('shares a file code_exec wrote in its working folder', async () => {
    const dir = scratch.create('navi-code-');
    writeFileSync(join(dir, 'plot.png'), 'png bytes');
    const r = await share().execute({ path: join(dir, 'plot.png') }, ctx);
    expect(r.output).toContain('Download link: /sessions/sess1/files/plot.png');
  });

  it('refuses traversal, absolute paths outside the roots and links pointing out, naming the roots', async () => {
    const traversal = await share().execute({ path: '../../../../etc/passwd' }, ctx);
    expect(traversal.success).toBe(false);
    expect(traversal.output).toContain(`which is outside the allowed folders (${root})`);
    const absolute = await share().execute({ path: join(outside, 'secret.txt') }, ctx);
    expect(absolute.output).toContain(
      `"${join(outside, 'secret.txt')}" resolves to ${join(outside, 'secret.txt')}, which is outside the allowed folders (${root})`,
    );
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    const link = await share().execute({ path: join(root, 'leak.txt') }, ctx);
    expect(link.output).toContain('outside the allowed folders');
    expect(files.records.size).toBe(0);
  });

  it('copies nothing when a folder on the way is swapped for a link before the open', async () => {
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub/f.txt'), 'mine');
    writeFileSync(join(outside, 'f.txt'), 'not yours');
    class SwappingGuard extends PathGuard {
      override openFile(...args: Parameters<PathGuard['openFile']>): ReturnType<PathGuard['openFile']> {
        rmSync(join(root, 'sub'), { recursive: true });
        symlinkSync(outside, join(root, 'sub'));
        return super.openFile(...args);
      }
    }
    const r = await share(new SwappingGuard({ roots: [root] })).execute(
      { path: join(root, 'sub/f.txt') },
      ctx,
    );
    expect(r.output).toBe(
      `Access denied: "${join(root, 'sub/f.txt')}" resolves to ${join(outside, 'f.txt')}, which is outside ` +
        `the allowed folders (${root}). Use a path inside one of them.`,
    );
    expect(files.records.size).toBe(0);
  });

  it('refuses folders, missing files and files over the size limit', async () => {
    expect((await share().execute({ path: root }, ctx)).output).toBe(
      `${root} is not a regular file; only files can be shared.`,
    );
    expect((await share().execute({ path: join(root, 'nope') }, ctx)).output).toBe(
      `No such file: ${join(root, 'nope')}.`,
    );
    writeFileSync(join(root, 'big.bin'), Buffer.alloc(1024 * 1024 + 1));
    expect((await share().execute({ path: join(root, 'big.bin') }, ctx)).output).toContain(
      'over the session file limit of 1 MB (SESSION_FILES_MAX_SIZE_MB)',
    );
  });
});

describe('content_publish', () => {
  async function shared(name: string, text: string): Promise<void> {
    writeFileSync(join(root, name), text);
    const r = await share().execute({ path: join(root, name) }, ctx);
    expect(r.success).toBe(true);
  }

  it('publishes each kind with what a client needs to render it', async () => {
    await shared('notes.md', '# hi');
    await shared('page.html', '<p>hi</p>');
    await shared('log.txt', 'text');
    await shared('doc.pdf', '%PDF-1.4');
    await shared('pic.png', 'png');
    await shared('part.stl', 'solid part\nendsolid part\n');
    const md = await publish().execute({ name: 'notes.md', title: 'My notes' }, ctx);
    expect(md.output).toBe('Published "notes.md" for the user to see inline as markdown ("My notes").');
    expect(md.metadata).toEqual({
      published: {
        name: 'notes.md',
        url: '/sessions/sess1/files/notes.md',
        kind: 'markdown',
        mime_type: 'text/markdown',
        title: 'My notes',
      },
    });
    const html = await publish().execute({ name: 'page.html' }, ctx);
    expect(html.metadata?.published).toMatchObject({
      kind: 'html',
      title: 'page.html',
    });
    expect((await publish().execute({ name: 'log.txt' }, ctx)).metadata?.published).toMatchObject({
      kind: 'text',
    });
    expect((await publish().execute({ name: 'doc.pdf' }, ctx)).metadata?.published).toMatchObject({
      kind: 'pdf',
    });
    expect((await publish().execute({ name: 'pic.png' }, ctx)).metadata?.published).toMatchObject({
      kind: 'image',
    });
    expect((await publish().execute({ name: 'part.stl' }, ctx)).metadata?.published).toMatchObject({
      kind: 'model',
      mime_type: 'model/stl',
    });
    const asText = await publish().execute({ name: 'page.html', kind: 'text' }, ctx);
    expect(asText.metadata?.published).toMatchObject({ kind: 'text' });
  });

  it('refuses unknown, expired, other sessions’ and non-renderable files', async () => {
    await shared('notes.md', '# hi');
    await shared('data.bin', 'xx');
    expect((await publish().execute({ name: 'nope.md' }, ctx)).output).toBe(
      'This session has no file named "nope.md". Its files: notes.md, data.bin.',
    );
    expect((await publish().execute({ name: 'notes.md' }, makeCtx({ sessionId: 'other' }))).output).toBe(
      'This session has no file named "notes.md". It has no files yet: copy one in with share_file first.',
    );
    const later = new Date(clock.getTime() + 25 * 3_600_000);
    expect((await publish(later).execute({ name: 'notes.md' }, ctx)).success).toBe(false);
    expect((await publish().execute({ name: 'data.bin' }, ctx)).output).toBe(
      '"data.bin" is application/octet-stream, which cannot be shown inline (images, Markdown, HTML, text, PDF and STL models can). ' +
        'The user can still download it from /sessions/sess1/files/data.bin.',
    );
    expect((await publish().execute({ name: 'notes.md', kind: 'image' }, ctx)).output).toBe(
      '"notes.md" is text/markdown, not an image; choose another kind or leave "kind" out.',
    );
    expect((await publish().execute({ name: 'notes.md', kind: 'model' }, ctx)).output).toBe(
      '"notes.md" is text/markdown, not an STL model; choose another kind or leave "kind" out.',
    );
  });

  it('refuses a record whose path lies outside the session folder', async () => {
    await files.add({
      session_id: 'sess1',
      name: 'x.txt',
      path: join(outside, 'secret.txt'),
      size: 11,
      mime_type: 'text/plain',
      created_at: clock.toISOString(),
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect((await publish().execute({ name: 'x.txt' }, ctx)).success).toBe(false);
  });
});
