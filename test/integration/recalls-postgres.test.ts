/**
 * Recalls with two real `navi serve` processes on one PostgreSQL database (docs/postgres.md,
 * "Recalls with several processes"): a recall due while both run fires on exactly one of them,
 * and a recall scheduled through one process fires on the other after the first was killed
 * with -9. The real clock; the processes re-read the recalls every half second.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallList, RecallSummary, SessionDetail } from '../../src/protocol/rest.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { spawnNavi } from '../support/navi-process.js';
import { chatRequests } from '../support/rest.js';

const TOKEN = 'recalls-postgres-token-4471';
const auth = { authorization: `Bearer ${TOKEN}` };

interface Navi {
  url: string;
  child: ChildProcess;
  /** The JSON log lines it printed so far. */
  logs: Array<{ msg?: string; recall_id?: string }>;
}

async function call<T>(base: string, path: string, init: RequestInit = {}, status = 200): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { ...auth, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
  });
  const text = await res.text();
  if (res.status !== status)
    throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function recalls(base: string, sessionId: string): Promise<RecallSummary[]> {
  return (await call<RecallList>(base, `/sessions/${sessionId}/recalls`)).recalls;
}

/** Polls `check` until it returns a value; the test's own timeout bounds the wait. */
async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function firedBy(navis: Navi[], recallId: string): number[] {
  return navis.map((n) => n.logs.filter((l) => l.msg === 'recall fired' && l.recall_id === recallId).length);
}

describe.skipIf(!needsPostgres('recalls on two navi serve processes'))(
  'recalls on two navi serve processes',
  () => {
    const dir = tempDir('navi-pg-recalls-');
    let schema: Awaited<ReturnType<typeof createTestSchema>>;
    let fake: FakeLlm;
    const navis: Navi[] = [];

    beforeAll(async () => {
      schema = await createTestSchema();
      fake = await startFakeLlm();
      const extra = {
        DATABASE_URL: schema.url,
        NAVI_API_TOKEN: TOKEN,
        RECALL_POLL_SECONDS: '0.5',
        LOG_LEVEL: 'INFO',
        LOG_FORMAT: 'json',
      };
      for (let i = 0; i < 2; i++) {
        const port = Number(new URL(await closedPortUrl()).port);
        const child = await spawnNavi({
          dir,
          port,
          ollamaUrl: fake.ollamaUrl,
          extra,
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const navi: Navi = { url: `http://127.0.0.1:${port}`, child, logs: [] };
        let partial = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          const lines = (partial + chunk.toString()).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            try {
              navi.logs.push(JSON.parse(line) as Navi['logs'][number]);
            } catch {
              // Not a log line.
            }
          }
        });
        navis.push(navi);
      }
    }, 120_000);

    afterAll(async () => {
      await Promise.all(
        navis.map(({ child }) => {
          if (child.exitCode !== null || child.signalCode !== null) return undefined;
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          return exited;
        }),
      );
      await fake?.close();
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Has the model schedule a recall `delay` ahead through `base`; resolves to its id and session. */
    async function scheduleThrough(base: string, delay: string, answer: string) {
      const { session_id: sessionId } = await call<{ session_id: string }>(
        base,
        '/sessions',
        { method: 'POST', body: '{}' },
        201,
      );
      fake.enqueue(
        {
          toolCalls: [
            {
              name: 'schedule_recall',
              arguments: { prompt: 'Say the kettle is ready', when: { type: 'once', delay } },
            },
          ],
        },
        { text: 'I will tell you.' },
        { text: answer },
      );
      await call(base, `/sessions/${sessionId}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'tell me when the kettle is ready' }),
      });
      const [recall] = await recalls(base, sessionId);
      if (!recall) throw new Error('the model scheduled no recall');
      return { sessionId, recallId: recall.id };
    }

    it('fires a recall due while both run on exactly one of them', async () => {
      const [a, b] = navis as [Navi, Navi];
      const before = chatRequests(fake).length;
      const { sessionId, recallId } = await scheduleThrough(a.url, '3s', 'The kettle is ready.');
      // Both know it before it is due: B from the database, within half a second.
      await until(async () => ((await recalls(b.url, sessionId)).length === 1 ? true : undefined));

      const done = await until(async () => {
        const [recall] = await recalls(b.url, sessionId);
        return recall?.status === 'done' && recall.last_outcome ? recall : undefined;
      });
      expect(done).toMatchObject({ run_count: 1, last_outcome: { status: 'completed' } });
      // A second firing would have come at the same moment as the first; give both processes
      // several passes over the store (every 0.5 s) to show one if there were one.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(chatRequests(fake).length - before).toBe(3);
      expect(firedBy(navis, recallId).reduce((x, y) => x + y)).toBe(1);
      const session = await call<SessionDetail>(a.url, `/sessions/${sessionId}`);
      expect(session.messages.filter((m) => m.content === 'Say the kettle is ready')).toHaveLength(1);
      expect(session.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'The kettle is ready.' });
      expect((await recalls(a.url, sessionId))[0]).toMatchObject({ status: 'done', run_count: 1 });
    }, 60_000);

    it('fires a recall scheduled through a process killed with -9 on the one still up', async () => {
      const [a, b] = navis as [Navi, Navi];
      const { sessionId, recallId } = await scheduleThrough(a.url, '4s', 'Still here.');
      const exited = new Promise<void>((resolve) => a.child.once('exit', () => resolve()));
      a.child.kill('SIGKILL');
      await exited;

      const done = await until(async () => {
        const [recall] = await recalls(b.url, sessionId);
        return recall?.status === 'done' && recall.last_outcome ? recall : undefined;
      });
      expect(done).toMatchObject({ run_count: 1, last_outcome: { status: 'completed' } });
      expect(firedBy([b], recallId)).toEqual([1]);
      const session = await call<SessionDetail>(b.url, `/sessions/${sessionId}`);
      expect(session.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Still here.' });
    }, 60_000);
  },
);
