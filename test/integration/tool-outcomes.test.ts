/**
 * `tool_call.outcome` and the stored result's `outcome` (docs/protocol.md#tool-outcomes): every
 * way a call can end, through the real server, agent and executor against the fake LLM server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent, ToolOutcome } from '../../src/protocol/events.js';
import { fail, ok, type ToolDefinition } from '../../src/tools/types.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { getSession, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

const tools: ToolDefinition[] = [
  {
    name: 'everyday_action',
    description: 'Changes something small.',
    parameters: { type: 'object', properties: { size: { type: 'integer' } } },
    execute: async () => ok('small change made'),
  },
  {
    name: 'failing_action',
    description: 'Always fails.',
    parameters: { type: 'object', properties: {} },
    execute: async () => fail('it broke'),
  },
  {
    name: 'forbidden_action',
    description: 'The profile does not allow it.',
    parameters: { type: 'object', properties: {} },
    execute: async () => ok('should never run'),
  },
  {
    name: 'guarded_action',
    description: 'Needs the person to approve it.',
    parameters: { type: 'object', properties: {} },
    execute: async () => ok('did the guarded thing'),
  },
  {
    name: 'endless_action',
    description: 'Runs until it is stopped.',
    parameters: { type: 'object', properties: {} },
    execute: (_params, ctx) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve(fail('aborted')), { once: true }),
      ),
  },
];

const profiles = profilesDir([
  { ...plainProfile, confirm_tools: ['guarded_*'], denied_tools: ['forbidden_action'] },
]);

const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({
  toolCalls: [{ id, name, arguments: args }],
});

const toolCalls = (events: ServerEvent[]) => events.filter((e): e is ToolCallEvent => e.type === 'tool_call');

/** The outcome each call ended with, by call id, as the events said and as the session stored it. */
async function outcomes(navi: NaviHandle, id: string, events: ServerEvent[]) {
  const sent = Object.fromEntries(
    toolCalls(events)
      .filter((e) => !e.is_subagent)
      .map((e) => [e.call_id, e.outcome]),
  );
  const stored = Object.fromEntries(
    (await getSession(navi, id)).messages
      .filter((m) => m.role === 'tool')
      .map((m) => [m.tool_call_id, m.outcome]),
  );
  return { sent, stored };
}

describe('tool outcomes', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let cookie = '';
  let close: () => Promise<void> = async () => {};
  const clients: EventClient[] = [];

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain', CONTEXT_COMPRESSION_ENABLED: 'false' },
      extraTools: tools,
    }));
    cookie = await navi.pair();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    fake.reset();
  });
  afterAll(() => close());

  async function start(content: string): Promise<{ id: string; client: EventClient }> {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie } });
    clients.push(client);
    client.send({ type: 'message', content });
    return { id, client };
  }

  it('ok, failed, refused: in the event and on the stored result alike', async () => {
    fake.enqueue(
      {
        toolCalls: [
          { id: 'c-ok', name: 'everyday_action', arguments: {} },
          { id: 'c-failed', name: 'failing_action', arguments: {} },
          { id: 'c-invalid', name: 'everyday_action', arguments: { size: 'huge' } },
          { id: 'c-policy', name: 'forbidden_action', arguments: {} },
          { id: 'c-unknown', name: 'no_such_action', arguments: {} },
        ],
      },
      { text: 'Done.' },
    );
    const { id, client } = await start('do five things');
    const events = await client.waitForRunEnd();
    const expected: Record<string, ToolOutcome> = {
      'c-ok': 'ok',
      'c-failed': 'failed',
      'c-invalid': 'failed',
      'c-policy': 'refused',
      'c-unknown': 'refused',
    };
    expect(await outcomes(navi, id, events)).toEqual({ sent: expected, stored: expected });
    expect(toolCalls(events).find((e) => e.call_id === 'c-policy')?.result).toMatch(/forbidden_action/);
  });

  it('denied when the person says no', async () => {
    fake.enqueue(call('c-denied', 'guarded_action'), { text: 'Understood.' });
    const { id, client } = await start('do the guarded thing');
    const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as Extract<
      ServerEvent,
      { type: 'tool_confirm_request' }
    >;
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await client.waitForRunEnd();
    expect(await outcomes(navi, id, events)).toEqual({
      sent: { 'c-denied': 'denied' },
      stored: { 'c-denied': 'denied' },
    });
  });

  it('confirmation_timeout when nobody could be asked (a REST run nobody watches)', async () => {
    const id = await navi.createSession();
    fake.enqueue(call('c-nobody', 'guarded_action'), { text: 'Nobody approved it.' });
    const res = await postMessage(navi, id, 'do the guarded thing');
    expect(res.status).toBe(200);
    const stored = (await getSession(navi, id)).messages.find((m) => m.role === 'tool');
    expect(stored).toMatchObject({
      tool_call_id: 'c-nobody',
      success: false,
      outcome: 'confirmation_timeout',
    });
  });

  it('stopped when the person stops the run while the tool runs', async () => {
    fake.enqueue(call('c-stopped', 'endless_action'));
    const { id, client } = await start('run forever');
    await client.waitFor((e) => e.type === 'tool_started');
    await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_stopped');
    expect(await outcomes(navi, id, events)).toEqual({
      sent: { 'c-stopped': 'stopped' },
      stored: { 'c-stopped': 'stopped' },
    });
  });

  it("a subagent's calls carry theirs, and spawn_agent its own", async () => {
    fake.enqueue(
      call('c-spawn', 'spawn_agent', { task: 'Try the failing action.' }),
      call('c-sub', 'failing_action'),
      { text: 'It failed.' },
      { text: 'The subagent reported a failure.' },
    );
    const { id, client } = await start('delegate');
    const events = await client.waitForRunEnd();
    const sub = toolCalls(events).find((e) => e.is_subagent);
    expect(sub).toMatchObject({ call_id: 'c-sub', outcome: 'failed', parent_call_id: 'c-spawn' });
    expect(await outcomes(navi, id, events)).toEqual({
      sent: { 'c-spawn': 'ok' },
      stored: { 'c-spawn': 'ok' },
    });
  });
});

describe('tool outcomes that need a time limit to pass', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        CONTEXT_COMPRESSION_ENABLED: 'false',
        TOOL_TIMEOUT_MS: '300',
        TOOL_CONFIRM_TIMEOUT_MS: '200',
      },
      extraTools: tools,
    }));
  });
  afterEach(() => fake.reset());
  afterAll(() => close());

  it('confirmation_timeout when the person watching does not answer in time', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie: await navi.pair() } });
    fake.enqueue(call('c-late', 'guarded_action'), { text: 'No answer came.' });
    client.send({ type: 'message', content: 'do the guarded thing' });
    await client.waitFor((e) => e.type === 'tool_confirm_request');
    const events = await client.waitForRunEnd();
    await client.close();
    expect(await outcomes(navi, id, events)).toEqual({
      sent: { 'c-late': 'confirmation_timeout' },
      stored: { 'c-late': 'confirmation_timeout' },
    });
    expect(toolCalls(events)[0]?.result).toMatch(/nobody answered/);
  });

  it('timed_out when the tool runs past TOOL_TIMEOUT_MS', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id));
    fake.enqueue(call('c-slow', 'endless_action'), { text: 'It took too long.' });
    client.send({ type: 'message', content: 'run forever' });
    const events = await client.waitForRunEnd();
    await client.close();
    expect(await outcomes(navi, id, events)).toEqual({
      sent: { 'c-slow': 'timed_out' },
      stored: { 'c-slow': 'timed_out' },
    });
  });
});
