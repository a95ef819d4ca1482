import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { processGone } from '../../../test/support/processes.js';
import { CappedOutput } from './capped-output.js';
import { runProcess } from './run-process.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-proc-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sh = (script: string, extra: Partial<Parameters<typeof runProcess>[0]> = {}) =>
  runProcess({ command: 'sh', args: ['-c', script], ...extra });

/** Starts `sleep 600` in the background of a shell and resolves with both pids once known. */
async function withGrandchild(extra: Partial<Parameters<typeof runProcess>[0]>) {
  const pidFile = join(dir, 'grandchild.pid');
  let leader = 0;
  const running = sh(`sleep 600 & echo $! > ${pidFile}; wait`, {
    ...extra,
    onSpawn: (pid) => {
      leader = pid;
    },
  });
  await vi.waitFor(() =>
    expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true),
  );
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  expect(processGone(grandchild)).toBe(false);
  return { running, leader, grandchild };
}

describe('runProcess', () => {
  it('captures output, exit code and stdin', async () => {
    const r = await sh('cat; echo err >&2; exit 3', { stdin: 'hello' });
    expect(r).toMatchObject({
      stdout: 'hello',
      stderr: 'err\n',
      exitCode: 3,
      aborted: false,
      timedOut: false,
      outputLimitHit: false,
    });
    expect(r.pid).toBeGreaterThan(0);
  });

  it('rejects with the reason when the program cannot start', async () => {
    await expect(runProcess({ command: '/nonexistent/program', args: [] })).rejects.toThrow(/ENOENT/);
  });

  it('keeps only the first bytes of a flood of output and counts the rest', async () => {
    const r = await sh('yes | head -c 100000', { maxOutputBytes: 1000 });
    expect(r.stdout.length).toBe(1000);
    expect(r.stdoutDropped).toBe(99_000);
    expect(r.outputLimitHit).toBe(true);
    expect(r.exitCode).toBe(0);
  });

  it('kills the program at the cap when asked to', async () => {
    const r = await sh('yes', { maxOutputBytes: 1000, killOnOverflow: true });
    expect(r.outputLimitHit).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout.length).toBe(1000);
  });

  it('kills the whole process group on abort, grandchildren included', async () => {
    const controller = new AbortController();
    const { running, leader, grandchild } = await withGrandchild({ signal: controller.signal });
    controller.abort();
    const r = await running;
    expect(r.aborted).toBe(true);
    await vi.waitFor(() => {
      expect(processGone(leader)).toBe(true);
      expect(processGone(grandchild)).toBe(true);
    });
  });

  it('kills the whole process group at the time limit', async () => {
    const { running, grandchild } = await withGrandchild({ timeoutMs: 300 });
    const r = await running;
    expect(r.timedOut).toBe(true);
    await vi.waitFor(() => expect(processGone(grandchild)).toBe(true));
  });

  it('does not start a program whose signal is already aborted', async () => {
    const r = await sh('echo never', { signal: AbortSignal.abort() });
    expect(r.aborted).toBe(true);
    expect(r.stdout).toBe('');
  });

  it('escalates to SIGKILL after the grace period for a program that ignores SIGTERM', async () => {
    const r = await sh("trap '' TERM; while true; do sleep 0.05; done", {
      timeoutMs: 200,
      killGraceMs: 100,
    });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
  });

  it('lets a program that handles SIGTERM exit on its own within the grace period', async () => {
    const r = await sh("trap 'echo bye; exit 0' TERM; while true; do sleep 0.05; done", {
      timeoutMs: 200,
      killGraceMs: 5000,
    });
    expect(r.timedOut).toBe(true);
    expect(r.stdout).toBe('bye\n');
    expect(r.exitCode).toBe(0);
  });
});

describe('CappedOutput', () => {
  it('keeps bytes up to the cap and notes how many it left out', () => {
    const out = new CappedOutput(5);
    expect(out.push(Buffer.from('abc'))).toBe(true);
    expect(out.push(Buffer.from('defg'))).toBe(false);
    expect(out.push(Buffer.from('hi'))).toBe(false);
    expect(out.text()).toBe('abcde');
    expect(out.dropped).toBe(4);
    expect(out.textWithNote()).toBe('abcde\n[… 4 more bytes not shown]');
  });
});
