/**
 * The agent fits each LLM call to its model, end to end against a fake Ollama: a model that
 * cannot call tools gets none, a model with a short context gets a clamped `num_ctx`, a text-only
 * model gets no images, a long tool list is trimmed to the tool budget while every tool stays
 * reachable through list_tools and tool_manual, and a profile's per-backend policy decides both
 * what is offered and what may be called. Each case is announced with a `notice`, once per run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, ServerEvent } from '../../src/protocol/events.js';
import { specTokens } from '../../src/tools/tool-budget.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { TOPICS } from '../support/tool-topics.js';
import { EventClient } from '../support/ws-client.js';

/** Calls of the gadget tools, by name: a tool the model was not offered still runs. */
const gadgetRuns: string[] = [];

function gadget(topic: string): ToolDefinition {
  return {
    name: `gadget_${topic}`,
    description:
      `Looks after the ${topic}: reads its state, changes its settings and reports what it did. ` +
      'Use it when the person asks about this one thing; it does nothing else at all.',
    parameters: { type: 'object', properties: { action: { type: 'string', description: 'What to do.' } } },
    risk: { reads: true },
    execute: async () => {
      gadgetRuns.push(topic);
      return { success: true, output: `The ${topic} is fine.` };
    },
  };
}

/** A tool that loads a picture, as image_view does: the image goes into the context. */
const snapshot: ToolDefinition = {
  name: 'snapshot',
  description: 'Takes a picture of the front door.',
  parameters: { type: 'object', properties: {} },
  risk: { reads: true },
  execute: async () => ({
    success: true,
    output: 'Took a picture of the front door.',
    metadata: { is_image: true, base64: 'iVBORw0KGgoAAAANSUhEUg==' },
  }),
};

// The built-in tools only: they fit a quarter of the 32768-token window.
const builtins = { ...plainProfile, denied_tools: ['gadget_*'] };
const profiles = profilesDir([
  builtins,
  { ...builtins, id: 'notools', model: 'no-tools' },
  { ...builtins, id: 'short', model: 'short-context' },
  { ...builtins, id: 'textonly', model: 'text-only' },
  {
    ...plainProfile,
    id: 'budget',
    // 60 tools: the two that lead to the others, and 58 gadgets.
    enabled_tools: ['list_tools', 'tool_manual', 'gadget_*'],
    backends: { ollama: { tool_budget_ratio: 0.025 } },
  },
  {
    ...plainProfile,
    id: 'split',
    enabled_tools: ['*'],
    backends: {
      ollama: {
        enabled_tools: ['todo', 'scratchpad', 'list_tools', 'tool_manual'],
        denied_tools: ['scratchpad'],
      },
    },
  },
]);

const show = (capabilities: string[], context?: number) => ({
  show: {
    capabilities,
    model_info: { 'general.architecture': 'fake', ...(context ? { 'fake.context_length': context } : {}) },
  },
});

const offered = (r: RecordedRequest | undefined) => (r?.body.tools ?? []).map((t) => t.function.name);
const notices = (events: ServerEvent[]) =>
  events.filter((e): e is EventOf<'notice'> & ServerEvent => e.type === 'notice');

describe('fitting each call to the model', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      llm: {
        models: ['test-model', 'no-tools', 'short-context', 'text-only'],
        modelInfo: {
          'no-tools': show(['completion']),
          'short-context': show(['completion', 'tools', 'vision'], 2048),
          'text-only': show(['completion', 'tools']),
        },
      },
      settings: {
        OLLAMA_DEFAULT_MODEL: 'test-model',
        OLLAMA_NUM_CTX: '32768',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        // A summary call would take a scripted reply meant for the loop.
        CONTEXT_COMPRESSION_ENABLED: 'false',
      },
      extraTools: [...TOPICS.map(gadget), snapshot],
    }));
  });
  afterEach(() => {
    fake.reset();
    gadgetRuns.length = 0;
  });
  afterAll(() => close());

  async function run(profile: string, content: string, sessionId?: string): Promise<ServerEvent[]> {
    const id = sessionId ?? (await navi.createSession(profile));
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content });
    const events = await client.waitForRunEnd();
    await client.close();
    return events;
  }

  it('offers no tools to a model that cannot call them, and says so once', async () => {
    fake.enqueue({ text: 'Hello without tools.' }, { text: 'Still without tools.' });
    const events = await run('notools', 'Hello');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Hello without tools.' });
    const [request] = chatRequests(fake);
    expect(request?.body.model).toBe('no-tools');
    expect(request?.body).not.toHaveProperty('tools');
    expect(notices(events)).toEqual([
      expect.objectContaining({
        code: 'TOOLS_UNSUPPORTED',
        message:
          'no-tools cannot call tools, so it answers without them; choose a model with tool calling to let Navi act.',
      }),
    ]);
    // A model that can call tools gets them, and no notice.
    const plain = await run('plain', 'Hello');
    expect(offered(chatRequests(fake)[1]).length).toBeGreaterThan(5);
    expect(notices(plain)).toEqual([]);
  });

  it("clamps the context to the model's, in num_ctx, max_context_tokens and one notice", async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'c1', name: 'todo', arguments: { action: 'list' } }] },
      { text: 'Done.' },
    );
    const events = await run('short', 'What is on my list?');
    const chats = chatRequests(fake);
    expect(chats.map((r) => r.body.options?.num_ctx)).toEqual([2048, 2048]);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', max_context_tokens: 2048 });
    // Once, though both calls were clamped (the tool list was trimmed to the small window too).
    const clamped = notices(events).filter((n) => n.code === 'CONTEXT_CLAMPED');
    expect(clamped.map((n) => n.message)).toEqual([
      'short-context takes at most 2048 tokens of context, less than the 32768 set for ollama (OLLAMA_NUM_CTX), so Navi uses 2048.',
    ]);
    // The backend's own window where the model says nothing shorter.
    await run('plain', 'Hi');
    expect(chatRequests(fake)[2]?.body.options?.num_ctx).toBe(32768);
  });

  it('sends a text-only model no image a tool loaded, only a line saying it was left out', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 's1', name: 'snapshot', arguments: {} }] },
      { text: 'I cannot see it.' },
    );
    await run('textonly', 'Who is at the door?');
    const second = chatRequests(fake)[1];
    const messages = second?.body.messages ?? [];
    expect(messages.some((m) => m.images !== undefined)).toBe(false);
    const injected = messages.find(
      (m) => m.role === 'user' && String(m.content).startsWith('Here is the image'),
    );
    expect(injected?.content).toBe(
      'Here is the image the tool loaded.\n[An image is not shown here: text-only reads text only.]',
    );

    // A model that reads images gets the picture itself.
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ id: 's2', name: 'snapshot', arguments: {} }] },
      { text: 'It is the postman.' },
    );
    await run('short', 'Who is at the door?');
    const images = (chatRequests(fake)[1]?.body.messages ?? []).flatMap((m) => m.images ?? []);
    expect(images).toEqual(['iVBORw0KGgoAAAANSUhEUg==']);
  });

  it('trims 60 tools to the budget, the route and the relevant ones first, and the rest stay callable', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'm1', name: 'tool_manual', arguments: { name: 'gadget_zeppelin' } }] },
      { toolCalls: [{ id: 'z1', name: 'gadget_zeppelin', arguments: { action: 'land' } }] },
      { text: 'The zeppelin has landed and the garden is next.' },
    );
    const events = await run('budget', 'How is my garden doing?');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end' });
    const chats = chatRequests(fake);
    expect(chats).toHaveLength(3);

    // 2.5% of the 32768-token window.
    const budget = 819;
    const first = offered(chats[0]);
    expect(first).toEqual(expect.arrayContaining(['list_tools', 'tool_manual', 'gadget_garden']));
    expect(first).not.toContain('gadget_zeppelin');
    expect(first.length).toBeLessThan(60);
    const sent = chats[0]?.body.tools ?? [];
    const sentTokens = sent.reduce(
      (n, t) =>
        n +
        specTokens({
          name: t.function.name,
          description: t.function.description ?? '',
          parameters: (t.function.parameters ?? {}) as Record<string, unknown>,
        }),
      0,
    );
    expect(sentTokens).toBeLessThanOrEqual(budget);
    const listTools = sent.find((t) => t.function.name === 'list_tools');
    expect(listTools?.function.description).toContain(`Only ${first.length} of the 60 tools`);

    // The tool it was not offered ran once the model asked for it by name.
    const zeppelin = events.find((e) => e.type === 'tool_call' && e.call_id === 'z1');
    expect(zeppelin).toMatchObject({ success: true, result: 'The zeppelin is fine.' });
    expect(gadgetRuns).toEqual(['zeppelin']);
    // A tool called in this conversation is offered from then on.
    expect(offered(chats[2])).toContain('gadget_zeppelin');

    const trimmed = notices(events);
    expect(trimmed).toHaveLength(1);
    expect(trimmed[0]).toMatchObject({ code: 'TOOLS_TRIMMED' });
    expect(trimmed[0]?.message).toMatch(
      new RegExp(
        `^Offered ${first.length} of 60 tools to test-model: .*tool budget of ${budget} \\(0\\.025 of a 32768-token context\\)`,
      ),
    );
    expect(trimmed[0]?.message).toContain('list_tools and tool_manual');
  });

  it('applies the profile policy of the backend in use, to what is offered and to what may be called', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'p1', name: 'scratchpad', arguments: { action: 'read' } }] },
      { text: 'The scratchpad is not mine to use here.' },
    );
    const id = await navi.createSession('split');
    const events = await run('split', 'Read the scratchpad.', id);
    expect(offered(chatRequests(fake)[0]).sort()).toEqual(['list_tools', 'todo', 'tool_manual']);
    const refused = events.find((e) => e.type === 'tool_call' && e.call_id === 'p1');
    expect(refused).toMatchObject({ success: false, metadata: { refused: 'policy' } });
    expect(refused?.type === 'tool_call' && refused.result).toBe(
      'Tool "scratchpad" is denied for profile "split" on the ollama backend (matches "scratchpad").',
    );

    // The same session on the OpenAI-compatible backend: that backend has no section, so the
    // profile's own policy applies.
    const patched = await fetch(`${navi.url}/sessions/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: { backend: 'openai', model: 'test-model' } }),
    });
    expect(patched.status).toBe(200);
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ id: 'p2', name: 'scratchpad', arguments: { action: 'read' } }] },
      { text: 'Read it.' },
    );
    const again = await run('split', 'Read the scratchpad.', id);
    const chats = chatRequests(fake);
    expect(chats[0]?.format).toBe('openai');
    expect(offered(chats[0])).toEqual(expect.arrayContaining(['scratchpad', 'todo', 'gadget_garden']));
    expect(again.find((e) => e.type === 'tool_call' && e.call_id === 'p2')).toMatchObject({ success: true });
  });

  it("uses the session's model for its subagents, unless they run another profile", async () => {
    const id = await navi.createSession('plain');
    const patched = await fetch(`${navi.url}/sessions/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: { backend: 'openai', model: 'text-only' } }),
    });
    expect(patched.status).toBe(200);
    fake.enqueue(
      { toolCalls: [{ id: 'a1', name: 'spawn_agent', arguments: { task: 'Same profile.' } }] },
      { text: 'Same-profile subagent done.' },
      {
        toolCalls: [
          { id: 'a2', name: 'spawn_agent', arguments: { task: 'Other profile.', profile_id: 'short' } },
        ],
      },
      { text: 'Other-profile subagent done.' },
      { text: 'Both finished.' },
    );
    const events = await run('plain', 'Ask two subagents.', id);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Both finished.' });
    const chats = chatRequests(fake).map((r) => `${r.format} ${r.body.model}`);
    expect(chats).toEqual([
      'openai text-only',
      'openai text-only',
      'openai text-only',
      // The "short" profile names its own model, on the default backend.
      'ollama short-context',
      'openai text-only',
    ]);
  });
});
