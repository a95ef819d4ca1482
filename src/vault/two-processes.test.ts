/**
 * Navi and the gnexus-creds server use one vault at the same time: real child processes,
 * started together, writing into the same files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openVault, type VaultOptions } from './index.js';
import { agent, useTempVault } from './test-support.js';

const script = join(import.meta.dirname, 'fixtures', 'vault-child.ts');

const t = useTempVault({ open: false });

interface ChildResult {
  ids?: string[];
  keySource?: string;
  error?: string;
}

/** Starts every child, waits until all are ready, then lets them go at once. */
async function runTogether(options: VaultOptions, children: [string, number][]): Promise<ChildResult[]> {
  const procs: ChildProcess[] = children.map(([prefix, count]) =>
    spawn(process.execPath, ['--import', 'tsx', script, prefix, String(count)], {
      env: { ...process.env, VAULT_OPTIONS: JSON.stringify(options) },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const outputs = procs.map((p) => {
    let out = '';
    let err = '';
    p.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const ready = new Promise<void>((resolve, reject) => {
      const check = () => (out.startsWith('ready\n') ? resolve() : undefined);
      p.stdout?.on('data', check);
      p.once('exit', () => reject(new Error(`child ended before it was ready: ${err}`)));
    });
    const done = new Promise<string>((resolve) => p.once('close', () => resolve(`${out}\n${err}`)));
    return { ready, done, output: () => out, errors: () => err };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const p of procs) p.stdin?.end('go\n');
  await Promise.all(outputs.map((o) => o.done));
  return outputs.map((o) => {
    const line = o
      .output()
      .split('\n')
      .find((l) => l.startsWith('{'));
    if (!line) throw new Error(`a child printed no result: ${o.output()} ${o.errors()}`);
    return JSON.parse(line) as ChildResult;
  });
}

describe('two processes on one vault', () => {
  it('two writers creating 50 secrets each at once: all 100 are there and readable', async () => {
    const options = t.options();
    openVault(options).close(); // the vault exists; this test is about writing together
    const results = await runTogether(options, [
      ['navi', 50],
      ['creds', 50],
    ]);
    expect(results).toEqual([
      expect.objectContaining({ ids: expect.any(Array) }),
      expect.objectContaining({ ids: expect.any(Array) }),
    ]);
    const vault = openVault(options);
    try {
      const all = vault.search({ limit: 200 });
      expect(all).toHaveLength(100);
      for (const [prefix, result] of [
        ['navi', results[0]],
        ['creds', results[1]],
      ] as const) {
        expect(result?.ids).toHaveLength(50);
        result?.ids?.forEach((id, i) => {
          expect(vault.reveal(id, 'password', agent)).toBe(`${prefix}-secret-${i}`);
        });
      }
      // 100 creations and 100 reveals, each a whole line.
      const lines = readFileSync(options.auditLog, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(200);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      vault.close();
    }
  }, 120_000);

  it('two processes opening a new vault at once end with one key file and read each other', async () => {
    const options = t.options({ keyFile: join(t.dir, 'keys', 'vault.key') });
    const results = await runTogether(options, [
      ['first', 1],
      ['second', 1],
    ]);
    expect(results).toEqual([
      expect.objectContaining({ ids: expect.any(Array) }),
      expect.objectContaining({ ids: expect.any(Array) }),
    ]);
    expect(results.map((r) => r.keySource)).toEqual(['file', 'file']);
    expect(readdirSync(join(t.dir, 'keys'))).toEqual(['vault.key']);
    const vault = openVault(options);
    try {
      expect(vault.reveal(results[0]?.ids?.[0] ?? '', 'password', agent)).toBe('first-secret-0');
      expect(vault.reveal(results[1]?.ids?.[0] ?? '', 'password', agent)).toBe('second-secret-0');
    } finally {
      vault.close();
    }
  }, 120_000);
});
