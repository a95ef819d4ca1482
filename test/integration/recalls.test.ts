/**
 * Recalls through a real Navi: the fake LLM schedules them with the real tools, the scheduler
 * fires them on a clock the test moves (no real waiting), and the runs go through the real run
 * registry, WebSocket and SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { RecallSummary } from '../../src/protocol/rest.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { RecordedRequest } from '../fake-llm/index.js';
import { ManualClock, settle } from '../support/manual-clock.js';
import type { StartOptions } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getRecalls, getSession, lastUserText, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const HOUR = 3_600_000;
const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'free', name: 'Free', autonomy: 'autonomous' },
]);

/** A tool whose shipped default is to ask first: it executes without a sandbox. */
function riskyTool(): ToolDefinition & { calls: number } {
  const tool = {
    name: 'risky_action',
    description: 'Changes something outside Navi.',
    parameters: { type: 'object', properties: {} },
    risk: { executes: true },
    calls: 0,
    async execute() {
      tool.calls += 1;
      return { success: true, output: 'risky thing done' };
    },
  };
  return tool;
}

let env: NaviWithLlm | undefined;
let clients: EventClient[] = [];

afterEach(async () => {
  for (const c of clients) await c.close();
  clients = [];
  await env?.close();
  env = undefined;
});

async function start(clock: ManualClock, options: StartOptions = {}): Promise<NaviWithLlm> {
  env = await startNaviWithLlm({
    ...options,
    settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain', ...options.settings },
    recallClock: clock,
    recallTimeZone: 'Europe/Berlin',
  });
  return env;
}

async function watch(sessionId: string): Promise<EventClient> {
  const client = await EventClient.connect(env!.navi.wsUrl(sessionId));
  clients.push(client);
  return client;
}

function recalls(sessionId: string): Promise<RecallSummary[]> {
  return getRecalls(env!.navi, sessionId);
}

/** Schedules through the service, as the tool does (tests of firing need no LLM round trip). */
async function schedule(
  sessionId: string,
  when: Record<string, unknown>,
  prompt = 'Check on things',
): Promise<RecallSummary> {
  const result = await env!.navi.services.recalls!.schedule({ sessionId, prompt, when });
  if (!result.ok) throw new Error(result.error);
  return result.recall;
}

function toolResults(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

function recallStarts(client: EventClient): Extract<ServerEvent, { type: 'stream_start' }>[] {
  return client.ofType('stream_start').filter((e) => e.trigger === 'recall');
}

/** Waits for the `n`-th recall run (1-based) to end; returns its events. */
async function recallRun(client: EventClient, n: number): Promise<ServerEvent[]> {
  const startEvent = await client.waitFor(() => recallStarts(client).length >= n);
  const start = recallStarts(client)[n - 1]!;
  expect(startEvent).toBeDefined();
  return client.waitForRunEnd(client.events.indexOf(start));
}

describe('recalls fire at the right times', () => {
  it('schedules through the tool and runs the prompt headless after the delay', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    const id = await navi.createSession();
    const client = await watch(id);
    fake.enqueue(
      {
        toolCalls: [
          {
            name: 'schedule_recall',
            arguments: { prompt: 'Remind the user to stretch', when: { type: 'once', delay: '2h' } },
          },
        ],
      },
      { text: 'I will remind you.' },
    );
    expect((await postMessage(navi, id, 'remind me to stretch in two hours')).status).toBe(200);
    const scheduled = toolResults(chatRequests(fake)[1])[0]!;
    expect(scheduled).toMatch(
      /^Scheduled\.\nRecall [0-9a-f-]{36} \(active\): once, at Wed, 25 Nov 2026, 15:00 CET/,
    );
    // The next run is shown in the same zone as the schedule (Navi's, here Europe/Berlin).
    expect(scheduled).toContain('next run: Wed, 25 Nov 2026, 15:00 CET, in 2 hours');

    const [recall] = await recalls(id);
    expect(recall).toMatchObject({
      status: 'active',
      next_run_at: '2026-11-25T14:00:00.000Z',
      chain: 1,
      run_count: 0,
    });

    fake.enqueue({ text: 'Time to stretch!' });
    await clock.advance(2 * HOUR - 1000);
    expect(chatRequests(fake)).toHaveLength(2);
    expect(recallStarts(client)).toHaveLength(0);

    await clock.advance(1000);
    const events = await recallRun(client, 1);
    expect(events[0]).toMatchObject({
      type: 'stream_start',
      trigger: 'recall',
      recall_id: recall!.id,
      seq: 1,
    });
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Time to stretch!' });
    const prompt = lastUserText(chatRequests(fake)[2]);
    expect(prompt).toContain(`[Recall ${recall!.id}`);
    expect(prompt).toContain('Remind the user to stretch');
    expect(prompt).not.toMatch(/running .* late/);

    const session = await getSession(navi, id);
    const stored = session.messages.filter((m) => m.trigger === 'recall');
    expect(stored).toEqual([
      expect.objectContaining({
        role: 'user',
        content: 'Remind the user to stretch',
        recall: { recall_id: recall!.id, scheduled_for: '2026-11-25T14:00:00.000Z' },
      }),
    ]);
    expect(session.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Time to stretch!' });
    await settle();
    expect((await recalls(id))[0]).toMatchObject({
      status: 'done',
      next_run_at: null,
      last_run_at: '2026-11-25T14:00:00.000Z',
      last_outcome: { status: 'completed' },
      run_count: 1,
    });
  });

  it('repeats an interval recall on its rhythm', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    fake.setDefault({ text: 'checked' });
    const id = await navi.createSession();
    const client = await watch(id);
    const recall = await schedule(id, { type: 'recurring', every: '30m' });
    await clock.advance(30 * 60_000);
    await recallRun(client, 1);
    await clock.advance(30 * 60_000);
    await recallRun(client, 2);
    await settle();
    expect((await recalls(id))[0]).toMatchObject({
      id: recall.id,
      status: 'active',
      run_count: 2,
      last_run_at: '2026-11-25T13:00:00.000Z',
      next_run_at: '2026-11-25T13:30:00.000Z',
    });
  });

  it('follows a cron expression in its time zone across the spring DST change', async () => {
    const clock = new ManualClock('2026-03-28T00:00:00Z');
    const { fake, navi } = await start(clock);
    fake.setDefault({ text: 'nightly check done' });
    const id = await navi.createSession();
    const client = await watch(id);
    const recall = await schedule(id, { type: 'recurring', cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    expect(recall.next_run_at).toBe('2026-03-28T01:30:00.000Z'); // 02:30 CET
    await clock.advanceTo('2026-03-28T01:30:00Z');
    await recallRun(client, 1);
    await settle();
    // 02:30 does not exist in Berlin on 29 March: the run moves to 03:00 CEST, right after the gap.
    expect((await recalls(id))[0]?.next_run_at).toBe('2026-03-29T01:00:00.000Z');
    await clock.advanceTo('2026-03-29T00:59:59Z');
    expect(recallStarts(client)).toHaveLength(1);
    await clock.advanceTo('2026-03-29T01:00:00Z');
    await recallRun(client, 2);
    await settle();
    expect((await recalls(id))[0]).toMatchObject({
      last_run_at: '2026-03-29T01:00:00.000Z',
      next_run_at: '2026-03-30T00:30:00.000Z', // 02:30 CEST
    });
  });
});

describe('skip and cancel', () => {
  it('skips only the next occurrence of a recurring recall, over REST', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    fake.setDefault({ text: 'hourly' });
    const id = await navi.createSession();
    const client = await watch(id);
    const recall = await schedule(id, { type: 'recurring', every: '1h' });
    const res = await fetch(`${navi.url}/sessions/${id}/recalls/${recall.id}/skip`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { recall: RecallSummary }).recall.next_run_at).toBe(
      '2026-11-25T14:00:00.000Z',
    );
    await clock.advance(HOUR);
    expect(recallStarts(client)).toHaveLength(0);
    await clock.advance(HOUR);
    await recallRun(client, 1);
  });

  it('skipping a one-shot recall finishes it without running', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { navi } = await start(clock);
    const id = await navi.createSession();
    const client = await watch(id);
    const recall = await schedule(id, { type: 'once', delay: '10m' });
    const skipped = await navi.services.recalls!.skip(id, recall.id);
    expect(skipped).toMatchObject({
      ok: true,
      recall: { status: 'done', last_outcome: { status: 'not_run', message: 'skipped' } },
    });
    await clock.advance(HOUR);
    expect(recallStarts(client)).toHaveLength(0);
  });

  it('cancels through the manage_recall tool, by a short id, and lists what happened', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    const id = await navi.createSession();
    const client = await watch(id);
    const recall = await schedule(id, { type: 'recurring', every: '1h' }, 'Water the plants');
    fake.enqueue(
      {
        toolCalls: [
          { name: 'manage_recall', arguments: { action: 'cancel', recall_id: recall.id.slice(0, 8) } },
        ],
      },
      { toolCalls: [{ name: 'manage_recall', arguments: { action: 'list' } }] },
      { toolCalls: [{ name: 'manage_recall', arguments: { action: 'cancel', recall_id: recall.id } }] },
      { toolCalls: [{ name: 'manage_recall', arguments: { action: 'skip' } }] },
      { text: 'done' },
    );
    expect((await postMessage(navi, id, 'stop watering reminders')).status).toBe(200);
    const results = toolResults(chatRequests(fake).at(-1));
    expect(results[0]).toMatch(/^Cancelled\.\nRecall .* \(cancelled\): every 1 hour/);
    expect(results[1]).toContain('prompt: Water the plants');
    expect(results[2]).toMatch(/already cancelled; there is nothing left to cancel or skip/);
    expect(results[3]).toMatch(/"skip" needs "recall_id"/);
    await clock.advance(3 * HOUR);
    expect(recallStarts(client)).toHaveLength(0);
  });
});

describe('restarts', () => {
  it('fires a recall missed while Navi was down once, tells it it is late, and keeps the future one', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const first = await start(clock);
    const dir = first.navi.dir;
    const id = await first.navi.createSession();
    const missed = await schedule(id, { type: 'once', delay: '1h' }, 'Missed while down');
    const recurring = await schedule(id, { type: 'recurring', every: '30m' }, 'Every half hour');
    const future = await schedule(id, { type: 'once', delay: '5h' }, 'Still ahead');
    await first.navi.app.close();
    await first.navi.services.close();
    await first.fake.close();
    env = undefined;

    // Three hours later: six half-hours and one one-shot were missed.
    const later = new ManualClock('2026-11-25T15:00:00Z');
    const replies: string[] = [];
    const second = await startNaviWithLlm({
      dir,
      settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
      recallClock: later,
      recallTimeZone: 'Europe/Berlin',
      llm: {
        defaultReply: (request) => {
          replies.push(lastUserText(request));
          return { text: 'caught up' };
        },
      },
    });
    env = second;
    const client = await watch(id);
    // Both due recalls run, one after the other (the session runs one thing at a time).
    await second.fake.waitForRequests(2);
    await settle(20);
    await later.advance(0);
    expect(replies).toHaveLength(2);
    const missedPrompt = replies.find((r) => r.includes('Missed while down'))!;
    expect(missedPrompt).toContain('running 2 hours late');
    expect(replies.find((r) => r.includes('Every half hour'))).toContain('late');
    const list = await recalls(id);
    expect(list.find((r) => r.id === missed.id)).toMatchObject({ status: 'done', run_count: 1 });
    expect(list.find((r) => r.id === recurring.id)).toMatchObject({
      status: 'active',
      run_count: 1,
      next_run_at: '2026-11-25T15:30:00.000Z',
    });
    expect(list.find((r) => r.id === future.id)).toMatchObject({ status: 'active', run_count: 0 });

    const seen = recallStarts(client).length;
    await later.advanceTo('2026-11-25T15:29:59Z');
    expect(replies).toHaveLength(2);
    expect(recallStarts(client)).toHaveLength(seen);
    await later.advanceTo('2026-11-25T15:30:00Z');
    await recallRun(client, seen + 1);
    expect(replies).toHaveLength(3);
    expect(replies[2]).toContain('Every half hour');
    expect(replies[2]).not.toMatch(/running .* late/);
  });
});

describe('recalls and the session', () => {
  it('waits for the user run in progress, then runs', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const waitTool: ToolDefinition = {
      name: 'wait_for_test',
      description: 'Waits until the test lets it finish.',
      parameters: { type: 'object', properties: {} },
      risk: {},
      async execute() {
        await gate;
        return { success: true, output: 'waited' };
      },
    };
    const { fake, navi } = await start(clock, { extraTools: [waitTool] });
    const id = await navi.createSession();
    const client = await watch(id);
    await schedule(id, { type: 'once', delay: '10m' }, 'Due during the user run');
    fake.enqueue(
      { toolCalls: [{ name: 'wait_for_test', arguments: {} }] },
      { text: 'user answer' },
      { text: 'recall answer' },
    );
    const reply = postMessage(navi, id, 'do the long thing');
    await client.waitFor((e) => e.type === 'tool_started');
    await clock.advance(10 * 60_000);
    await settle(10);
    expect(recallStarts(client)).toHaveLength(0);
    release();
    expect((await reply).status).toBe(200);
    const recallEvents = await recallRun(client, 1);
    expect(recallEvents.at(-1)).toMatchObject({ type: 'stream_end', content: 'recall answer' });
    const userEnd = client.events.findIndex((e) => e.type === 'stream_end' && e.content === 'user answer');
    const recallStart = client.events.indexOf(recallStarts(client)[0]!);
    expect(userEnd).toBeGreaterThanOrEqual(0);
    expect(recallStart).toBeGreaterThan(userEnd);
  });

  it('refuses a tool that needs approval in a recall run, even with a paired client watching', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const risky = riskyTool();
    const { fake, navi } = await start(clock, { extraTools: [risky] });
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie: await navi.pair() } });
    clients.push(client);
    await schedule(id, { type: 'once', delay: '1m' }, 'Do the risky thing');
    fake.enqueue({ toolCalls: [{ name: 'risky_action', arguments: {} }] }, { text: 'could not do it' });
    await clock.advance(60_000);
    const events = await recallRun(client, 1);
    expect(events.some((e) => e.type === 'tool_confirm_request')).toBe(false);
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ success: false });
    expect(toolResults(chatRequests(fake).at(-1))[0]).toMatch(
      /a recall runs on its own with nobody to approve it/,
    );
    expect(risky.calls).toBe(0);
  });

  it("lets a recall use such a tool when the profile's autonomy allows it", async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const risky = riskyTool();
    const { fake, navi } = await start(clock, { extraTools: [risky] });
    const id = await navi.createSession('free');
    const client = await watch(id);
    await schedule(id, { type: 'once', delay: '1m' }, 'Do the risky thing');
    fake.enqueue({ toolCalls: [{ name: 'risky_action', arguments: {} }] }, { text: 'done it' });
    await clock.advance(60_000);
    const events = await recallRun(client, 1);
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({
      success: true,
      result: 'risky thing done',
    });
    expect(risky.calls).toBe(1);
  });

  it('stops a chain of recalls scheduling recalls at RECALL_MAX_CHAIN', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock, { settings: { RECALL_MAX_CHAIN: '3' } });
    // The model keeps calling itself back: every prompt schedules an immediate recall.
    fake.setDefault((request) => {
      const last = request.body.messages?.at(-1);
      if (last?.role === 'tool') return { text: `noted: ${String(last.content).slice(0, 60)}` };
      return {
        toolCalls: [
          {
            name: 'schedule_recall',
            arguments: { prompt: 'Keep going forever', when: { type: 'immediate' } },
          },
        ],
      };
    });
    const id = await navi.createSession();
    const client = await watch(id);
    expect((await postMessage(navi, id, 'start the loop')).status).toBe(200);
    await recallRun(client, 3);
    await settle(20);
    await clock.advance(HOUR);
    expect(recallStarts(client)).toHaveLength(3);
    const results = chatRequests(fake)
      .flatMap((r) => toolResults(r))
      .filter((t, i, all) => all.indexOf(t) === i);
    expect(results.filter((t) => t.startsWith('Scheduled.'))).toHaveLength(3);
    expect(results.at(-1)).toMatch(/chain of 3 recalls.*RECALL_MAX_CHAIN \(3\) stops the chain here/);
    expect((await recalls(id)).map((r) => r.chain).sort()).toEqual([1, 2, 3]);
  });

  it('limits the active recalls of a session, not of others', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { navi } = await start(clock, { settings: { RECALL_MAX_PER_SESSION: '2' } });
    const a = await navi.createSession();
    const b = await navi.createSession();
    const first = await schedule(a, { type: 'once', delay: '1h' });
    await schedule(a, { type: 'once', delay: '2h' });
    const third = await navi.services.recalls!.schedule({
      sessionId: a,
      prompt: 'one too many',
      when: { type: 'once', delay: '3h' },
    });
    expect(third).toEqual({
      ok: false,
      error: expect.stringMatching(/already has 2 active recalls.*RECALL_MAX_PER_SESSION/),
    });
    await schedule(b, { type: 'once', delay: '1h' });
    await navi.services.recalls!.cancel(a, first.id);
    await schedule(a, { type: 'once', delay: '3h' });
  });

  it("keeps two sessions' recalls apart", async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    fake.setDefault({ text: 'ran' });
    const a = await navi.createSession();
    const b = await navi.createSession();
    const watchA = await watch(a);
    const watchB = await watch(b);
    const recallA = await schedule(a, { type: 'once', delay: '1h' }, 'For A');
    const recallB = await schedule(b, { type: 'once', delay: '2h' }, 'For B');
    expect((await recalls(a)).map((r) => r.id)).toEqual([recallA.id]);
    expect((await recalls(b)).map((r) => r.id)).toEqual([recallB.id]);
    const wrong = await fetch(`${navi.url}/sessions/${b}/recalls/${recallA.id}`, { method: 'DELETE' });
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toMatchObject({ code: 'RECALL_NOT_FOUND' });
    await clock.advance(HOUR);
    await recallRun(watchA, 1);
    expect(recallStarts(watchB)).toHaveLength(0);
    await clock.advance(HOUR);
    await recallRun(watchB, 1);
    expect(recallStarts(watchA)).toHaveLength(1);
    expect(lastUserText(chatRequests(fake).at(-1))).toContain('For B');
  });

  it("deletes a session's recalls with it", async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    const id = await navi.createSession();
    const recall = await schedule(id, { type: 'once', delay: '1h' });
    expect((await fetch(`${navi.url}/sessions/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await navi.services.recalls!.cancel(id, recall.id)).toMatchObject({
      ok: false,
      code: 'RECALL_NOT_FOUND',
    });
    await clock.advance(2 * HOUR);
    expect(chatRequests(fake)).toHaveLength(0);
  });
});

describe('bad input', () => {
  it('answers REST mistakes with 4xx and a code', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { navi } = await start(clock);
    const id = await navi.createSession();
    const recall = await schedule(id, { type: 'once', delay: '1h' });
    const call = async (method: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(`${navi.url}${path}`, { method, ...init });
      return { status: res.status, body: (await res.json()) as { code?: string; error?: string } };
    };
    expect(await call('GET', '/sessions/not-a-session/recalls')).toMatchObject({
      status: 404,
      body: { code: 'SESSION_NOT_FOUND' },
    });
    expect(await call('GET', `/sessions/${crypto.randomUUID()}/recalls`)).toMatchObject({ status: 404 });
    expect(await call('DELETE', `/sessions/${id}/recalls/nope`)).toMatchObject({
      status: 404,
      body: { code: 'RECALL_NOT_FOUND' },
    });
    expect(await call('POST', `/sessions/${id}/recalls/${'x'.repeat(65)}/skip`)).toMatchObject({
      status: 400,
    });
    expect(
      await call('POST', `/sessions/${id}/recalls/${recall.id}/skip`, {
        headers: { 'content-type': 'application/json' },
        body: '{"broken',
      }),
    ).toMatchObject({ status: 400 });
    expect(await call('DELETE', `/sessions/${id}/recalls/${recall.id}`)).toMatchObject({
      status: 200,
      body: { recall: { status: 'cancelled' } },
    });
    const again = await call('DELETE', `/sessions/${id}/recalls/${recall.id}`);
    expect(again).toMatchObject({ status: 409, body: { code: 'RECALL_FINISHED' } });
    expect(again.body.error).toContain('already cancelled');
    expect(await call('POST', `/sessions/${id}/recalls/${recall.id}/skip`)).toMatchObject({ status: 409 });
  });

  it('hands the model precise errors for bad arguments', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { fake, navi } = await start(clock);
    const id = await navi.createSession();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'a', name: 'schedule_recall', arguments: { prompt: 'x' } },
          { id: 'b', name: 'schedule_recall', arguments: { prompt: 'x', when: { type: 'weekly' } } },
          {
            id: 'c',
            name: 'schedule_recall',
            arguments: { prompt: 'x', when: { type: 'once', at: '2026-11-25T10:00' } },
          },
          {
            id: 'd',
            name: 'schedule_recall',
            arguments: { prompt: 'x', when: { type: 'recurring', cron: '99 * * * *' } },
          },
          {
            id: 'e',
            name: 'schedule_recall',
            arguments: { prompt: 'x', when: { type: 'once', delay: '1h', timezone: 'Nowhere/Land' } },
          },
          { id: 'f', name: 'schedule_recall', arguments: { prompt: '   ', when: { type: 'immediate' } } },
          {
            id: 'g',
            name: 'schedule_recall',
            arguments: { prompt: 'y'.repeat(30_000), when: { type: 'immediate' } },
          },
          { id: 'h', name: 'manage_recall', arguments: { action: 'explode' } },
        ],
      },
      { text: 'ok' },
    );
    expect((await postMessage(navi, id, 'try things')).status).toBe(200);
    const results = toolResults(chatRequests(fake).at(-1));
    expect(results[0]).toMatch(/when/);
    expect(results[1]).toMatch(/once|recurring|immediate/);
    expect(results[2]).toMatch(/in the past/);
    expect(results[3]).toMatch(/not a valid cron expression/);
    expect(results[4]).toMatch(/IANA name/);
    expect(results[5]).toMatch(/prompt is empty/);
    expect(results[6]).toMatch(/30000 characters; keep it under 20000/);
    expect(results[7]).toMatch(/list|cancel|skip/);
    expect(await recalls(id)).toEqual([]);
  });
});
