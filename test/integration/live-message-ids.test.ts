/**
 * The ids a run's events carry (docs/protocol.md#websocket): `stream_start.user_message_id` names
 * the user message the run answers and `stream_end` / `stream_stopped.message_id` the final answer
 * it stored, so a client names what it shows without reading the session. Each id must be the one
 * `GET /sessions/{id}` then lists: checked for a message, a tool run, a step-limit answer, a
 * regenerate, an edit, a recall's prompt, a stop, and runs that store no answer or no message.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent, EventOf, ServerEvent } from '../../src/protocol/events.js';
import type { SessionMessage } from '../../src/protocol/rest.js';
import { ok, type ToolDefinition } from '../../src/tools/types.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const noteTool: ToolDefinition = {
  name: 'take_note',
  description: 'Writes a note down.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async (params) => ok(`noted ${String(params.text)}`),
};

let fake: FakeLlm;
let navi: NaviHandle;
let close: () => Promise<void> = async () => {};
const clients: EventClient[] = [];

beforeAll(async () => {
  ({ fake, navi, close } = await startNaviWithLlm({
    settings: {
      PROFILES_DIR: profilesDir([plainProfile, { ...plainProfile, id: 'one-step', max_iterations: 1 }]),
      DEFAULT_PROFILE: 'plain',
      CONTEXT_COMPRESSION_ENABLED: 'false',
    },
    extraTools: [noteTool],
  }));
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  fake.reset();
});
afterAll(() => close());

async function connect(id: string): Promise<EventClient> {
  const client = await EventClient.connect(navi.wsUrl(id));
  clients.push(client);
  return client;
}

function start(events: readonly ServerEvent[]): EventOf<'stream_start'> {
  const first = events[0];
  if (first?.type !== 'stream_start') throw new Error(`the run began with ${first?.type}`);
  return first;
}

function ending(events: readonly ServerEvent[]): EventOf<'stream_end'> | EventOf<'stream_stopped'> {
  const last = events.at(-1);
  if (last?.type !== 'stream_end' && last?.type !== 'stream_stopped')
    throw new Error(`the run ended with ${JSON.stringify(last)}`);
  return last;
}

const ofRole = (messages: SessionMessage[], role: SessionMessage['role']) =>
  messages.filter((m) => m.role === role);

describe('the ids of a run’s events are the ids GET lists', () => {
  it('for a message: its user message and its answer', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'Hello back.' });
    const events = await client.turn({ type: 'message', content: 'hello' });
    const { messages } = await getSession(navi, id);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Hello back.'],
    ]);
    expect(start(events).user_message_id).toBe(messages[0]!.id);
    expect(ending(events)).toMatchObject({ type: 'stream_end', message_id: messages[1]!.id });
  });

  it('for a run with tool calls: the final answer, not the message that asked for the tools', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue(
      {
        text: 'Let me note that.',
        toolCalls: [{ id: 'n1', name: 'take_note', arguments: { text: 'milk' } }],
      },
      { text: 'Noted milk.' },
    );
    const events = await client.turn({ type: 'message', content: 'note milk' });
    const { messages } = await getSession(navi, id);
    const answers = ofRole(messages, 'assistant');
    expect(answers.at(-1)?.content).toBe('Noted milk.');
    expect(start(events).user_message_id).toBe(ofRole(messages, 'user')[0]!.id);
    expect(ending(events)).toMatchObject({ type: 'stream_end', message_id: answers.at(-1)!.id });
    expect(answers.slice(0, -1).map((m) => m.id)).not.toContain(ending(events).message_id);
  });

  it('for a run cut short by its step limit: the answer saying so', async () => {
    const id = await navi.createSession('one-step');
    const client = await connect(id);
    fake.enqueue({ toolCalls: [{ id: 'n1', name: 'take_note', arguments: { text: 'eggs' } }] });
    const events = await client.turn({ type: 'message', content: 'note eggs' });
    const limit = (await getSession(navi, id)).messages.at(-1)!;
    expect(limit.kind).toBe('iteration_limit');
    expect(ending(events)).toMatchObject({ type: 'stream_end', message_id: limit.id });
  });

  it('for a regenerate: the message already stored, and the new answer', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'First.' }, { text: 'Second.' });
    const first = await client.turn({ type: 'message', content: 'say something' });
    const regenerated = await client.turn({ type: 'regenerate' });
    const { messages } = await getSession(navi, id);
    expect(messages.map((m) => m.content)).toEqual(['say something', 'Second.']);
    expect(start(regenerated).user_message_id).toBe(messages[0]!.id);
    expect(start(regenerated).user_message_id).toBe(start(first).user_message_id);
    expect(ending(regenerated).message_id).toBe(messages[1]!.id);
    expect(ending(regenerated).message_id).not.toBe(ending(first).message_id);
  });

  it('for an edit: the new message that replaces the edited one', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'Four.' }, { text: 'Six.' });
    const first = await client.turn({ type: 'message', content: '2+2?' });
    const edited = await client.turn({
      type: 'edit',
      message_id: start(first).user_message_id,
      content: '3+3?',
    });
    const { messages } = await getSession(navi, id);
    expect(messages.map((m) => m.content)).toEqual(['3+3?', 'Six.']);
    expect(start(edited).user_message_id).toBe(messages[0]!.id);
    expect(start(edited).user_message_id).not.toBe(start(first).user_message_id);
    expect(ending(edited).message_id).toBe(messages[1]!.id);
  });

  it('for a stop: the partial answer it saved, and none when nothing was said yet', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'A long story that goes on', chunkSize: 4, stallAfterChunks: 2 });
    let mark = client.events.length;
    client.send({ type: 'message', content: 'tell a story' });
    await client.waitFor((e) => e.type === 'stream_delta', 15_000, mark);
    await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    const stopped = await client.waitForRunEnd(mark);
    let { messages } = await getSession(navi, id);
    expect(messages[1]).toMatchObject({ role: 'assistant', interrupted: true, stopped: true });
    expect(ending(stopped)).toMatchObject({ type: 'stream_stopped', message_id: messages[1]!.id });
    expect(start(stopped).user_message_id).toBe(messages[0]!.id);

    fake.enqueue({ hang: true });
    mark = client.events.length;
    client.send({ type: 'message', content: 'are you there?' });
    await client.waitFor((e) => e.type === 'stream_start', 15_000, mark);
    await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    const silent = await client.waitForRunEnd(mark);
    ({ messages } = await getSession(navi, id));
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(start(silent).user_message_id).toBe(messages[2]!.id);
    expect(ending(silent).type).toBe('stream_stopped');
    expect(ending(silent)).not.toHaveProperty('message_id');
  });

  it('for an empty answer: none, since none is stored', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: '' });
    const events = await client.turn({ type: 'message', content: 'say nothing' });
    const { messages } = await getSession(navi, id);
    expect(messages.map((m) => m.role)).toEqual(['user']);
    expect(start(events).user_message_id).toBe(messages[0]!.id);
    expect(ending(events)).toMatchObject({ type: 'stream_end', content: '' });
    expect(ending(events)).not.toHaveProperty('message_id');
  });
});

describe('runs the server starts, or refuses after their start', () => {
  /** One run straight through the agent (what the recall runner and the socket both call). */
  async function runDirect(
    id: string,
    input: Parameters<NaviHandle['services']['agent']['runStream']>[1],
  ): Promise<AgentEvent[]> {
    const events: AgentEvent[] = [];
    const stream = navi.services.agent.runStream(id, input, {
      runId: `direct-${events.length}-${Date.now()}`,
      signal: new AbortController().signal,
      confirm: () => ({ asked: false, answer: Promise.resolve({ approved: false, reason: 'test' }) }),
    });
    for await (const event of stream) events.push(event);
    return events;
  }

  it('a recall’s prompt has the id its stream_start named', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'Watered.' });
    const events = await runDirect(id, {
      content: 'water the plants',
      trigger: 'recall',
      recall: { recall_id: 'rc-1', scheduled_for: new Date().toISOString(), chain: 0 },
    });
    const { messages } = await getSession(navi, id);
    expect(messages[0]).toMatchObject({ role: 'user', content: 'water the plants', trigger: 'recall' });
    expect(start(events)).toMatchObject({ trigger: 'recall', user_message_id: messages[0]!.id });
    expect(ending(events).message_id).toBe(messages[1]!.id);
  });

  it('a run refused before it stores its message stores nothing under the id it named', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'One.' });
    const first = await client.turn({ type: 'message', content: 'one' });
    const before = (await getSession(navi, id)).messages;
    // The message was summarised after the edit was checked: the agent refuses it at the start.
    await navi.services.sessions.replaceContextPrefix(id, ending(first).message_id!, {
      id: 'summary-1',
      role: 'user',
      kind: 'summary',
      content: 'They said one.',
      created_at: new Date().toISOString(),
    });
    const events = await runDirect(id, {
      content: 'one, edited',
      trigger: 'user',
      rewind: { messageId: before[0]!.id, rerun: false },
    });
    expect(events.map((e) => e.type)).toEqual(['stream_start', 'error']);
    const named = start(events).user_message_id;
    expect(named).toEqual(expect.any(String));
    const after = (await getSession(navi, id)).messages;
    expect(after).toEqual(before);
    expect(after.map((m) => m.id)).not.toContain(named);
  });
});
