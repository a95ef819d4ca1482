/**
 * The executor pipeline inside a running Navi (docs/architecture.md#tool-calls): badly behaved tools — throwing,
 * hanging, returning garbage or giant strings, starting programs that never end — become
 * results the LLM reads, and the run goes on. Validation and policy refuse calls before they
 * run, and a tool a profile may not use is never offered.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runProcess } from '../../src/machine/sandbox/run-process.js';
import type { ToolDefinition, ToolParams, ToolResult } from '../../src/tools/types.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { processGone } from '../support/processes.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

const TIMEOUT_MS = 1000;
const MAX_CHARS = 1000;

const ran: string[] = [];
let sleeperPid = 0;
let sleeperDone: Promise<unknown> = Promise.resolve();

function odd(
  name: string,
  execute: ToolDefinition['execute'],
  parameters?: ToolDefinition['parameters'],
): ToolDefinition {
  return {
    name,
    description: `Test tool ${name}.`,
    parameters: parameters ?? { type: 'object', properties: {} },
    async execute(params, ctx) {
      ran.push(name);
      return execute(params, ctx);
    },
  };
}

const tools: ToolDefinition[] = [
  odd('odd_throws', async () => {
    throw new Error('the disk is on fire');
  }),
  odd('odd_hangs', () => new Promise<ToolResult>(() => {})),
  odd('odd_giant', async () => ({ success: true, output: 'y'.repeat(200_000) })),
  // Tools written by users return all sorts of things; the casts model that.
  odd('odd_object', async () => ({ success: true, output: { answer: 42 } }) as unknown as ToolResult),
  odd('odd_undefined', async () => undefined as unknown as ToolResult),
  odd('odd_sleeper', async (_params, ctx) => {
    sleeperDone = runProcess({
      command: 'sleep',
      args: ['600'],
      signal: ctx.signal,
      onSpawn: (pid) => {
        sleeperPid = pid;
      },
    });
    await sleeperDone;
    return { success: true, output: 'woke up' };
  }),
  odd(
    'odd_typed',
    async (params: ToolParams) => ({ success: true, output: `count=${String(params.count)}` }),
    {
      type: 'object',
      properties: { count: { type: 'integer', minimum: 1 }, mode: { enum: ['fast', 'slow'] } },
      required: ['count'],
      additionalProperties: false,
    },
  ),
  odd('odd_secret', async () => ({ success: true, output: 'secret' })),
];

const profiles = profilesDir([
  plainProfile,
  {
    ...plainProfile,
    id: 'limited',
    name: 'Limited',
    enabled_tools: ['group:session', 'odd_*'],
    denied_tools: ['odd_secret', 'switch_profile'],
  },
]);

type Reply = { content: string; tool_calls: { tool: string; success: boolean; result: string }[] };

function toolMessages(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

describe('the executor inside a running Navi', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'ollama',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        TOOL_TIMEOUT_MS: String(TIMEOUT_MS),
        TOOL_MAX_OUTPUT_CHARS: String(MAX_CHARS),
      },
      extraTools: tools,
    }));
  });
  afterEach(() => {
    fake.reset();
    ran.length = 0;
  });
  afterAll(() => close());

  async function send(sessionId: string, calls: { name: string; arguments: Record<string, unknown> }[]) {
    fake.enqueue({ toolCalls: calls }, { text: 'The run went on.' });
    const res = await postMessage(navi, sessionId, 'go');
    expect(res.status).toBe(200);
    const reply = (await res.json()) as Reply;
    return { reply, byTool: new Map(reply.tool_calls.map((c) => [c.tool, c])) };
  }

  it('turns throwing, hanging, giant and malformed tools into results and finishes the run', async () => {
    const id = await navi.createSession();
    const { reply, byTool } = await send(
      id,
      ['odd_throws', 'odd_hangs', 'odd_giant', 'odd_object', 'odd_undefined'].map((name) => ({
        name,
        arguments: {},
      })),
    );
    expect(reply.content).toBe('The run went on.');
    expect(byTool.get('odd_throws')).toMatchObject({
      success: false,
      result: 'Tool "odd_throws" failed: the disk is on fire',
    });
    expect(byTool.get('odd_hangs')).toMatchObject({
      success: false,
      result: `Tool "odd_hangs" did not finish within ${TIMEOUT_MS} ms and was stopped. Try a smaller task or narrower arguments.`,
    });
    const giant = byTool.get('odd_giant');
    expect(giant?.success).toBe(true);
    expect(giant?.result).toBe(
      `${'y'.repeat(MAX_CHARS)}\n[output truncated: 199000 of 200000 characters cut]`,
    );
    expect(byTool.get('odd_object')).toMatchObject({ success: true, result: '{"answer":42}' });
    expect(byTool.get('odd_undefined')).toMatchObject({
      success: false,
      result: 'Tool "odd_undefined" returned undefined instead of a result; this is a bug in the tool.',
    });
    // The LLM read the same results, in call order, the giant one already cut.
    const followUp = chatRequests(fake)[1];
    const sent = toolMessages(followUp);
    expect(sent).toHaveLength(5);
    expect(sent[0]).toBe('Tool "odd_throws" failed: the disk is on fire');
    expect(sent[2]?.length).toBeLessThan(MAX_CHARS + 100);
    expect(sent[3]).toBe('{"answer":42}');
  });

  it('kills the programs of a tool that runs past TOOL_TIMEOUT_MS', async () => {
    const id = await navi.createSession();
    const { byTool } = await send(id, [{ name: 'odd_sleeper', arguments: {} }]);
    expect(byTool.get('odd_sleeper')?.result).toContain(`did not finish within ${TIMEOUT_MS} ms`);
    await sleeperDone;
    expect(sleeperPid).toBeGreaterThan(0);
    await vi.waitFor(() => expect(processGone(sleeperPid)).toBe(true), { timeout: 10_000 });
  });

  it('refuses invalid arguments with every problem and the schema, without running the tool', async () => {
    const id = await navi.createSession();
    const { byTool } = await send(id, [
      { name: 'odd_typed', arguments: { count: 0, mode: 'turbo', colour: 'red' } },
    ]);
    const result = byTool.get('odd_typed')?.result ?? '';
    expect(byTool.get('odd_typed')?.success).toBe(false);
    expect(result).toContain('Invalid arguments for tool "odd_typed"; it was not run.');
    expect(result).toContain('- "count" must be >= 1');
    expect(result).toContain('- "mode" must be one of "fast", "slow"');
    expect(result).toContain('- unknown argument "colour"');
    expect(result).toContain('Expected parameters (JSON Schema): {"type":"object"');
    expect(ran).toEqual([]);

    // Quoted numbers from small models are coerced, not refused.
    const coerced = await send(id, [{ name: 'odd_typed', arguments: { count: '7' } }]);
    expect(coerced.byTool.get('odd_typed')).toMatchObject({ success: true, result: 'count=7' });
  });

  it('offers a profile only the tools its policy allows, deny beating allow', async () => {
    const id = await navi.createSession('limited');
    fake.enqueue({ text: 'hi' });
    await postMessage(navi, id, 'hello');
    const offered = chatRequests(fake)[0]?.body.tools?.map((t) => t.function.name) ?? [];
    // group:session
    expect(offered).toEqual(expect.arrayContaining(['todo', 'scratchpad', 'list_profiles']));
    // glob
    expect(offered).toEqual(expect.arrayContaining(['odd_throws', 'odd_typed']));
    // denied by name, though the glob and the group allow them
    expect(offered).not.toContain('odd_secret');
    expect(offered).not.toContain('switch_profile');
    // not enabled at all
    expect(offered).not.toContain('filesystem');
    expect(offered).not.toContain('write_tool');
  });

  it('refuses a call to a denied or not enabled tool, naming the rule, without running it', async () => {
    const id = await navi.createSession('limited');
    const { byTool } = await send(id, [
      { name: 'odd_secret', arguments: {} },
      { name: 'list_tools', arguments: {} },
      { name: 'no_such_tool', arguments: {} },
    ]);
    expect(byTool.get('odd_secret')).toMatchObject({
      success: false,
      result: 'Tool "odd_secret" is denied for profile "limited" (matches "odd_secret").',
    });
    expect(byTool.get('list_tools')).toMatchObject({
      success: false,
      result: 'Tool "list_tools" is not enabled for profile "limited"; use only the tools you were offered.',
    });
    expect(byTool.get('no_such_tool')?.result).toMatch(
      /^Unknown tool "no_such_tool"\. Available tools: .*odd_throws/,
    );
    expect(byTool.get('no_such_tool')?.result).not.toContain('odd_secret');
    expect(ran).toEqual([]);
  });
});
