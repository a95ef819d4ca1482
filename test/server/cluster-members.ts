/**
 * Cluster members for the run cluster tests: each a "process" of its own in this one, with its
 * own pool, its own dedicated connections and its own run registry over a scripted agent, all on
 * one PostgreSQL schema.
 */
import { silentLogger } from '../../src/config/logger.js';
import type { AgentEvent, ServerEvent } from '../../src/protocol/events.js';
import type { AgentRun } from '../../src/server/agent-run.js';
import { PgRunCluster } from '../../src/server/cluster/pg-run-cluster.js';
import { ApiError } from '../../src/server/errors.js';
import { RunRegistry } from '../../src/server/run-registry.js';
import type { RunSubscriber } from '../../src/server/run-subscriber.js';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { type ScriptedAgent, scriptedAgent } from './scripted-agent.js';

/** A watcher that records what it is delivered; `socket` ones count as people who can confirm. */
export class Sink implements RunSubscriber {
  readonly events: ServerEvent[] = [];
  readonly frames: string[] = [];
  private waiters: { test: (e: ServerEvent) => boolean; resolve: () => void }[] = [];
  constructor(readonly kind: 'socket' | 'internal' = 'socket') {}
  deliver(event: ServerEvent, json: string): boolean {
    this.events.push(event);
    this.frames.push(json);
    this.waiters = this.waiters.filter((w) => {
      if (!w.test(event)) return true;
      w.resolve();
      return false;
    });
    return true;
  }
  waitFor(test: (e: ServerEvent) => boolean): Promise<void> {
    if (this.events.some(test)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }
  ofRun(runId: string): ServerEvent[] {
    return this.events.filter((e) => e.run_id === runId);
  }
}

export interface Member {
  db: PgDatabase;
  cluster: PgRunCluster;
  runs: RunRegistry;
  agent: ScriptedAgent;
}

/** Members joining the cluster of the schema `url` selects; `leaveAll` at the end. */
export function clusterMembers(url: () => string) {
  const members: Member[] = [];
  return {
    async member(keepEventsMs?: number, requestTimeoutMs = 3000): Promise<Member> {
      const db = await PgDatabase.open(url(), { max: 4 });
      const cluster = await PgRunCluster.open({
        url: url(),
        db,
        logger: silentLogger(),
        requestTimeoutMs,
        // Sweeps run when a test calls them.
        sweepIntervalMs: 3_600_000,
        ...(keepEventsMs === undefined ? {} : { keepEventsMs }),
      });
      const agent = scriptedAgent();
      const runs = new RunRegistry({ agent, logger: silentLogger(), confirmTimeoutMs: 30_000, cluster });
      const m = { db, cluster, runs, agent };
      members.push(m);
      return m;
    },
    async leaveAll(): Promise<void> {
      for (const m of members) {
        await m.runs.close(1000).catch(() => undefined);
        await m.cluster.close().catch(() => undefined);
        await m.db.close().catch(() => undefined);
      }
    },
  };
}

export const end = (content: string): AgentEvent => ({
  type: 'stream_end',
  content,
  context_tokens: 5,
  max_context_tokens: 100,
});

export const input = { content: 'go', trigger: 'user' as const };

let sessionCounter = 0;
export const newSession = () => `00000000-0000-4000-8000-${String(++sessionCounter).padStart(12, '0')}`;

/** Retries until the start stops being refused with RUN_ACTIVE (a claim freed by a connection the server has not closed yet). */
export async function startWhenFree(m: Member, sessionId: string): Promise<AgentRun> {
  for (;;) {
    try {
      return await m.runs.start(sessionId, input);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'RUN_ACTIVE')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export async function waitUntil(test: () => boolean): Promise<void> {
  while (!test()) await new Promise((resolve) => setTimeout(resolve, 20));
}

export async function waitUntilAsync(test: () => Promise<boolean>): Promise<void> {
  while (!(await test())) await new Promise((resolve) => setTimeout(resolve, 20));
}
