/**
 * Issue 2 end to end: the real server, agent, SQLite file and backends against the fake LLM
 * server, over HTTP and WebSocket.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/tools/types.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

/** Resolves once `parties` calls are waiting, so it only completes when calls run concurrently. */
function barrierTool(parties: number): ToolDefinition {
  let waiting: (() => void)[] = [];
  return {
    name: 'barrier',
    description: 'Waits for its sibling calls.',
    parameters: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
    async execute(params, ctx) {
      await new Promise<void>((resolve, reject) => {
        waiting.push(resolve);
        if (waiting.length >= parties) {
          for (const w of waiting) w();
          waiting = [];
        }
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
      return { success: true, output: `passed ${String(params.label)}` };
    },
  };
}

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'planner', name: 'Planner', planning_enabled: true },
  { ...plainProfile, id: 'short', name: 'Short', max_iterations: 2 },
]);

describe.each(['ollama', 'openai'] as const)('a conversation over %s', (backend) => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: backend,
        OLLAMA_HOST: fake.ollamaUrl,
        OPENAI_BASE_URL: fake.openaiUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
      },
      extraTools: [barrierTool(2)],
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it('streams thinking then the answer, saves both buffers and counts tokens', async () => {
    const id = await navi.createSession();
    fake.enqueue({
      thinking: 'The user greets me.',
      text: 'Hello! How can I help today?',
      usage: { prompt: 120, completion: 30 },
    });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Hi Navi\nsecond line' });
    const events = await client.waitForRunEnd();
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('stream_start');
    expect(types.indexOf('thinking_delta')).toBeLessThan(types.indexOf('thinking_end'));
    expect(types.indexOf('thinking_end')).toBeLessThan(types.indexOf('stream_delta'));
    expect(types.at(-1)).toBe('stream_end');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const thinking = events.flatMap((e) => (e.type === 'thinking_delta' ? [e.delta] : [])).join('');
    const text = events.flatMap((e) => (e.type === 'stream_delta' ? [e.delta] : [])).join('');
    expect(thinking).toBe('The user greets me.');
    expect(text).toBe('Hello! How can I help today?');
    expect(events.at(-1)).toMatchObject({
      content: text,
      context_tokens: 150,
      max_context_tokens: backend === 'ollama' ? 65536 : 128000,
    });

    const session = (await (await fetch(`${navi.url}/sessions/${id}`)).json()) as {
      title: string;
      context_token_count: number;
      messages: { role: string; content: string; thinking?: string; interrupted?: true }[];
    };
    expect(session.title).toBe('Hi Navi');
    expect(session.context_token_count).toBe(150);
    expect(session.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(session.messages[1]).toMatchObject({ content: text, thinking });
    expect(session.messages[1]?.interrupted).toBeUndefined();
    const request = fake.requests.find((r) => r.kind === 'chat');
    expect(request?.body.messages?.[0]?.role).toBe('system');
    expect(JSON.stringify(request?.body.messages?.[0]?.content)).toContain('You are Navi');
    await client.close();
  });

  it('keeps a form submission in both buffers, marked, without titling the session', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'Booked.' });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'form_submit', form_id: 'trip', values: { city: 'Oslo', nights: 2 } });
    const events = await client.waitForRunEnd();
    expect(events[0]).toMatchObject({ type: 'stream_start', trigger: 'form' });
    const session = (await (await fetch(`${navi.url}/sessions/${id}`)).json()) as {
      title: string | null;
      messages: { role: string; kind?: string; form_submit?: Record<string, unknown> }[];
    };
    expect(session.title ?? '').toBe('');
    expect(session.messages[0]).toMatchObject({
      role: 'user',
      kind: 'form_submit',
      form_submit: { form_id: 'trip', values: { city: 'Oslo', nights: 2 } },
    });
    const sent = fake.requests.find((r) => r.kind === 'chat')?.body.messages?.at(-1);
    expect(JSON.parse(String(sent?.content))).toEqual({
      form_id: 'trip',
      values: { city: 'Oslo', nights: 2 },
    });
    await client.close();
  });

  it('sends images to the model and strips a data: prefix', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'A red dot.' });
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'What is this?', images: [`data:image/png;base64,${png}`] });
    await client.waitForRunEnd();
    const user = fake.requests.find((r) => r.kind === 'chat')?.body.messages?.find((m) => m.role === 'user');
    expect(JSON.stringify(user)).toContain(png);
    expect(JSON.stringify(user)).not.toContain('data:image/png;base64,data:');
    await client.close();
  });

  it('runs the calls of one turn concurrently and feeds results back in call order', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      {
        thinking: 'I need both.',
        toolCalls: [
          { id: 'c1', name: 'barrier', arguments: { label: 'one' } },
          { id: 'c2', name: 'barrier', arguments: { label: 'two' } },
        ],
      },
      { text: 'Both passed.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'run both' });
    const events = await client.waitForRunEnd();
    const started = events.filter((e) => e.type === 'tool_started');
    const done = events.filter((e) => e.type === 'tool_call');
    expect(started.map((e) => e.call_id).sort()).toEqual(['c1', 'c2']);
    expect(done).toHaveLength(2);
    for (const e of done) expect(e).toMatchObject({ success: true, is_subagent: false });
    expect(events.find((e) => e.type === 'turn_thinking')).toMatchObject({
      thinking: 'I need both.',
      is_subagent: false,
    });
    // Both tool_started come before either tool_call: they ran at the same time.
    const lastStart = Math.max(...started.map((e) => e.seq ?? 0));
    const firstDone = Math.min(...done.map((e) => e.seq ?? 0));
    expect(lastStart).toBeLessThan(firstDone);

    const second = fake.requests.filter((r) => r.kind === 'chat')[1];
    const toolMessages = second?.body.messages?.filter((m) => m.role === 'tool') ?? [];
    expect(toolMessages.map((m) => JSON.stringify(m.content))).toEqual(['"passed one"', '"passed two"']);
    const offered = fake.requests[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain('barrier');

    const context = (await (await fetch(`${navi.url}/sessions/${id}/context`)).json()) as {
      messages: { role: string }[];
    };
    expect(context.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    await client.close();
  });

  it('plans first when the profile asks for it, and skips planning on DIRECT', async () => {
    const id = await navi.createSession('planner');
    fake.enqueue({ text: '1. Look at the files\n2. Summarise them' }, { text: 'Done as planned.' });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'summarise my files' });
    let events = await client.waitForRunEnd();
    expect(events.find((e) => e.type === 'plan_ready')).toMatchObject({
      plan: '1. Look at the files\n2. Summarise them',
    });
    const planning = fake.requests[0];
    expect(planning?.body.tools ?? []).toHaveLength(0);
    expect(backend === 'ollama' ? planning?.body.think : false).toBe(false);
    const followUp = fake.requests[1]?.body.messages ?? [];
    expect(JSON.stringify(followUp.at(-1))).toContain('Look at the files');

    fake.reset();
    fake.enqueue({ text: 'DIRECT' }, { text: 'Hi.' });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'hello' });
    events = await client.waitForRunEnd(mark);
    expect(events.some((e) => e.type === 'plan_ready')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Hi.' });
    await client.close();
  });

  it('does not plan for a profile without planning', async () => {
    const id = await navi.createSession('plain');
    fake.enqueue({ text: 'Just an answer.' });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'hello' });
    const events = await client.waitForRunEnd();
    expect(events.some((e) => e.type === 'plan_ready')).toBe(false);
    expect(fake.requests.filter((r) => r.kind === 'chat')).toHaveLength(1);
    await client.close();
  });

  it('ends with a clear message when max_iterations is reached', async () => {
    const id = await navi.createSession('short');
    fake.setDefault({
      toolCalls: [
        { name: 'barrier', arguments: { label: 'x' } },
        { name: 'barrier', arguments: { label: 'y' } },
      ],
    });
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'loop forever' });
    const events = await client.waitForRunEnd();
    const end = events.at(-1);
    expect(end?.type).toBe('stream_end');
    expect(end && 'content' in end ? end.content : '').toMatch(/stopped after 2 steps/);
    expect(fake.requests.filter((r) => r.kind === 'chat')).toHaveLength(2);
    await client.close();
  });
});
