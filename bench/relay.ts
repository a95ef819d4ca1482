/**
 * The streaming relay, measured end to end: a real `navi serve` child process, a fake LLM
 * server streaming one character per chunk as fast as it can, and 1 or 50 WebSocket clients.
 *
 * Figures: CPU time the Navi process spends per relayed token (read from /proc, so the fake
 * LLM and the clients, which live in this process, are not counted), events per second
 * delivered to all clients together, and bytes on the wire per byte of answer.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { isTerminalEvent, type ServerEvent } from '../src/protocol/events.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../test/fake-llm/index.js';
import { tempDir } from '../test/support/navi.js';
import { spawnNavi } from '../test/support/navi-process.js';
import { cpuMs } from './measure.js';
import type { BenchRow } from './types.js';

const ANSWER_CHARS = 20_000;

interface Listener {
  socket: WebSocket;
  events: number;
  bytes: number;
  /** Bytes of the final `stream_end`, which carries the whole answer once more by design. */
  endBytes: number;
  done: Promise<void>;
}

function listen(url: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    let finish: () => void = () => {};
    const listener: Listener = {
      socket,
      events: 0,
      bytes: 0,
      endBytes: 0,
      done: new Promise<void>((r) => {
        finish = r;
      }),
    };
    socket.on('message', (data: Buffer) => {
      listener.bytes += data.length;
      const event = JSON.parse(data.toString()) as ServerEvent;
      if (event.run_id === undefined) return;
      listener.events += 1;
      if (event.type === 'stream_end') listener.endBytes += data.length;
      if (isTerminalEvent(event)) finish();
    });
    socket.once('open', () => resolve(listener));
    socket.once('error', reject);
  });
}

async function oneRun(base: string, port: number, clients: number, pid: number) {
  const created = (await (
    await fetch(`${base}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
  ).json()) as { session_id: string };
  const ws = `ws://127.0.0.1:${port}/ws/sessions/${created.session_id}`;
  const listeners = await Promise.all(Array.from({ length: clients }, () => listen(ws)));
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  listeners[0]!.socket.send(JSON.stringify({ type: 'message', content: 'Write a long answer.' }));
  await Promise.all(listeners.map((l) => l.done));
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuMs(pid) - cpuBefore;
  for (const l of listeners) l.socket.close();
  const events = listeners.reduce((n, l) => n + l.events, 0);
  return { seconds, cpu, events, bytesOne: listeners[0]!.bytes, endBytes: listeners[0]!.endBytes };
}

export async function benchRelay(): Promise<BenchRow[]> {
  const fake: FakeLlm = await startFakeLlm();
  fake.setDefault({ text: 'x'.repeat(ANSWER_CHARS), chunkSize: 1 });
  const dir = tempDir('navi-bench-');
  const port = Number(new URL(await closedPortUrl()).port);
  const base = `http://127.0.0.1:${port}`;
  const child = await spawnNavi({
    dir,
    port,
    ollamaUrl: fake.ollamaUrl,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const pid = child.pid!;
    await oneRun(base, port, 1, pid); // warm-up: JIT, SQLite pages, first-run costs
    const rows: BenchRow[] = [];
    for (const clients of [1, 50]) {
      const run = await oneRun(base, port, clients, pid);
      const label = clients === 1 ? '1 client' : `${clients} clients`;
      rows.push({
        name: `relay CPU per token, ${label}`,
        value: (run.cpu * 1000) / ANSWER_CHARS,
        unit: 'µs/token',
        note: `${ANSWER_CHARS} one-character chunks; Navi process CPU only`,
      });
      rows.push({
        name: `tokens relayed per second, ${label}`,
        value: ANSWER_CHARS / run.seconds,
        unit: 'tokens/s',
        note: 'limited by the fake LLM and the client in this process as much as by Navi',
      });
      rows.push({
        name: `events per second, ${label}`,
        value: run.events / run.seconds,
        unit: 'events/s',
        note: 'all clients together; deltas are coalesced, so fewer events than tokens',
      });
      if (clients === 1) {
        rows.push({
          name: 'bytes on the wire per answer byte',
          value: run.bytesOne / ANSWER_CHARS,
          unit: 'B/B',
          note: 'every frame of the run to one client, including stream_end with the full answer',
        });
        rows.push({
          name: 'bytes on the wire per answer byte, deltas only',
          value: (run.bytesOne - run.endBytes) / ANSWER_CHARS,
          unit: 'B/B',
          note: 'the streamed part: how close coalescing keeps the wire to the content',
        });
      }
      fake.reset();
      fake.setDefault({ text: 'x'.repeat(ANSWER_CHARS), chunkSize: 1 });
    }
    return rows;
  } finally {
    child.kill('SIGTERM');
    await fake.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchRelay()) console.log(row);
}
