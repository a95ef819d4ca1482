/**
 * The soak run's traffic: a few people using Navi at once. Each "user" loop takes a session no
 * other loop is using, does one thing with it as a person would (a message answered fast or at
 * reading speed, over the socket or REST, a turn with tool calls, a recall scheduled to fire a
 * little later, a stop half-way, a reconnect mid-answer, a file up and down, reads of the list,
 * the pages and search, or deleting the session for a new one), then pauses. Every session has
 * two or three sockets watching it, which check each run (watcher.ts).
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalEvent, type ServerEvent } from '../src/protocol/events.js';
import { type RecallTurnArgs, TAG, type ToolTurnArgs } from './fake-model.js';
import type { Tally, TrafficKind } from './tally.js';
import { Watcher } from './watcher.js';

export interface TrafficOptions {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Folder the tool turns write their files in. */
  workDir: string;
  /** Whether the tool turns also run `echo` through the sandboxed terminal. */
  shell: boolean;
  /** A recall fires this many seconds after it is scheduled, drawn between the two. */
  recallDelaySeconds: [number, number];
  /** Sessions in use at once, and loops acting on them. */
  sessions: number;
  users: number;
  tally: Tally;
}

interface SoakSession {
  id: string;
  watchers: Watcher[];
  busy: boolean;
  /** Recall runs already counted, by run id (every watcher reports each one). */
  recallRuns: Set<string>;
}

type Action =
  | 'fast'
  | 'slow'
  | 'rest'
  | 'tools'
  | 'recall'
  | 'stop'
  | 'reconnect'
  | 'files'
  | 'read'
  | 'rotate';

/** How often each action is picked, out of the total. */
const WEIGHTS: Record<Action, number> = {
  fast: 18,
  slow: 10,
  rest: 8,
  tools: 10,
  recall: 4,
  stop: 5,
  reconnect: 6,
  files: 6,
  read: 16,
  rotate: 4,
};

const RUN_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 60_000;
const MAX_UPLOAD = 256 * 1024;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number) => low + Math.random() * (high - low);

function pick(): Action {
  const total = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
  let r = Math.random() * total;
  for (const [action, weight] of Object.entries(WEIGHTS) as [Action, number][]) {
    r -= weight;
    if (r < 0) return action;
  }
  return 'fast';
}

class Busy extends Error {}

export class Traffic {
  private readonly sessions: SoakSession[] = [];
  private loops: Promise<void>[] = [];
  private running = false;
  private memoryKey = 0;
  /** Every action once before the random mix, so even a short run covers each kind. */
  private readonly tour: Action[] = [
    'recall',
    ...(Object.keys(WEIGHTS) as Action[]).filter((a) => a !== 'recall'),
  ];

  constructor(private readonly o: TrafficOptions) {}

  /** Whether every kind of action has been taken up (the tour is over). */
  get toured(): boolean {
    return this.tour.length === 0;
  }

  /** Creates the sessions with their watchers and starts the user loops. */
  async start(): Promise<void> {
    while (this.sessions.length < this.o.sessions) this.sessions.push(await this.createSession());
    this.resumeLoops();
  }

  /**
   * Lets every action in progress finish and closes every socket but one per session: the
   * server as it is when nobody types and one tab per chat stays open, the state in which open
   * files are compared. The socket left open still sees, and checks, the recalls that fire.
   */
  async pause(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
    for (const s of this.sessions) {
      await Promise.all(s.watchers.slice(1).map((w) => w.close()));
      s.watchers = s.watchers.slice(0, 1);
    }
  }

  async resume(): Promise<void> {
    for (const s of this.sessions) {
      const more = await this.openWatchers(s, s.watchers.length);
      s.watchers.push(...more);
    }
    this.resumeLoops();
  }

  /** Closes every socket, at the very end. */
  async close(): Promise<void> {
    await this.pause();
    for (const s of this.sessions) await Promise.all(s.watchers.map((w) => w.close()));
  }

  private resumeLoops(): void {
    this.running = true;
    this.loops = Array.from({ length: this.o.users }, (_, i) => this.loop(i));
  }

  private async loop(user: number): Promise<void> {
    while (this.running) {
      const session = this.sessions.find((s) => !s.busy);
      if (!session) {
        await sleep(200);
        continue;
      }
      session.busy = true;
      const action = this.tour.shift() ?? pick();
      try {
        // A rotate that failed half-way leaves the session without sockets.
        if (session.watchers.length === 0) session.watchers = await this.openWatchers(session);
        await this.act(action, session);
      } catch (err) {
        if (err instanceof Busy) this.o.tally.busy += 1;
        else this.o.tally.error(`user ${user}, ${action}: ${(err as Error).message}`);
      } finally {
        session.busy = false;
      }
      await sleep(between(200, 2000));
    }
  }

  private async act(action: Action, s: SoakSession): Promise<void> {
    const { tally } = this.o;
    switch (action) {
      case 'fast':
        await this.turn(s, `${TAG.fast} How are you?`);
        return tally.add('turn_fast');
      case 'slow':
        await this.turn(s, `${TAG.slow} Tell me a story, slowly.`);
        return tally.add('turn_slow');
      case 'rest':
        return this.restTurn(s);
      case 'tools':
        return this.toolTurn(s);
      case 'recall':
        return this.recallTurn(s);
      case 'stop':
        return this.stopTurn(s);
      case 'reconnect':
        return this.reconnectTurn(s);
      case 'files':
        return this.files(s);
      case 'read':
        return this.reads(s);
      case 'rotate':
        return this.rotate(s);
    }
  }

  // --- HTTP ------------------------------------------------------------------------------------

  /** One request; a 5xx or a status not in `ok` is an error, 409 is `Busy` when `busyOk`. */
  private async request(
    method: string,
    path: string,
    options: { body?: unknown; form?: FormData; ok?: number[]; busyOk?: boolean } = {},
  ): Promise<{ status: number; body: Buffer }> {
    const init: RequestInit = { method, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) };
    if (options.form) init.body = options.form;
    else if (options.body !== undefined) {
      init.body = JSON.stringify(options.body);
      init.headers = { 'content-type': 'application/json' };
    }
    const response = await fetch(`${this.o.base}${path}`, init);
    const body = Buffer.from(await response.arrayBuffer());
    if (options.busyOk && response.status === 409) throw new Busy();
    if (!(options.ok ?? [200]).includes(response.status)) {
      const what = `${method} ${path.split('?')[0]} → ${response.status} ${body.toString().slice(0, 200)}`;
      if (response.status >= 500) {
        this.o.tally.error(what, response.status);
        throw new Busy(); // counted already; not a second time as the action's failure
      }
      throw new Error(what);
    }
    return { status: response.status, body };
  }

  private async json<T>(method: string, path: string, body?: unknown, ok?: number[]): Promise<T> {
    const { body: raw } = await this.request(method, path, { body, ok });
    return JSON.parse(raw.toString()) as T;
  }

  // --- sessions and sockets ----------------------------------------------------------------------

  private async createSession(): Promise<SoakSession> {
    const { session_id } = await this.json<{ session_id: string }>('POST', '/sessions', {}, [201]);
    const session: SoakSession = { id: session_id, watchers: [], busy: false, recallRuns: new Set() };
    session.watchers = await this.openWatchers(session);
    this.o.tally.add('session_created');
    return session;
  }

  private watcher(s: SoakSession, n: number): Watcher {
    const url = `${this.o.base.replace(/^http/, 'ws')}/ws/sessions/${s.id}`;
    return new Watcher(url, `session ${s.id.slice(0, 8)} socket ${n}`, this.o.tally, {
      onRecallStart: (runId) => {
        if (s.recallRuns.has(runId)) return;
        if (s.recallRuns.size > 100) s.recallRuns.clear();
        s.recallRuns.add(runId);
        this.o.tally.add('recall_fired');
      },
    });
  }

  /** Two or three sockets in all: several clients on one session, as a phone and a laptop are. */
  private async openWatchers(s: SoakSession, open = 0): Promise<Watcher[]> {
    const count = (Math.random() < 0.5 ? 2 : 3) - open;
    const watchers = Array.from({ length: count }, (_, i) => this.watcher(s, open + i));
    await Promise.all(watchers.map((w) => w.opened));
    return watchers;
  }

  private async rotate(s: SoakSession): Promise<void> {
    await Promise.all(s.watchers.map((w) => w.close()));
    s.watchers = [];
    await this.request('DELETE', `/sessions/${s.id}`, { ok: [204] });
    await rm(join(this.o.workDir, `${s.id}.txt`), { force: true });
    this.o.tally.add('session_deleted');
    const fresh = await this.createSession();
    // The loop holds `s`; it takes over the new session's identity in place.
    s.id = fresh.id;
    s.watchers = fresh.watchers;
    s.recallRuns = fresh.recallRuns;
  }

  // --- runs ------------------------------------------------------------------------------------

  /**
   * Sends a message over the first socket and resolves with the run's terminal event; `Busy`
   * when a recall's run held the session. `onEvent` sees each event of the run as it comes.
   */
  private async turn(
    s: SoakSession,
    content: string,
    onEvent?: (event: ServerEvent, runId: string) => void,
  ): Promise<ServerEvent & { run_id: string }> {
    const sender = s.watchers[0]!;
    let runId: string | undefined;
    const end = sender.waitFor(
      (e) => {
        if (runId === undefined) {
          if (e.type === 'stream_start' && e.trigger === 'user' && e.run_id) runId = e.run_id;
          else return e.type === 'error' && e.run_id === undefined && e.code === 'RUN_ACTIVE';
        }
        if (e.run_id !== runId) return false;
        onEvent?.(e, runId);
        return isTerminalEvent(e);
      },
      RUN_TIMEOUT_MS,
      'end of the run it started',
    );
    sender.send({ type: 'message', content });
    const last = await end;
    if (runId === undefined) throw new Busy();
    return { ...last, run_id: runId };
  }

  private async restTurn(s: SoakSession): Promise<void> {
    const { body } = await this.request('POST', `/sessions/${s.id}/messages`, {
      body: { content: `${TAG.fast} Answer over REST.` },
      busyOk: true,
    });
    const answer = JSON.parse(body.toString()) as { content?: unknown };
    if (typeof answer.content !== 'string' || answer.content === '')
      throw new Error('POST /messages answered without content');
    this.o.tally.add('turn_rest');
  }

  private async toolTurn(s: SoakSession): Promise<void> {
    const args: ToolTurnArgs = {
      path: join(this.o.workDir, `${s.id}.txt`),
      memoryKey: `fact_${this.memoryKey++ % 50}`,
      shell: this.o.shell,
    };
    let calls = 0;
    const last = await this.turn(s, `${TAG.tools} ${JSON.stringify(args)}`, (e) => {
      if (e.type === 'tool_call') calls += 1;
    });
    const expected = args.shell ? 5 : 4;
    if (last.type !== 'stream_end' || calls !== expected)
      throw new Error(`tool turn ended with ${last.type} after ${calls} of ${expected} tool calls`);
    this.o.tally.add('turn_tools');
    this.o.tally.add('tool_calls', calls);
  }

  private async recallTurn(s: SoakSession): Promise<void> {
    const [low, high] = this.o.recallDelaySeconds;
    const args: RecallTurnArgs = { delay: `${Math.round(between(low, high))}s` };
    let scheduled = false;
    await this.turn(s, `${TAG.recall} ${JSON.stringify(args)}`, (e) => {
      if (e.type === 'tool_call' && e.tool === 'schedule_recall' && e.success) scheduled = true;
    });
    if (!scheduled) throw new Error('schedule_recall did not succeed');
    this.o.tally.add('recall_scheduled');
  }

  private async stopTurn(s: SoakSession): Promise<void> {
    let stop: Promise<{ stopped?: boolean }> | undefined;
    const last = await this.turn(s, `${TAG.long} Write a very long essay.`, (e) => {
      if (e.type === 'stream_delta' && !stop)
        stop = this.json<{ stopped?: boolean }>('POST', `/sessions/${s.id}/stop`, {});
    });
    const answer = await stop;
    if (last.type !== 'stream_stopped' || answer?.stopped !== true)
      throw new Error(`stop answered ${JSON.stringify(answer)} and the run ended with ${last.type}`);
    this.o.tally.add('stop');
  }

  /** A slow answer during which one watching socket drops and a new one joins and catches up. */
  private async reconnectTurn(s: SoakSession): Promise<void> {
    let rejoined: Promise<ServerEvent> | undefined;
    const last = await this.turn(s, `${TAG.slow} Keep talking while I switch devices.`, (e, runId) => {
      if (e.type !== 'stream_delta' || rejoined) return;
      const index = s.watchers.length - 1;
      const leaving = s.watchers[index]!;
      const joining = this.watcher(s, index);
      s.watchers[index] = joining;
      rejoined = (async () => {
        await leaving.close();
        const end = joining.waitFor(
          (x) => x.run_id === runId && isTerminalEvent(x),
          RUN_TIMEOUT_MS,
          'replayed run',
        );
        return end;
      })();
    });
    if (!rejoined) throw new Error(`the slow run ended with ${last.type} before any delta`);
    const replayed = await rejoined;
    if (replayed.type !== last.type)
      throw new Error(`the rejoined socket saw ${replayed.type}, the sender ${last.type}`);
    this.o.tally.add('reconnect');
    this.o.tally.add('turn_slow');
  }

  // --- files and reads -------------------------------------------------------------------------

  private async files(s: SoakSession): Promise<void> {
    const bytes = randomBytes(1 + Math.floor(Math.random() * MAX_UPLOAD));
    const form = new FormData();
    form.append('file', new Blob([bytes]), `soak-${Date.now()}.bin`);
    const { body } = await this.request('POST', `/sessions/${s.id}/files`, { form, ok: [201] });
    const { name } = JSON.parse(body.toString()) as { name: string };
    this.o.tally.add('upload');
    const got = await this.request('GET', `/sessions/${s.id}/files/${encodeURIComponent(name)}`);
    if (!got.body.equals(bytes)) throw new Error(`download of ${name} differs from its upload`);
    this.o.tally.add('download');
  }

  private async reads(s: SoakSession): Promise<void> {
    const { tally } = this.o;
    await this.request('GET', '/sessions');
    tally.add('rest_read');
    // Scrolls back through this chat, or, while it is short, another one (reading a chat another
    // loop is answering in is what a second device does).
    let before: string | null = null;
    for (const other of [s, ...this.sessions.filter((x) => x !== s)]) {
      const path = `/sessions/${other.id}`;
      const page = await this.request('GET', `${path}?limit=2`, { ok: [200, 404] });
      tally.add('rest_read');
      if (page.status === 404) continue; // deleted by a rotate meanwhile
      before = (JSON.parse(page.body.toString()) as { next_before: string | null }).next_before;
      if (!before) continue;
      for (let i = 0; i < 3 && before; i++) {
        const older = await this.request(
          'GET',
          `${path}/messages?limit=2&before=${encodeURIComponent(before)}`,
          {
            ok: [200, 404],
          },
        );
        if (older.status === 404) break; // a rewind or a rotate removed the page's anchor
        const body = JSON.parse(older.body.toString()) as { messages: unknown[]; next_before: string | null };
        if (body.messages.length === 0) throw new Error('a page before next_before was empty');
        before = body.next_before;
        tally.add('page_back');
      }
      break;
    }
    await this.request('GET', `/search?q=${encodeURIComponent(Math.random() < 0.5 ? 'quick fox' : 'stor')}`);
    await this.request('GET', '/memory/search?q=soak');
    tally.add('search', 2);
    await this.request('GET', `/sessions/${s.id}/recalls`);
    await this.request('GET', '/internal/metrics');
    tally.add('rest_read', 2);
  }
}

export type { TrafficKind };
