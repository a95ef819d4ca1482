/**
 * `npm run soak` for a few seconds, as a real subprocess against a real `navi serve`: every kind
 * of traffic ran, samples were printed, nothing unexpected happened. The hour-long run is the
 * real measure; this keeps the driver from rotting between runs of it.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Summary } from '../../soak/report.js';
import { TRAFFIC_KINDS } from '../../soak/tally.js';
import { repoRoot, tempDir } from '../support/navi.js';

/** tsx by its file, so the driver starts in a folder with no node_modules too. */
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function soak(args: string[], cwd = repoRoot): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, join(repoRoot, 'soak/run.ts'), ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('npm run soak', () => {
  it('runs every kind of traffic, samples the server and finds no error in a short run', async () => {
    const dir = tempDir('navi-soak-test-');
    const json = join(dir, 'summary.json');
    // Relative to the driver's folder, which is not the server's; and not made beforehand.
    const args = ['--seconds', '12', '--sample-seconds', '3', '--json', 'summary.json'];
    const { code, out } = await soak([...args, '--heap-snapshots', 'snapshots'], dir);
    let text = '';
    let snapshots: string[] = [];
    try {
      expect(out, out).toContain('soak: PASS');
      expect(code, out).toBe(0);
      text = readFileSync(json, 'utf8');
      snapshots = readdirSync(join(dir, 'snapshots')).filter((f) => f.endsWith('.heapsnapshot'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(snapshots, 'one heap snapshot at each idle point').toHaveLength(2);
    const summary = JSON.parse(text) as Summary & { shell: boolean };
    expect(summary.errors, summary.problems.join('\n')).toBe(0);
    const missing = TRAFFIC_KINDS.filter((k) => summary.counts[k] === 0);
    expect(missing, `kinds of traffic that never ran:\n${out}`).toEqual([]);
    expect(summary.samples.length).toBeGreaterThanOrEqual(2);
    for (const s of summary.samples) {
      expect(s.heapMb).toBeGreaterThan(0);
      expect(s.heapLowMb).toBeLessThanOrEqual(s.heapMb);
      expect(s.fds).toBeGreaterThan(0);
    }
    expect(out).toMatch(/^\s+\d+:\d\d {2}heap [\d.]+ MB \(low [\d.]+\) {2}rss [\d.]+ MB {2}fds \d+/m);
    expect(out).toContain('heap growth after warm-up');
    // Every tool turn ran each of its calls: write, read, save, search, and echo when sandboxed.
    expect(summary.counts.tool_calls).toBe(summary.counts.turn_tools * (summary.shell ? 5 : 4));
  }, 180_000);

  it.concurrent.each([
    [['--minutes', 'soon'], '--minutes must be a number of at least 0.1, not "soon"'],
    [['--seconds', '-3'], '--seconds must be a number of at least 5, not "-3"'],
    [['--users', '8', '--sessions', '2'], '--sessions must be at least --users'],
    [['--colour', 'blue'], 'unknown option(s): --colour'],
    [['--json'], '--json needs a value'],
    [['fast'], 'unexpected argument "fast"'],
  ])('refuses %j before starting anything, saying what to pass', async (args, message) => {
    const { code, out } = await soak(args);
    expect(code).toBe(2);
    expect(out).toContain(message);
    expect(out).toContain('usage: npm run soak --');
  });
});
