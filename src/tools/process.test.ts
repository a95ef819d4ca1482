import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runProcess } from './process.js';
import { processGone, type TempDir, tempModuleDir } from './test-helpers.js';

let tmp: TempDir | undefined;
afterEach(() => tmp?.cleanup());

describe('runProcess', () => {
  it('captures output, exit code and stdin', async () => {
    const r = await runProcess('sh', ['-c', 'cat; echo err >&2; exit 3'], { input: 'hello' });
    expect(r).toMatchObject({
      stdout: 'hello',
      stderr: 'err\n',
      exitCode: 3,
      aborted: false,
      timedOut: false,
    });
  });

  it('reports a program that cannot start instead of rejecting', async () => {
    const r = await runProcess('/nonexistent/program', []);
    expect(r.spawnError).toMatch(/ENOENT/);
  });

  it('keeps only the first bytes of a flood of output', async () => {
    const r = await runProcess('sh', ['-c', 'yes | head -c 100000'], { maxOutputBytes: 1000 });
    expect(r.stdout.length).toBe(1000);
    expect(r.truncated).toBe(true);
  });

  it('kills the whole process group on abort, grandchildren included', async () => {
    tmp = tempModuleDir('navi-proc-');
    const pidFile = join(tmp.dir, 'grandchild.pid');
    const controller = new AbortController();
    let leader = 0;
    const running = runProcess('sh', ['-c', `sleep 600 & echo $! > ${pidFile}; wait`], {
      signal: controller.signal,
      onSpawn: (pid) => {
        leader = pid;
      },
    });
    await vi.waitFor(() =>
      expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true),
    );
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(processGone(grandchild)).toBe(false);
    controller.abort();
    const r = await running;
    expect(r.aborted).toBe(true);
    await vi.waitFor(() => {
      expect(processGone(leader)).toBe(true);
      expect(processGone(grandchild)).toBe(true);
    });
  });

  it('escalates to SIGKILL for a program that ignores SIGTERM', async () => {
    const r = await runProcess('sh', ['-c', "trap '' TERM; while true; do sleep 0.05; done"], {
      timeoutMs: 200,
      killGraceMs: 100,
    });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
  });
});
