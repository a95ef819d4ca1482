/**
 * `navi backup` and `navi restore` as real child processes against a real `navi serve`: a backup
 * taken while an answer streams is a whole, consistent copy, and restoring it into an empty data
 * folder brings the sessions and their files back to a new server. Restore refuses while Navi
 * uses the data, and refuses anything that is not a whole backup, touching nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { expectCliRefusal } from '../support/cli-refusal.js';
import { tempDir } from '../support/navi.js';
import { naviProcessEnv, runNavi, spawnNavi } from '../support/navi-process.js';
import { getSession, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const freePort = async () => Number(new URL(await closedPortUrl()).port);

/** The environment of a Navi whose data files all sit at their defaults in `dataDir`. */
function dataFolderEnv(env: NodeJS.ProcessEnv, dataDir: string, port: number): NodeJS.ProcessEnv {
  const { DB_PATH: _db, SESSION_FILES_DIR: _files, ...rest } = env;
  return { ...rest, NAVI_DATA_DIR: dataDir, NAVI_PORT: String(port) };
}

describe('navi backup and navi restore', () => {
  let fake: FakeLlm;
  const dir = tempDir('navi-backup-');
  let port = 0;
  let env: NodeJS.ProcessEnv;
  let child: ChildProcess;
  const children: ChildProcess[] = [];
  const url = () => `http://127.0.0.1:${port}`;
  let finished = '';
  let backupDir = '';

  beforeAll(async () => {
    fake = await startFakeLlm();
    port = await freePort();
    env = naviProcessEnv({ dir, port, ollamaUrl: fake.ollamaUrl });
    child = await spawnNavi({ dir, port, ollamaUrl: fake.ollamaUrl }, env);
    children.push(child);
  }, 90_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await fake?.close();
  });

  const createSession = async (base = url()): Promise<string> => {
    const res = await fetch(`${base}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    return ((await res.json()) as { session_id: string }).session_id;
  };

  it('backs up while an answer streams: the copy is whole and restores into an empty data folder', async () => {
    finished = await createSession();
    fake.enqueue({ text: 'The capital of France is Paris.' });
    expect((await postMessage({ url: url() }, finished, 'what is the capital of France?')).status).toBe(200);
    const form = new FormData();
    form.append('file', new Blob(['plan for the week']), 'notes.txt');
    const upload = await fetch(`${url()}/sessions/${finished}/files`, { method: 'POST', body: form });
    expect(upload.status).toBe(201);
    const uploaded = ((await upload.json()) as { name: string }).name;

    // An answer long enough to still be streaming, and being saved, while the backup runs.
    const streaming = await createSession();
    fake.enqueue({ text: 'word '.repeat(4000), chunkSize: 5, delayMs: 15 });
    const client = await EventClient.connect(`ws://127.0.0.1:${port}/ws/sessions/${streaming}`);
    client.send({ type: 'message', content: 'tell me a very long story' });
    await client.waitFor((e) => e.type === 'stream_delta');

    backupDir = join(dir, 'backups', 'first');
    const backup = await runNavi(['backup', backupDir], env, dir);
    expect(backup.code, backup.stderr).toBe(0);
    // The run was still going, so the backup read a database being written.
    expect(client.events.some((e) => e.type === 'stream_end')).toBe(false);
    expect(backup.stdout).toContain(`Backed up Navi's data to ${backupDir}`);
    expect(backup.stdout).toContain('2 sessions');

    await fetch(`${url()}/sessions/${streaming}/stop`, { method: 'POST' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_stopped');
    await client.close();

    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
      format: string;
      items: { item: string; name: string }[];
      absent: string[];
    };
    expect(manifest.format).toBe('navi-backup');
    expect(manifest.items.map((i) => i.item)).toEqual(['database', 'session_files']);
    expect(manifest.absent).toEqual(expect.arrayContaining(['vault_database', 'vault_key', 'settings']));
    const copy = new Database(join(backupDir, 'navi.db'), { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      const ids = (copy.prepare('SELECT id FROM sessions').all() as { id: string }[]).map((r) => r.id);
      expect(ids.sort()).toEqual([finished, streaming].sort());
    } finally {
      copy.close();
    }

    // Into an empty data folder, from a folder with no database of its own.
    const fresh = tempDir('navi-restored-');
    const freshData = join(fresh, 'data');
    const freshPort = await freePort();
    const freshEnv = dataFolderEnv(env, freshData, freshPort);
    const restored = await runNavi(['restore', backupDir], freshEnv, fresh);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored database to ${join(freshData, 'navi.db')}`);
    expect(restored.stdout).not.toContain('kept the current one');

    const server = await spawnNavi({ dir: fresh, port: freshPort, ollamaUrl: fake.ollamaUrl }, freshEnv);
    children.push(server);
    const base = { url: `http://127.0.0.1:${freshPort}` };
    const session = await getSession(base, finished);
    expect(session.messages.map((m) => m.content)).toEqual([
      'what is the capital of France?',
      'The capital of France is Paris.',
    ]);
    await getSession(base, streaming);
    // The file is served from the new SESSION_FILES_DIR.
    const file = await fetch(`${base.url}/sessions/${finished}/files/${uploaded}`);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('plan for the week');
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));

    // Restoring again moves what is there now into the backups folder, which the agent never sees.
    const again = await runNavi(['restore', backupDir], freshEnv, fresh);
    expect(again.code, again.stderr).toBe(0);
    const [aside, ...more] = readdirSync(join(freshData, 'backups'));
    expect(more).toEqual([]);
    expect(aside).toMatch(/^before-restore-\d{8}T\d{6}Z$/);
    const asideDir = join(freshData, 'backups', aside as string);
    expect(readdirSync(asideDir).sort()).toEqual(['navi.db', 'session_files']);
    expect(readFileSync(join(asideDir, 'session_files', finished, uploaded), 'utf8')).toBe(
      'plan for the week',
    );
    expect(again.stdout).toContain(`kept the current one as ${join(asideDir, 'navi.db')}`);
  }, 120_000);

  it('restore refuses while a Navi serves on the port or holds the database, and moves nothing', async () => {
    expect(backupDir).not.toBe('');
    const serving = await runNavi(['restore', backupDir], env, dir);
    expectCliRefusal(serving, 'restore', `a Navi is serving on 127.0.0.1:${port}`, 'stop it first');
    // Another port, the same database: the server's open connection gives it away.
    const held = await runNavi(['restore', backupDir], { ...env, NAVI_PORT: String(await freePort()) }, dir);
    expectCliRefusal(held, 'restore', `${join(dir, 'navi.db')} is open in another process`);
    expect(readdirSync(dir).filter((n) => n.includes('restoring'))).toEqual([]);
    expect(existsSync(join(dir, 'data', 'backups'))).toBe(false);
    expect((await getSession({ url: url() }, finished)).messages).toHaveLength(2);
  }, 60_000);

  it('restore refuses anything that is not a whole backup, and says what is wrong', async () => {
    const target = tempDir('navi-restore-target-');
    const targetEnv = dataFolderEnv(env, join(target, 'data'), await freePort());
    const restore = (src: string) => runNavi(['restore', src], targetEnv, target);
    /** A copy of the good backup, changed by `change`. */
    const broken = (name: string, change: (folder: string) => void): string => {
      const folder = join(target, name);
      mkdirSync(folder);
      for (const entry of readdirSync(backupDir, { recursive: true, withFileTypes: true })) {
        const from = join(entry.parentPath, entry.name);
        const to = join(folder, from.slice(backupDir.length));
        if (entry.isDirectory()) mkdirSync(to, { recursive: true });
        else writeFileSync(to, readFileSync(from));
      }
      change(folder);
      return folder;
    };
    const editManifest = (folder: string, edit: (m: Record<string, unknown>) => void) => {
      const path = join(folder, 'manifest.json');
      const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      edit(manifest);
      writeFileSync(path, JSON.stringify(manifest));
    };
    const items = (m: Record<string, unknown>) => m.items as { item: string; name: string; bytes: number }[];

    expectCliRefusal(await runNavi(['restore'], targetEnv, target), 'restore', 'takes one argument');
    expectCliRefusal(
      await runNavi(['restore', 'a', 'b'], targetEnv, target),
      'restore',
      'takes one argument',
    );
    expectCliRefusal(await restore(join(target, 'nowhere')), 'restore', 'there is no folder');
    expectCliRefusal(await restore(join(backupDir, 'manifest.json')), 'restore', 'is a file');
    expectCliRefusal(
      await restore(target),
      'restore',
      'has no manifest.json',
      'not a backup made by navi backup',
    );
    const notJson = broken('not-json', (f) => writeFileSync(join(f, 'manifest.json'), '{"format": "navi-b'));
    expectCliRefusal(await restore(notJson), 'restore', 'is not a Navi backup manifest: it is not JSON');
    const other = broken('other', (f) => writeFileSync(join(f, 'manifest.json'), '{"name": "my-package"}'));
    expectCliRefusal(await restore(other), 'restore', 'it does not say "format": "navi-backup"');
    const future = broken('future', (f) => editManifest(f, (m) => Object.assign(m, { version: 99 })));
    expectCliRefusal(await restore(future), 'restore', 'version 99 backup', 'upgrade Navi');
    const wrongType = broken('wrong-type', (f) => editManifest(f, (m) => Object.assign(m, { items: 'all' })));
    expectCliRefusal(await restore(wrongType), 'restore', 'items');
    const outside = broken('escape', (f) =>
      editManifest(f, (m) => {
        (items(m)[0] as { name: string }).name = '../../../etc/passwd';
      }),
    );
    expectCliRefusal(await restore(outside), 'restore', 'must be a plain file name inside the backup');
    const huge = broken('huge', (f) =>
      writeFileSync(join(f, 'manifest.json'), `{"format":"navi-backup","x":"${'x'.repeat(5_000_000)}"}`),
    );
    expectCliRefusal(
      await restore(huge),
      'restore',
      'is not a Navi backup manifest: it is 5000',
      'a manifest is a few hundred',
    );
    const missing = broken('missing', (f) => truncateSync(join(f, 'navi.db'), 0));
    expectCliRefusal(await restore(missing), 'restore', 'the backup is incomplete or was changed');
    const garbage = 'this is not a database at all, only text pretending to be one. '.repeat(64);
    const corrupt = broken('corrupt', (f) => {
      writeFileSync(join(f, 'navi.db'), garbage);
      editManifest(f, (m) => {
        (items(m)[0] as { bytes: number }).bytes = garbage.length;
      });
    });
    expectCliRefusal(
      await restore(corrupt),
      'restore',
      'cannot be read as a SQLite database',
      'restore another backup',
    );
    const newer = broken('newer', (f) => {
      const db = new Database(join(f, 'navi.db'));
      db.prepare(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', '')",
      ).run();
      db.close();
      editManifest(f, (m) => {
        (items(m)[0] as { bytes: number }).bytes = readFileSync(join(f, 'navi.db')).length;
      });
    });
    expectCliRefusal(await restore(newer), 'restore', 'schema version 999', 'upgrade Navi');
    const foreign = broken('foreign', (f) => {
      const db = new Database(join(f, 'navi.db'));
      db.exec('DROP TABLE schema_migrations');
      db.close();
      editManifest(f, (m) => {
        (items(m)[0] as { bytes: number }).bytes = readFileSync(join(f, 'navi.db')).length;
      });
    });
    expectCliRefusal(await restore(foreign), 'restore', 'is not a Navi database');
    // Nothing was written where the data goes.
    expect(existsSync(join(target, 'data'))).toBe(false);
  }, 120_000);

  it('backup refuses a destination it would mix into, and a data folder with no database', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    expectCliRefusal(await runNavi(['backup', file], env, dir), 'backup', 'is a file');
    expectCliRefusal(await runNavi(['backup', backupDir], env, dir), 'backup', 'is not empty');
    expectCliRefusal(
      await runNavi(['backup', join(dir, 'files', 'inside')], env, dir),
      'backup',
      'is inside',
    );
    expectCliRefusal(await runNavi(['backup', 'a', 'b'], env, dir), 'backup', 'at most one argument');
    expectCliRefusal(await runNavi(['backup', '--all'], env, dir), 'backup', 'at most one argument');
    const empty = tempDir('navi-backup-empty-');
    const none = await runNavi(['backup'], dataFolderEnv(env, join(empty, 'data'), await freePort()), empty);
    expectCliRefusal(none, 'backup', 'there is no database at', 'nothing to back up');
    expect(existsSync(join(empty, 'data', 'backups'))).toBe(false);
  }, 60_000);

  it('backup without a destination writes a timestamped folder under the data folder', async () => {
    const run = await runNavi(['backup'], env, dir);
    expect(run.code, run.stderr).toBe(0);
    const backups = readdirSync(join(dir, 'data', 'backups'));
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(/^navi-\d{8}T\d{6}Z$/);
    expect(run.stdout).toContain(`npx navi restore ${join(dir, 'data', 'backups', backups[0] as string)}`);
  }, 60_000);
});
