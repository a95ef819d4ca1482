/**
 * A process killed while it streams an answer must leave a consistent database holding
 * everything it committed (WAL with synchronous=NORMAL is durable across process crashes).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkIntegrity } from './database.js';
import { createSqliteStores } from './index.js';

const script = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-crash-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the writer until it reports progress, then SIGKILLs it. */
async function runAndKill(file: string): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, file], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
  });
  child.kill('SIGKILL');
  return exited;
}

it('keeps committed data and a clean file after a SIGKILL mid-stream', async () => {
  const file = join(dir, 'navi.db');
  expect(await runAndKill(file)).toBe('SIGKILL');
  // The WAL was never checkpointed into the main file, so recovery is really exercised.
  expect(existsSync(`${file}-wal`)).toBe(true);

  const stores = createSqliteStores(file);
  try {
    expect(checkIntegrity(stores.db)).toEqual([]);
    expect(stores.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(await stores.sessions.get('crash')).toMatchObject({
      title: 'Before the crash',
      profile_id: 'secretary',
    });
    expect(await stores.kv.get('crash', 'scratchpad')).toEqual({ notes: 'kept' });

    const display = await stores.sessions.getMessages('crash');
    const context = await stores.sessions.getContext('crash');
    expect(display.map((m) => m.id)).toEqual(['u1', 'a1']);
    const answer = display[1]!;
    // At least the 200 updates made before READY, and a whole update: never a torn one.
    expect(answer.content).toMatch(/^(chunk;){200,}$/);
    const chunks = (answer.content ?? '').length / 'chunk;'.length;
    expect(answer.thinking).toBe(`thought ${chunks}`);
    expect(answer.interrupted).toBe(true);
    // Both buffers are updated in one transaction, so they agree.
    expect(context).toEqual(display);
  } finally {
    stores.close();
  }
});
