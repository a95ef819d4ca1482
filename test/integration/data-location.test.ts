/**
 * Where a real `navi serve` keeps its data. An install from before the data folder (a
 * `./navi.db` in the folder Navi starts in) keeps its sessions and files there, says so at
 * start-up, and `navi data move` moves them into the data folder, after which the next start
 * finds everything there. A new install writes nothing into its working folder.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { naviProcessEnv, runNavi, spawnNavi } from '../support/navi-process.js';
import { getSession, postMessage } from '../support/rest.js';

describe('the data folder and an older install', () => {
  let fake: FakeLlm;
  const children: ChildProcess[] = [];
  const work = tempDir('navi-legacy-');
  const data = join(work, 'data-folder');
  let port = 0;
  /** The environment of a Navi whose data files are left at their defaults. */
  let env: NodeJS.ProcessEnv;
  const url = () => `http://127.0.0.1:${port}`;

  /** Starts `navi serve` in `cwd`; resolves with it and a reader of what it logged. */
  const serve = async (environment: NodeJS.ProcessEnv, cwd = work) => {
    const child = await spawnNavi(
      { dir: cwd, port, ollamaUrl: fake.ollamaUrl, stdio: ['ignore', 'pipe', 'pipe'] },
      environment,
    );
    children.push(child);
    let log = '';
    child.stdout?.on('data', (d: Buffer) => {
      log += d.toString();
    });
    const stop = async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    };
    return { child, log: () => log, stop };
  };

  beforeAll(async () => {
    fake = await startFakeLlm();
    port = Number(new URL(await closedPortUrl()).port);
    const {
      DB_PATH: _db,
      SESSION_FILES_DIR: _files,
      ...rest
    } = naviProcessEnv({
      dir: work,
      port,
      ollamaUrl: fake.ollamaUrl,
    });
    env = { ...rest, NAVI_DATA_DIR: data, LOG_LEVEL: 'INFO' };
  }, 60_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await fake?.close();
  });

  let sessionId = '';
  let fileName = '';

  it('keeps using ./navi.db and ./session_files, and says where the data is and how to move it', async () => {
    // What an install from before the data folder left: its defaults were these names in the
    // working folder.
    const old = await serve({ ...env, DB_PATH: 'navi.db', SESSION_FILES_DIR: 'session_files' });
    sessionId = (
      (await (
        await fetch(`${url()}/sessions`, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json' },
        })
      ).json()) as { session_id: string }
    ).session_id;
    fake.enqueue({ text: 'Noted: the boiler is serviced in May.' });
    expect((await postMessage({ url: url() }, sessionId, 'remember the boiler service')).status).toBe(200);
    const form = new FormData();
    form.append('file', new Blob(['boiler manual']), 'boiler.txt');
    const upload = await fetch(`${url()}/sessions/${sessionId}/files`, { method: 'POST', body: form });
    fileName = ((await upload.json()) as { name: string }).name;
    await old.stop();
    expect(existsSync(join(work, 'navi.db'))).toBe(true);

    const upgraded = await serve(env);
    const session = await getSession({ url: url() }, sessionId);
    expect(session.messages.at(-1)?.content).toBe('Noted: the boiler is serviced in May.');
    expect(await (await fetch(`${url()}/sessions/${sessionId}/files/${fileName}`)).text()).toBe(
      'boiler manual',
    );
    expect(existsSync(join(data, 'navi.db'))).toBe(false);
    const notice = upgraded
      .log()
      .split('\n')
      .find((line) => line.includes('npx navi data move'));
    expect(notice).toContain(join(work, 'navi.db'));
    expect(notice).toContain(data);

    const doctor = await runNavi(['doctor'], env, work);
    expect(doctor.stdout).toMatch(/\[warn\] +data: .*in the working folder.*npx navi data move/);

    // Not while it runs.
    const refused = await runNavi(['data', 'move'], env, work);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`a Navi is serving on 127.0.0.1:${port}; stop it first`);
    expect(existsSync(join(work, 'navi.db'))).toBe(true);
    await upgraded.stop();
  }, 120_000);

  it('`navi data move` moves it into the data folder, where the next start finds all of it', async () => {
    const moved = await runNavi(['data', 'move'], env, work);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`moved ${join(work, 'navi.db')} to ${join(data, 'navi.db')}`);
    expect(moved.stdout).toContain(`moved ${join(work, 'session_files')} to ${join(data, 'session_files')}`);
    expect(existsSync(join(work, 'navi.db'))).toBe(false);
    expect(existsSync(join(work, 'session_files'))).toBe(false);

    const where = await runNavi(['data'], env, work);
    expect(where.code).toBe(0);
    expect(where.stdout).toContain(`database (DB_PATH): ${join(data, 'navi.db')} (in the data folder)`);
    expect(where.stdout).not.toContain('navi data move');
    const again = await runNavi(['data', 'move'], env, work);
    expect(again.stdout).toContain('Nothing to move');

    const after = await serve(env);
    expect((await getSession({ url: url() }, sessionId)).messages).toHaveLength(2);
    // The database now points at the moved files.
    expect(await (await fetch(`${url()}/sessions/${sessionId}/files/${fileName}`)).text()).toBe(
      'boiler manual',
    );
    expect(after.log()).not.toContain('navi data move');
    await after.stop();
  }, 120_000);

  it('a new install keeps everything in the data folder and nothing in its working folder', async () => {
    const fresh = tempDir('navi-new-install-');
    const freshData = join(fresh, 'data');
    const first = await serve({ ...env, NAVI_DATA_DIR: freshData }, fresh);
    const created = await fetch(`${url()}/sessions`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(created.status).toBe(201);
    await first.stop();
    expect(existsSync(join(freshData, 'navi.db'))).toBe(true);
    expect(readdirSync(fresh)).toEqual(['data']);

    const unknown = await runNavi(['data', 'frobnicate'], env, fresh);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('navi data: unknown command "frobnicate"; run navi data help');
    const extra = await runNavi(['data', 'move', 'now'], env, fresh);
    expect(extra.stderr).toContain('navi data move takes no arguments');
  }, 120_000);
});
