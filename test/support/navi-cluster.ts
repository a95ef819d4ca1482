/**
 * Several real `navi serve` processes on one PostgreSQL database: a fresh schema, one fake LLM,
 * one shared data folder (as a real deployment shares it), a port each. For tests of what the
 * processes do together: runs watched, stopped and answered across them, a process killed.
 *
 *   const cluster = await startNaviCluster({ count: 2 });
 *   const id = await cluster.nodes[0].createSession();
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createTestSchema } from '../../src/store/test-engines.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from './navi.js';
import { naviProcessEnv, spawnNavi } from './navi-process.js';
import { EventClient } from './ws-client.js';

/** The API token every process is given: its holder has the person's consent (may confirm). */
export const CLUSTER_TOKEN = 'navi-cluster-test-token-0042';
const auth = { authorization: `Bearer ${CLUSTER_TOKEN}` };

export interface ClusterNode {
  port: number;
  url: string;
  child: ChildProcess;
  wsUrl(sessionId: string): string;
  /** A WebSocket client on this process's session socket, with the token (so it may confirm). */
  watch(sessionId: string): Promise<EventClient>;
  /** A REST call with the token: its status and parsed body. */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  createSession(): Promise<string>;
  /** kill -9; resolves once the process has exited. */
  kill(): Promise<void>;
}

export interface NaviCluster {
  nodes: ClusterNode[];
  fake: FakeLlm;
  /** The DATABASE_URL the processes share (a schema of its own). */
  databaseUrl: string;
  dir: string;
  close(): Promise<void>;
}

export interface NaviClusterOptions {
  count?: number;
  /** Extra environment for every process (PROFILES_DIR, DEFAULT_PROFILE…). */
  extra?: NodeJS.ProcessEnv;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts `count` processes (default 2) on a new schema; needs NAVI_TEST_DATABASE_URL. */
export async function startNaviCluster(options: NaviClusterOptions = {}): Promise<NaviCluster> {
  const schema = await createTestSchema();
  const fake = await startFakeLlm();
  const dir = tempDir('navi-cluster-');
  const nodes: ClusterNode[] = [];
  const close = async () => {
    for (const node of nodes) {
      if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGTERM');
    }
    await Promise.all(nodes.map((node) => exited(node.child)));
    await fake.close();
    await schema.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const count = options.count ?? 2;
    for (let i = 0; i < count; i++) {
      const port = Number(new URL(await closedPortUrl()).port);
      const extra = { DATABASE_URL: schema.url, NAVI_API_TOKEN: CLUSTER_TOKEN, ...options.extra };
      const env = naviProcessEnv({ dir, port, ollamaUrl: fake.ollamaUrl, extra });
      const child = await spawnNavi(
        { dir, port, ollamaUrl: fake.ollamaUrl, stdio: ['ignore', 'ignore', 'inherit'] },
        env,
      );
      nodes.push(node(port, child));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { nodes, fake, databaseUrl: schema.url, dir, close };
}

function node(port: number, child: ChildProcess): ClusterNode {
  const url = `http://127.0.0.1:${port}`;
  const wsUrl = (id: string) => `ws://127.0.0.1:${port}/ws/sessions/${id}`;
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  return {
    port,
    url,
    child,
    wsUrl,
    watch: (id) => EventClient.connect(wsUrl(id), { headers: auth }),
    call,
    async createSession() {
      const res = await call<{ session_id: string }>('POST', '/sessions', {});
      if (res.status !== 201)
        throw new Error(`POST /sessions answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.session_id;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
