/**
 * Failed turns are saved, and regenerate and edit replace turns (docs/architecture.md#rewinding):
 * the real server, agent and SQLite file against the fake LLM server, over WebSocket and REST.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { SessionMessage } from '../../src/protocol/rest.js';
import { ok, type ToolDefinition } from '../../src/tools/types.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession, postMessage } from '../support/rest.js';
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
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
      // A summary call would take a reply scripted for the loop.
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

/** Sends `command`, which must be refused: resolves with the refusal (an error outside any run). */
async function refused(client: EventClient, command: unknown): Promise<ServerEvent> {
  const mark = client.events.length;
  client.send(command);
  const event = await client.waitFor((e) => e.type === 'error', 15_000, mark);
  expect(event.run_id).toBeUndefined();
  expect(client.events.slice(mark).some((e) => e.type === 'stream_start')).toBe(false);
  return event;
}

async function contextOf(id: string): Promise<SessionMessage[]> {
  const res = await fetch(`${navi.url}/sessions/${id}/context`);
  return ((await res.json()) as { messages: SessionMessage[] }).messages;
}

const shape = (messages: SessionMessage[]) => messages.map((m) => `${m.role}:${m.content ?? '(calls)'}`);

/** The texts of the user and assistant messages an LLM request carried. */
const conversation = (request: RecordedRequest | undefined) =>
  (request?.body.messages ?? [])
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);

async function post(
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${navi.url}${path}`, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A session with the turns `one`→`A1`, `two`→`A2`, `three`→`A3`, made over REST. */
async function threeTurns(): Promise<{ id: string; messages: SessionMessage[] }> {
  const id = await navi.createSession();
  for (const [question, answer] of [
    ['one', 'A1'],
    ['two', 'A2'],
    ['three', 'A3'],
  ] as const) {
    fake.enqueue({ text: answer });
    expect((await postMessage(navi, id, question)).status).toBe(200);
  }
  return { id, messages: (await getSession(navi, id)).messages };
}

describe('a failed turn', () => {
  it('is saved after what the turn did, shows after a reload, and the model never reads it', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ id: 'n1', name: 'take_note', arguments: { text: 'milk' } }] },
      { httpError: { status: 500, body: 'model crashed' } },
    );
    const client = await connect(id);
    const events = await client.turn({ type: 'message', content: 'note milk' });
    const failure = events.at(-1) as Extract<ServerEvent, { type: 'error' }>;
    expect(failure).toMatchObject({ type: 'error', recoverable: false, code: 'LLM_HTTP_ERROR' });

    const { messages } = await getSession(navi, id);
    expect(shape(messages)).toEqual([
      'user:note milk',
      'assistant:(calls)',
      'tool:noted milk',
      `system:${failure.message}`,
    ]);
    expect(messages[2]).toMatchObject({ name: 'take_note', success: true, outcome: 'ok' });
    expect(messages[3]).toMatchObject({
      kind: 'error',
      error: { message: failure.message, code: 'LLM_HTTP_ERROR' },
    });
    expect((await contextOf(id)).map((m) => m.id)).toEqual(messages.slice(0, 3).map((m) => m.id));

    // The next message reaches the model without the failure.
    fake.enqueue({ text: 'Fine now.' });
    await client.turn({ type: 'message', content: 'are you back?' });
    const sent = JSON.stringify(chatRequests(fake).at(-1)?.body.messages);
    expect(sent).toContain('noted milk');
    expect(sent).not.toContain(failure.message);
    expect(shape((await getSession(navi, id)).messages).slice(3)).toEqual([
      `system:${failure.message}`,
      'user:are you back?',
      'assistant:Fine now.',
    ]);
  });

  it('is retried by regenerate once the LLM is back: the failed turn goes, the message runs once more', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ id: 'n1', name: 'take_note', arguments: { text: 'eggs' } }] },
      { httpError: { status: 503, body: 'overloaded' } },
    );
    const client = await connect(id);
    await client.turn({ type: 'message', content: 'note eggs' });
    const failed = (await getSession(navi, id)).messages;
    expect(failed.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'system']);

    fake.enqueue({ text: 'Noted eggs.' });
    const events = await client.turn({ type: 'regenerate' });
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['stream_start', 'history_rewound']);
    expect(events[1]).toMatchObject({
      from_message_id: failed[1]!.id,
      removed_ids: failed.slice(1).map((m) => m.id),
    });
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Noted eggs.' });

    const after = (await getSession(navi, id)).messages;
    expect(shape(after)).toEqual(['user:note eggs', 'assistant:Noted eggs.']);
    expect(after[0]!.id).toBe(failed[0]!.id);
    expect((await contextOf(id)).map((m) => m.id)).toEqual(after.map((m) => m.id));
    expect(conversation(chatRequests(fake).at(-1))).toEqual(['user:note eggs']);
  });

  it('is not saved when the run stops before its user message is in place', async () => {
    // The agent checks the rewind again once the previous run has settled: a message removed or
    // summarised since the request was checked ends the run before anything is written.
    const { id, messages } = await threeTurns();
    await navi.services.sessions.replaceContextPrefix(id, messages[2]!.id, {
      id: 'summary-1',
      role: 'user',
      kind: 'summary',
      content: 'They said one.',
      created_at: new Date().toISOString(),
    });
    const runOf = async (rewind: { messageId: string; rerun: boolean }) => {
      const events: string[] = [];
      const stream = navi.services.agent.runStream(
        id,
        { content: 'again', trigger: 'user', rewind },
        {
          runId: `direct-${rewind.messageId}`,
          signal: new AbortController().signal,
          confirm: () => ({ asked: false, answer: Promise.resolve({ approved: false, reason: 'test' }) }),
        },
      );
      for await (const event of stream)
        events.push(event.type === 'error' ? `error:${event.code}` : event.type);
      return events;
    };
    expect(await runOf({ messageId: 'gone', rerun: true })).toEqual([
      'stream_start',
      'error:MESSAGE_NOT_FOUND',
    ]);
    expect(await runOf({ messageId: messages[0]!.id, rerun: false })).toEqual([
      'stream_start',
      'error:MESSAGE_NOT_EDITABLE',
    ]);
    expect((await getSession(navi, id)).messages).toEqual(messages);
    expect(chatRequests(fake)).toHaveLength(3);
  });
});

describe('regenerate', () => {
  it('replaces the last answer in both buffers and tells every watching client first', async () => {
    const id = await navi.createSession();
    const client = await connect(id);
    const watcher = await connect(id);
    fake.enqueue({ text: 'First answer.' });
    await client.turn({ type: 'message', content: 'hi' });
    const before = (await getSession(navi, id)).messages;

    fake.enqueue({ text: 'Second answer.' });
    const events = await client.turn({ type: 'regenerate' });
    expect(events[0]).toMatchObject({ type: 'stream_start', trigger: 'user', seq: 1 });
    expect(events[1]).toEqual({
      type: 'history_rewound',
      from_message_id: before[1]!.id,
      removed_ids: [before[1]!.id],
      run_id: events[0]!.run_id,
      seq: 2,
    });
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Second answer.' });
    const watched = await watcher.waitForRunEnd(
      watcher.events.findIndex((e) => e.run_id === events[0]!.run_id),
    );
    expect(watched.map((e) => e.type)).toEqual(events.map((e) => e.type));

    const after = (await getSession(navi, id)).messages;
    expect(shape(after)).toEqual(['user:hi', 'assistant:Second answer.']);
    expect(after[0]!.id).toBe(before[0]!.id);
    expect(after[0]!.created_at).toBe(before[0]!.created_at);
    expect(shape(await contextOf(id))).toEqual(['user:hi', 'assistant:Second answer.']);
    expect(conversation(chatRequests(fake).at(-1))).toEqual(['user:hi']);
  });

  it('over REST waits for the run and answers like POST /messages', async () => {
    const { id, messages } = await threeTurns();
    fake.enqueue({ text: 'A3 again.' });
    const res = await post(`/sessions/${id}/regenerate`);
    expect(res).toEqual({ status: 200, json: { content: 'A3 again.', stopped: false, tool_calls: [] } });
    const after = (await getSession(navi, id)).messages;
    expect(shape(after)).toEqual([
      'user:one',
      'assistant:A1',
      'user:two',
      'assistant:A2',
      'user:three',
      'assistant:A3 again.',
    ]);
    expect(after.slice(0, 5)).toEqual(messages.slice(0, 5));
  });
});

describe('edit', () => {
  it('replaces the message and every turn after it, then answers the new text', async () => {
    const { id, messages } = await threeTurns();
    const two = messages[2]!;
    const client = await connect(id);
    fake.enqueue({ text: 'A2 edited.' });
    const events = await client.turn({ type: 'edit', message_id: two.id, content: 'two, edited' });
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['stream_start', 'history_rewound']);
    expect(events[1]).toMatchObject({
      from_message_id: two.id,
      removed_ids: messages.slice(2).map((m) => m.id),
    });

    const detail = await getSession(navi, id);
    expect(shape(detail.messages)).toEqual([
      'user:one',
      'assistant:A1',
      'user:two, edited',
      'assistant:A2 edited.',
    ]);
    expect(detail.messages[2]!.id).not.toBe(two.id);
    expect(detail.title).toBe('one');
    expect(shape(await contextOf(id))).toEqual(shape(detail.messages));
    expect(conversation(chatRequests(fake).at(-1))).toEqual(['user:one', 'assistant:A1', 'user:two, edited']);
  });

  it('over REST replaces the message the path names', async () => {
    const { id, messages } = await threeTurns();
    fake.enqueue({ text: 'From the start.' });
    const res = await post(`/sessions/${id}/messages/${messages[0]!.id}/edit`, { content: 'zero' });
    expect(res).toMatchObject({ status: 200, json: { content: 'From the start.' } });
    expect(shape((await getSession(navi, id)).messages)).toEqual(['user:zero', 'assistant:From the start.']);
  });
});

describe('a form answered in a turn that a rewind removes', () => {
  /** `plan a trip` → `Which city?`, the form `trip` answered → `Booked.`, over the socket. */
  async function answeredForm(): Promise<{ id: string; client: EventClient }> {
    const id = await navi.createSession();
    const client = await connect(id);
    fake.enqueue({ text: 'Which city?' });
    await client.turn({ type: 'message', content: 'plan a trip' });
    fake.enqueue({ text: 'Booked.' });
    await client.turn({ type: 'form_submit', form_id: 'trip', values: { city: 'Oslo' } });
    return { id, client };
  }
  const submitAgain = { type: 'form_submit', form_id: 'trip', values: { city: 'Bergen' } };

  it('can be answered again: the agent, asked anew, may draw it under the same id', async () => {
    for (const rewind of ['regenerate over the socket', 'edit over REST']) {
      const { id, client } = await answeredForm();
      const plan = (await getSession(navi, id)).messages[0]!;
      fake.enqueue({ text: 'Which city, again?' });
      if (rewind === 'regenerate over the socket') await client.turn({ type: 'regenerate' });
      else
        expect(
          (await post(`/sessions/${id}/messages/${plan.id}/edit`, { content: 'plan a trip!' })).status,
        ).toBe(200);
      fake.enqueue({ text: 'Booked Bergen.' });
      const events = await client.turn(submitAgain);
      expect(events.at(-1), rewind).toMatchObject({ type: 'stream_end', content: 'Booked Bergen.' });
    }
  });

  it('stays answered when the rewind keeps it', async () => {
    const { id, client } = await answeredForm();
    fake.enqueue({ text: 'Enjoy.' });
    await client.turn({ type: 'message', content: 'thanks' });
    fake.enqueue({ text: 'You are welcome.' });
    await client.turn({ type: 'regenerate' });
    expect(await refused(client, submitAgain)).toMatchObject({ code: 'FORM_ALREADY_SUBMITTED' });
    expect((await getSession(navi, id)).messages.filter((m) => m.kind === 'form_submit')).toHaveLength(1);
  });
});

describe('refusals, which change nothing', () => {
  it('over the WebSocket: each says what was wrong, and no run starts', async () => {
    const empty = await navi.createSession();
    const emptyClient = await connect(empty);
    expect(await refused(emptyClient, { type: 'regenerate' })).toMatchObject({
      code: 'NOTHING_TO_REGENERATE',
    });

    const { id, messages } = await threeTurns();
    const other = await threeTurns();
    const requestsBefore = chatRequests(fake).length;
    const client = await connect(id);
    const user = messages[2]!.id;
    const cases: [unknown, string, RegExp][] = [
      [
        { type: 'edit', message_id: 'no-such-message', content: 'x' },
        'MESSAGE_NOT_FOUND',
        /no message with that id/,
      ],
      [{ type: 'edit', message_id: other.messages[0]!.id, content: 'x' }, 'MESSAGE_NOT_FOUND', /no message/],
      [
        { type: 'edit', message_id: messages[1]!.id, content: 'x' },
        'MESSAGE_NOT_EDITABLE',
        /an answer of the agent/,
      ],
      [{ type: 'edit', message_id: user, content: '   ' }, 'BAD_REQUEST', /the message is empty/],
      [{ type: 'edit', message_id: user, content: 'x'.repeat(1_000_001) }, 'BAD_REQUEST', /content/],
      [{ type: 'edit', message_id: user, content: 42 }, 'BAD_REQUEST', /content/],
      [{ type: 'edit', content: 'no id' }, 'BAD_REQUEST', /message_id/],
      [{ type: 'edit', message_id: 'x'.repeat(201), content: 'x' }, 'BAD_REQUEST', /message_id/],
      [{ type: 'edit', message_id: user, content: 'x', images: ['not base64!'] }, 'INVALID_IMAGE', /base64/],
      [
        { type: 'edit', message_id: user, content: 'x', files: [{ name: 'passwd', path: '/etc/passwd' }] },
        'FILE_NOT_IN_SESSION',
        /not uploaded/,
      ],
    ];
    for (const [command, code, message] of cases) {
      const event = (await refused(client, command)) as Extract<ServerEvent, { type: 'error' }>;
      expect(event.code, JSON.stringify(command).slice(0, 100)).toBe(code);
      expect(event.message).toMatch(message);
    }
    expect((await getSession(navi, id)).messages).toEqual(messages);
    expect(chatRequests(fake)).toHaveLength(requestsBefore);
  });

  it('over REST: the codes and statuses of the table', async () => {
    const empty = await navi.createSession();
    const { id, messages } = await threeTurns();
    const edit = (mid: string, body: unknown) =>
      post(`/sessions/${id}/messages/${encodeURIComponent(mid)}/edit`, body);
    expect(await post(`/sessions/${empty}/regenerate`)).toMatchObject({
      status: 409,
      json: { code: 'NOTHING_TO_REGENERATE' },
    });
    expect(await post('/sessions/00000000-0000-4000-8000-000000000000/regenerate')).toMatchObject({
      status: 404,
      json: { code: 'SESSION_NOT_FOUND' },
    });
    expect(await edit('nope', { content: 'x' })).toMatchObject({
      status: 404,
      json: { code: 'MESSAGE_NOT_FOUND' },
    });
    expect(await edit(messages[1]!.id, { content: 'x' })).toMatchObject({
      status: 409,
      json: { code: 'MESSAGE_NOT_EDITABLE' },
    });
    for (const body of [
      {},
      { content: 7 },
      { content: 'x'.repeat(1_000_001) },
      { content: 'x', extra: true },
    ])
      expect((await edit(messages[0]!.id, body)).status).toBe(400);
    expect(await edit(messages[0]!.id, { content: '' })).toMatchObject({
      status: 400,
      json: { code: 'BAD_REQUEST' },
    });
    expect((await getSession(navi, id)).messages).toEqual(messages);
  });

  it('while a run is active: RUN_ACTIVE for both, and the run is left alone', async () => {
    const { id, messages } = await threeTurns();
    const client = await connect(id);
    // The model never answers, so the run is still active at every refusal until it is stopped.
    fake.enqueue({ hang: true });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'four' });
    await client.waitFor((e) => e.type === 'stream_start', 15_000, mark);
    expect(await refused(client, { type: 'regenerate' })).toMatchObject({ code: 'RUN_ACTIVE' });
    expect(await refused(client, { type: 'edit', message_id: messages[0]!.id, content: 'x' })).toMatchObject({
      code: 'RUN_ACTIVE',
    });
    expect(await post(`/sessions/${id}/regenerate`)).toMatchObject({
      status: 409,
      json: { code: 'RUN_ACTIVE' },
    });
    expect(await post(`/sessions/${id}/messages/${messages[0]!.id}/edit`, { content: 'x' })).toMatchObject({
      status: 409,
      json: { code: 'RUN_ACTIVE' },
    });
    await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    const events = await client.waitForRunEnd(mark);
    expect(events.at(-1)).toMatchObject({ type: 'stream_stopped' });
    expect(events.some((e) => e.type === 'history_rewound')).toBe(false);
    expect(shape((await getSession(navi, id)).messages)).toEqual([...shape(messages), 'user:four']);
  });
});
