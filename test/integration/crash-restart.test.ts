/**
 * `kill -9` of a real `navi serve` process in the middle of an answer loses nothing already
 * said — after a restart the partial answer is there, marked interrupted, the database is intact
 * and the session goes on. On the SQLite file, and on PostgreSQL (a fresh schema, as
 * DATABASE_URL) when NAVI_TEST_DATABASE_URL names a server.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { naviProcessEnv, spawnNavi } from '../support/navi-process.js';
import { EventClient } from '../support/ws-client.js';

const engines = ['sqlite', ...(needsPostgres('the crash test on PostgreSQL') ? ['postgres'] : [])] as const;

describe.each(engines)('a process killed during a run, on %s', (engine) => {
  let fake: FakeLlm;
  let schema: Awaited<ReturnType<typeof createTestSchema>> | undefined;
  const dir = tempDir();
  let port = 0;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  const start = async (): Promise<ChildProcess> => {
    const child = await spawnNavi({ dir, port, ollamaUrl: fake.ollamaUrl }, env);
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    fake = await startFakeLlm();
    port = Number(new URL(await closedPortUrl()).port);
    if (engine === 'postgres') schema = await createTestSchema();
    env = naviProcessEnv({
      dir,
      port,
      ollamaUrl: fake.ollamaUrl,
      extra: schema ? { DATABASE_URL: schema.url } : {},
    });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await fake?.close();
    await schema?.drop();
  });

  it('keeps the partial answer, marked interrupted, and the database opens cleanly', async () => {
    const url = `http://127.0.0.1:${port}`;
    let child = await start();
    const created = (await (
      await fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as {
      session_id: string;
    };
    const id = created.session_id;
    const full = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    fake.enqueue({ text: full, chunkSize: 6, delayMs: 25 });
    const client = await EventClient.connect(`ws://127.0.0.1:${port}/ws/sessions/${id}`);
    client.send({ type: 'message', content: 'tell me a long story' });
    await client.waitFor((e) => e.type === 'stream_delta');
    // Let the answer grow past one persistence interval (about a second) before the kill.
    await new Promise((r) => setTimeout(r, 1800));
    const streamed = client.events.flatMap((e) => (e.type === 'stream_delta' ? [e.delta] : [])).join('');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await client.close();
    expect(streamed.length).toBeLessThan(full.length);

    child = await start();
    const session = (await (await fetch(`${url}/sessions/${id}`)).json()) as {
      messages: { role: string; content: string; interrupted?: true }[];
    };
    const answer = session.messages.at(-1);
    expect(answer?.role).toBe('assistant');
    expect(answer?.interrupted).toBe(true);
    expect(answer?.content.length).toBeGreaterThan(0);
    expect(full.startsWith(answer?.content ?? 'x')).toBe(true);
    // Saved at most about a second behind what clients saw.
    expect(answer?.content.length).toBeGreaterThan(streamed.length / 3);

    if (schema) {
      // Nothing was written to the SQLite file, and both buffers of the session agree.
      const pg = await PgDatabase.open(schema.url);
      try {
        const [row] = await pg.rows<{ display: string; context: string }>(
          `SELECT (SELECT content FROM messages WHERE session_id = $1 ORDER BY seq DESC LIMIT 1) AS display,
                  (SELECT content FROM context_messages WHERE session_id = $1 ORDER BY seq DESC LIMIT 1) AS context`,
          [id],
        );
        expect(row?.display).toBe(answer?.content);
        expect(row?.context).toBe(answer?.content);
      } finally {
        await pg.close();
      }
      expect(existsSync(join(dir, 'navi.db'))).toBe(false);
    } else {
      const db = new Database(join(dir, 'navi.db'), { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }

    fake.enqueue({ text: 'Continuing where we were.' });
    const again = await EventClient.connect(`ws://127.0.0.1:${port}/ws/sessions/${id}`);
    again.send({ type: 'message', content: 'go on' });
    const events = await again.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Continuing where we were.' });
    const lastRequest = fake.requests.filter((r) => r.kind === 'chat').at(-1);
    expect(JSON.stringify(lastRequest?.body.messages)).toContain('The quick brown fox');
    await again.close();
    child.kill('SIGTERM');
  }, 120_000);
});
