import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { riskOf } from '../risk.js';
import { runValidated } from '../test-helpers.js';
import { createSystemInfoTool } from './system-info.js';
import { makeCtx } from './test-support.js';

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(os.tmpdir(), 'navi-sysinfo-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const ctx = makeCtx();

function tool(allowed: string) {
  return createSystemInfoTool({
    settings: testSettings({
      DB_PATH: join(base, 'data', 'navi.db'),
      SESSION_FILES_DIR: join(base, 'data', 'files'),
      FS_ALLOWED_PATHS: allowed,
    }),
  });
}

describe('system_info', () => {
  it("reports this machine's facts as the operating system gives them", async () => {
    mkdirSync(join(base, 'work'));
    const r = await runValidated(tool(join(base, 'work')), {}, ctx);
    expect(r.success).toBe(true);
    expect(r.output).toContain(`Hostname: ${os.hostname()}`);
    expect(r.output).toContain(`Kernel: ${os.type()} ${os.release()}`);
    expect(r.output).toContain(`CPU: ${os.availableParallelism()} × `);
    expect(r.output).toContain(`Node.js: ${process.version}`);
    expect(r.output).toMatch(/Memory: [\d.]+ GiB total, /);
    expect(r.output).toMatch(/Load average: [\d.]+, [\d.]+, [\d.]+ \(1, 5, 15 min/);
    expect(r.metadata).toMatchObject({
      hostname: os.hostname(),
      cpu: { count: os.availableParallelism() },
      memory: { totalBytes: os.totalmem() },
      node: { version: process.version },
    });
  });

  it('gives the disk space of the data folder (not created yet) and the allowed folders, once per file system', async () => {
    mkdirSync(join(base, 'work'));
    const r = await runValidated(tool(`${join(base, 'work')},${join(base, 'later')}`), {}, ctx);
    const disks = r.metadata?.disks as { folders: { label: string; path: string }[]; totalBytes: number }[];
    // Every folder lies in the same temporary folder: one file system, four folders on it.
    expect(disks).toHaveLength(1);
    expect(disks[0]?.folders.map((f) => f.label)).toEqual([
      'data folder',
      'shared files',
      'allowed folder',
      'allowed folder',
    ]);
    const fs = statfsSync(base);
    expect(disks[0]?.totalBytes).toBe(fs.blocks * fs.bsize);
    expect(r.output).toContain(
      `data folder ${join(base, 'data')}, shared files ${join(base, 'data', 'files')}`,
    );
  });

  it('lists the whole file system when every folder is allowed', async () => {
    const r = await runValidated(tool('*'), {}, ctx);
    expect(r.output).toContain('allowed folders (*) /: ');
  });

  it('reveals no environment variables, user accounts or home folders', async () => {
    process.env.NAVI_TEST_CANARY_TOKEN = 'canary-value-5d1f0e';
    try {
      const r = await runValidated(tool('*'), {}, ctx);
      const all = `${r.output}${JSON.stringify(r.metadata)}`;
      expect(all).not.toContain('canary-value-5d1f0e');
      expect(all).not.toContain(os.homedir());
      const user = os.userInfo().username;
      if (!os.hostname().includes(user)) expect(all).not.toMatch(new RegExp(`\\b${user}\\b`));
    } finally {
      delete process.env.NAVI_TEST_CANARY_TOKEN;
    }
  });

  it('is silent, read-only and in the meta group', () => {
    const t = tool('*');
    expect(t.group).toBe('meta');
    expect(riskOf(t)).toEqual({ reads: true });
  });

  it('refuses arguments it does not take', async () => {
    const r = await runValidated(tool('*'), { path: '/etc/shadow' }, ctx);
    expect(r.success).toBe(false);
    expect(r.output).toContain('path');
    const huge = await runValidated(tool('*'), { x: 'y'.repeat(100_000) }, ctx);
    expect(huge.success).toBe(false);
  });
});
