/**
 * A turn's own cost (docs/performance.md#a-turns-own-cost), against a real `navi serve` child
 * and a fake LLM server that answers at once:
 *
 * - CPU per short turn: a profile that plans first, so a turn is a planning call (answered
 *   DIRECT) and a two-chunk answer; many turns in a row, a new session every 20 turns. Navi's CPU is read from
 *   /proc of the child, so the fake LLM and the WebSocket client, which live in this process,
 *   are not counted, and nothing is subtracted: the figure is everything the server does for a
 *   turn (the socket frame, the run, both LLM requests and their streams, every write to
 *   SQLite, the events to the client, logging, the post-turn compression check).
 * - Time to the first byte of the LLM request: a session of 100 000 display messages whose
 *   context was compressed (a summary and a few recent turns), 10 000 memory facts, a profile
 *   with 20 tools and the two shipped context providers. From the WebSocket send to the moment
 *   the fake LLM server has the request's head (one clock: both ends live in this process).
 *
 * Flags: `--turns N` (short turns measured, default 300), `--samples N` (first-byte samples,
 * default 60), `--messages N` (display messages of the big session, default 100 000),
 * `--facts N` (default 10 000), `--prof DIR` (the child writes a CPU profile there on exit).
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { SqliteMemoryStore } from '../src/memory/memory-store.js';
import { isTerminalEvent, type ServerEvent } from '../src/protocol/events.js';
import { createSqliteStores } from '../src/store/sqlite/index.js';
import type { BufferedMessage, StoredMessage } from '../src/store/types.js';
import { closedPortUrl, type FakeLlm, type RecordedRequest, startFakeLlm } from '../test/fake-llm/index.js';
import { repoRoot, tempDir } from '../test/support/navi.js';
import { naviProcessEnv, spawnNavi } from '../test/support/navi-process.js';
import { profilesDir } from '../test/support/profiles.js';
import { cpuMs, percentile } from './measure.js';
import type { BenchOptions, BenchRow } from './types.js';

const WARM_UP_TURNS = 20;
const TURNS_PER_SESSION = 20;

/** Twenty built-in tools, none of which the fake LLM ever calls. */
const TWENTY_TOOLS = [
  'filesystem',
  'terminal',
  'process',
  'system_info',
  'code_exec',
  'image_view',
  'ssh_exec',
  'share_file',
  'content_publish',
  'memory',
  'schedule_recall',
  'manage_recall',
  'spawn_agent',
  'list_profiles',
  'switch_profile',
  'scratchpad',
  'todo',
  'list_tools',
  'tool_manual',
  'reflect',
];

const profile = (id: string, planning: boolean) => ({
  id,
  name: id,
  system_prompt: 'You are a helpful assistant measured by a bench.',
  enabled_tools: TWENTY_TOOLS,
  planning_enabled: planning,
  temperature: 0.5,
  max_iterations: 5,
});

function flag(options: BenchOptions, name: string, fallback: number): number {
  const raw = options.flags[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} takes a positive whole number, got ${raw}`);
  return value;
}

const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();

/**
 * The big session, written straight into the data folder's database before Navi starts: display
 * messages, then a compressed context (a summary and the last turns), and the memory facts with
 * their summary, all through the store classes.
 */
async function buildData(dbPath: string, sessionId: string, messages: number, facts: number): Promise<void> {
  const stores = createSqliteStores(dbPath);
  try {
    await stores.sessions.create({
      id: sessionId,
      profile_id: 'big',
      title: 'A long chat',
      created_at: at(0),
    });
    const recent = 6;
    const summary: StoredMessage = {
      id: 'summary',
      role: 'user',
      kind: 'summary',
      content: `The user and Navi talked about ${'servers, backups and the garden; '.repeat(40)}`,
      created_at: at(messages - recent),
    };
    await stores.sessions.append(sessionId, [{ message: summary, display: false, context: true }]);
    for (let start = 0; start < messages; start += 5_000) {
      const batch: BufferedMessage[] = [];
      for (let i = start; i < Math.min(messages, start + 5_000); i++) {
        const message: StoredMessage = {
          id: `m${i}`,
          role: i % 2 ? 'assistant' : 'user',
          content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`,
          created_at: at(i),
        };
        batch.push({ message, display: true, context: i >= messages - recent });
      }
      await stores.sessions.append(sessionId, batch);
    }
    await stores.sessions.update(sessionId, {
      context_token_count: 2_000,
      last_active: new Date().toISOString(),
    });
    const memory = new SqliteMemoryStore(stores.db);
    const failures: unknown[] = [];
    // upsert does its work before it returns its promise, so this is one transaction.
    stores.db.transaction(() => {
      for (let i = 0; i < facts; i++)
        memory
          .upsert({
            category: `c${i % 12}`,
            key: `fact_${i}`,
            value: `The user noted thing number ${i} once.`,
          })
          .catch((err: unknown) => failures.push(err));
    })();
    if (failures.length > 0) throw failures[0];
    await memory.setSummary(
      `The user runs servers at home and likes ${'tea, the garden and long walks; '.repeat(12)}`,
    );
  } finally {
    stores.close();
  }
}

interface Client {
  socket: WebSocket;
  /** Sends a message and resolves with the send time once its run has ended. */
  turn(content: string): Promise<number>;
}

function connect(url: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    let ended: ((event: ServerEvent) => void) | undefined;
    socket.on('message', (data: Buffer) => {
      const event = JSON.parse(data.toString()) as ServerEvent;
      if (event.run_id !== undefined && isTerminalEvent(event)) ended?.(event);
    });
    const turn = (content: string) =>
      new Promise<number>((done, fail) => {
        ended = (event) => {
          if (event.type === 'stream_end') done(sent);
          else fail(new Error(`the turn ended with ${JSON.stringify(event).slice(0, 300)}`));
        };
        const sent = performance.now();
        socket.send(JSON.stringify({ type: 'message', content }));
      });
    socket.once('open', () => resolve({ socket, turn }));
    socket.once('error', reject);
  });
}

async function newSession(base: string, profileId: string): Promise<string> {
  const res = await fetch(`${base}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ profile_id: profileId }),
  });
  if (!res.ok) throw new Error(`POST /sessions answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { session_id: string }).session_id;
}

/** The first chat request that arrived after `sent`. */
function firstChatAfter(fake: FakeLlm, sent: number): RecordedRequest {
  const found = fake.requests.find((r) => r.kind === 'chat' && r.receivedAt >= sent);
  if (!found) throw new Error('the fake LLM received no chat request for the turn');
  return found;
}

export async function benchTurn(options: BenchOptions = { flags: {} }): Promise<BenchRow[]> {
  const turns = flag(options, 'turns', 300);
  const samples = flag(options, 'samples', 60);
  const messages = flag(options, 'messages', 100_000);
  const facts = flag(options, 'facts', 10_000);
  const prof = options.flags.prof;

  const fake = await startFakeLlm({
    // The planning call is the one request without tools; it needs no plan.
    defaultReply: (request) => (request.body.tools ? { text: 'Hi there', chunkSize: 4 } : { text: 'DIRECT' }),
  });
  const dir = tempDir('navi-bench-turn-');
  const bigSession = '5b0c5a1e-0000-4000-8000-000000000001';
  const started = performance.now();
  await buildData(join(dir, 'navi.db'), bigSession, messages, facts);
  const buildSeconds = (performance.now() - started) / 1000;

  const profiles = profilesDir([profile('turn', true), profile('big', false)]);
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  const env = naviProcessEnv({
    dir,
    port,
    ollamaUrl: fake.ollamaUrl,
    extra: {
      PROFILES_DIR: profiles,
      DEFAULT_PROFILE: 'turn',
      // The two providers Navi ships: the date and time, and the session's open todo items.
      CONTEXT_PROVIDERS_DIR: join(repoRoot, 'context_providers'),
    },
  });
  const child = await spawnNavi(
    {
      dir,
      port,
      ollamaUrl: fake.ollamaUrl,
      stdio: ['ignore', 'ignore', 'inherit'],
      ...(prof ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${prof}`] } : {}),
    },
    env,
  );
  const clients: Client[] = [];
  try {
    const pid = child.pid!;
    const rows: BenchRow[] = [];

    // (a) Short turns in a row. A new session every few turns, so that the figure is a short
    // turn's and does not grow with a context that lengthens as the bench goes on.
    const session = async () => {
      const client = await connect(`ws://127.0.0.1:${port}/ws/sessions/${await newSession(base, 'turn')}`);
      clients.push(client);
      return client;
    };
    const warm = await session();
    for (let i = 0; i < WARM_UP_TURNS; i++) await warm.turn(`Hello ${i}`);
    const shortFirstByte: number[] = [];
    let cpu = 0;
    let wall = 0;
    for (let done = 0; done < turns; ) {
      const client = await session();
      const block = Math.min(TURNS_PER_SESSION, turns - done);
      const cpuBefore = cpuMs(pid);
      const wallBefore = performance.now();
      for (let i = 0; i < block; i++) {
        const sent = await client.turn(`Hello again ${i}`);
        shortFirstByte.push(firstChatAfter(fake, sent).receivedAt - sent);
      }
      cpu += cpuMs(pid) - cpuBefore;
      wall += performance.now() - wallBefore;
      done += block;
      client.socket.close();
      fake.requests.length = 0;
    }
    rows.push({
      name: 'one short turn: Navi CPU',
      value: cpu / turns,
      unit: 'ms',
      goal: { value: 3, direction: 'max' },
      note:
        `${turns} turns, ${TURNS_PER_SESSION} per session, each a planning call (DIRECT) and a 2-chunk answer; ` +
        `all of the server process's CPU (utime+stime) over the turns; ${(wall / turns).toFixed(1)} ms wall per turn`,
    });
    rows.push({
      name: 'message to first byte of the planning request, short session, median',
      value: percentile(shortFirstByte, 50),
      unit: 'ms',
    });

    // (b) The first byte of the request, in the big session.
    const big = await connect(`ws://127.0.0.1:${port}/ws/sessions/${bigSession}`);
    clients.push(big);
    const firstByte: number[] = [];
    let tools = 0;
    for (let i = 0; i < samples + 3; i++) {
      const sent = await big.turn(`What about the servers, ${i}?`);
      const request = firstChatAfter(fake, sent);
      tools = request.body.tools?.length ?? 0;
      if (i >= 3) firstByte.push(request.receivedAt - sent); // the first few warm the caches
      if (fake.requests.length > 1_000) fake.requests.length = 0;
    }
    const note =
      `${messages} display messages, a compressed context, ${facts} facts, ${tools} tools offered, ` +
      `2 context providers; WebSocket send to the fake LLM having the request's head; ${samples} samples ` +
      `(data built in ${buildSeconds.toFixed(0)} s)`;
    rows.push({
      name: 'message to first byte of the LLM request, median',
      value: percentile(firstByte, 50),
      unit: 'ms',
      goal: { value: 15, direction: 'max' },
      note,
    });
    rows.push({
      name: 'message to first byte of the LLM request, p95',
      value: percentile(firstByte, 95),
      unit: 'ms',
    });
    return rows;
  } finally {
    for (const c of clients) c.socket.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await fake.close();
    // The session of 100 000 messages and the facts are about 80 MB a run.
    rmSync(dir, { recursive: true, force: true });
    rmSync(dirname(profiles), { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchTurn()) console.log(row);
}
