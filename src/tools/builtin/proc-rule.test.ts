import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { testGuard } from '../test-helpers.js';
import type { ToolResult } from '../types.js';
import { createFilesystemTool } from './filesystem.js';
import { createImageViewTool } from './image-view.js';
import { createShareFileTool } from './share-file.js';
import { makeCtx, memoryFileStore } from './test-support.js';

// Every file tool with FS_ALLOWED_PATHS=* (the default), the setting under which /proc was open.
let base: string;
let child: ReturnType<typeof spawn>;
const files = memoryFileStore();
const ctx = makeCtx({ sessionId: 'proc' });
const settings = () =>
  testSettings({
    FS_ALLOWED_PATHS: '*',
    SESSION_FILES_DIR: join(base, 'session_files'),
    HTTP_ALLOW_PRIVATE: 'false',
  });

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'navi-proc-')));
  // A child process of Navi (this test process): its /proc entry must be refused too.
  child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
});
afterAll(() => {
  child.kill();
  rmSync(base, { recursive: true, force: true });
});

function expectProcRefusal(r: ToolResult, label: string): void {
  expect(r.success, `${label}: ${r.output}`).toBe(false);
  expect(r.output, label).toMatch(/is process information|part of \/proc|do not copy \/proc/);
}

describe('/proc: process information is refused by every file tool', () => {
  const processPaths = () => [
    '/proc/self/environ',
    '/proc/thread-self/environ',
    `/proc/${process.pid}/environ`,
    `/proc/${process.ppid}/environ`,
    `/proc/${child.pid}/environ`,
    '/proc/self/mem',
    '/proc/self/maps',
    '/proc/self/cmdline',
    '/proc/self/fd/0',
    '/proc/self/cwd/package.json',
    '/proc/self/root/etc/hostname',
    `/proc/${process.pid}/task/${process.pid}/environ`,
    '/dev/fd/0',
    '/dev/stdin',
    '/proc/self/../self/environ',
  ];

  it('filesystem: read, base64 read, list, grep, diff, copy, write, delete', async () => {
    const fs = createFilesystemTool({ settings: settings(), guard: testGuard(settings()) });
    const run = (args: Record<string, unknown>) => fs.execute(args, ctx);
    for (const path of processPaths()) {
      expectProcRefusal(await run({ action: 'read', path }), `read ${path}`);
      expectProcRefusal(await run({ action: 'read', path, encoding: 'base64' }), `base64 ${path}`);
      expectProcRefusal(
        await run({ action: 'copy', path, destination: join(base, 'stolen') }),
        `copy ${path}`,
      );
      expectProcRefusal(await run({ action: 'diff', path, content: '' }), `diff ${path}`);
    }
    for (const path of ['/proc/self', '/proc/thread-self', `/proc/${process.pid}`, `/proc/${child.pid}/fd`]) {
      expectProcRefusal(await run({ action: 'list', path }), `list ${path}`);
      expectProcRefusal(await run({ action: 'grep', path, pattern: 'KEY' }), `grep ${path}`);
      expectProcRefusal(await run({ action: 'delete', path, recursive: true }), `delete ${path}`);
      expectProcRefusal(
        await run({ action: 'copy', path, destination: join(base, 'copied') }),
        `copy ${path}`,
      );
    }
    expectProcRefusal(await run({ action: 'write', path: '/proc/self/comm', content: 'x' }), 'write comm');
    expect(existsSync(join(base, 'stolen'))).toBe(false);
    expect(existsSync(join(base, 'copied'))).toBe(false);
  });

  it('links pointing into /proc are resolved and refused, and /proc folders are not descended into', async () => {
    const fs = createFilesystemTool({ settings: settings(), guard: testGuard(settings()) });
    const run = (args: Record<string, unknown>) => fs.execute(args, ctx);
    mkdirSync(join(base, 'links'));
    symlinkSync('/proc/self/environ', join(base, 'links/env'));
    symlinkSync('/proc', join(base, 'links/proc'));
    symlinkSync('/dev/fd', join(base, 'links/fd'));
    expectProcRefusal(await run({ action: 'read', path: join(base, 'links/env') }), 'link to environ');
    expectProcRefusal(
      await run({ action: 'read', path: join(base, 'links/proc/self/environ') }),
      'via /proc link',
    );
    expectProcRefusal(await run({ action: 'read', path: join(base, 'links/fd/0') }), 'via /dev/fd link');
    // Searching or copying /proc as a folder does not reach into processes' folders.
    const grep = await run({ action: 'grep', path: '/proc', pattern: 'PATH=' });
    expect(grep.output).not.toContain('/environ');
    expectProcRefusal(
      await run({ action: 'copy', path: '/proc/sys', destination: join(base, 'sys') }),
      'copy /proc/sys',
    );
    expect(existsSync(join(base, 'sys'))).toBe(false);
    // The rule is narrow: general system information stays readable.
    expect((await run({ action: 'read', path: '/proc/cpuinfo' })).success).toBe(true);
  });

  it('share_file and image_view refuse the same paths and store nothing', async () => {
    const share = createShareFileTool({ settings: settings(), guard: testGuard(settings()), files });
    const image = createImageViewTool({ settings: settings(), guard: testGuard(settings()) });
    for (const path of processPaths()) {
      expectProcRefusal(await share.execute({ path }, ctx), `share ${path}`);
      expectProcRefusal(await image.execute({ source: path }, ctx), `image ${path}`);
    }
    expect(files.records.size).toBe(0);
    const stored = join(base, 'session_files', 'proc');
    expect(existsSync(stored) ? readdirSync(stored) : []).toEqual([]);
  });

  it('a restricted root that is /proc itself still refuses processes', async () => {
    const fs = createFilesystemTool({
      settings: testSettings({ FS_ALLOWED_PATHS: '/proc' }),
      guard: testGuard(testSettings({ FS_ALLOWED_PATHS: '/proc' })),
    });
    expectProcRefusal(await fs.execute({ action: 'read', path: '/proc/self/environ' }, ctx), 'root /proc');
    expectProcRefusal(await fs.execute({ action: 'read', path: 'self/environ' }, ctx), 'relative');
  });
});
