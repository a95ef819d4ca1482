/**
 * The agent extends itself end to end: the (fake) LLM calls write_tool, the user approves it
 * over the WebSocket, and in the next message the LLM calls the tool it wrote and reads its
 * real output.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const REVERSER = `export const name = 'reverse_words';
export const description = 'Reverses the order of the words of a sentence.';
export const parameters = {
  type: 'object',
  properties: { sentence: { type: 'string' } },
  required: ['sentence'],
};
export async function execute(params: { sentence: string }): Promise<string> {
  return params.sentence.split(/\\s+/).reverse().join(' ');
}
`;

const THROWS_AT_IMPORT = `export const name = 'needs_config';
export const description = 'Reads a config that is not there.';
export const parameters = { type: 'object', properties: {} };
const config = JSON.parse('{not json');
export async function execute(): Promise<string> { return String(config); }
`;

// A profile that can use user tools and the meta group, as the shipped secretary can.
const profiles = profilesDir([
  { ...plainProfile, id: 'maker', name: 'Maker', enabled_tools: ['group:meta'] },
]);

type ConfirmEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

/** The last tool result the LLM received in `request`. */
function toolMessage(request: RecordedRequest | undefined): string {
  const m = request?.body.messages?.findLast((msg) => msg.role === 'tool');
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content);
}

describe('write_tool end to end', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let toolsDir: string;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: { DEFAULT_LLM_BACKEND: 'ollama', PROFILES_DIR: profiles, DEFAULT_PROFILE: 'maker' },
    }));
    toolsDir = join(navi.dir, 'tools');
    mkdirSync(toolsDir, { recursive: true });
    // As inside the project, where package.json makes the tools folder ES modules.
    writeFileSync(join(toolsDir, 'package.json'), '{"type":"module"}\n');
  });
  afterEach(() => fake.reset());
  afterAll(() => close());

  async function approveWriteTool(client: EventClient, from: number): Promise<ServerEvent[]> {
    const asked = (await client.waitFor(
      (e) => e.type === 'tool_confirm_request',
      15_000,
      from,
    )) as ConfirmEvent;
    expect(asked.tool).toBe('write_tool');
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    return client.waitForRunEnd(from);
  }

  it('writes a tool in one message and uses it, with its real output, in the next', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie: await navi.pair() } });
    fake.enqueue(
      { toolCalls: [{ name: 'write_tool', arguments: { name: 'reverse_words', code: REVERSER } }] },
      { text: 'I wrote reverse_words.' },
    );
    client.send({ type: 'message', content: 'make yourself a tool that reverses words' });
    const first = await approveWriteTool(client, 0);
    const written = first.find((e): e is ToolCallEvent => e.type === 'tool_call');
    expect(written?.success).toBe(true);
    expect(written?.result).toContain('Tool "reverse_words" written to');
    expect(toolMessage(chatRequests(fake)[1])).toContain('loaded and enabled in every profile');
    expect(readFileSync(join(toolsDir, 'reverse_words.ts'), 'utf8')).toBe(REVERSER);
    expect(JSON.parse(readFileSync(join(toolsDir, 'enabled.json'), 'utf8'))).toEqual(['reverse_words']);

    fake.reset();
    fake.enqueue(
      { toolCalls: [{ name: 'reverse_words', arguments: { sentence: 'one two three' } }] },
      { text: 'Reversed.' },
    );
    const mark = client.events.length;
    client.send({ type: 'message', content: 'reverse "one two three"' });
    const second = await client.waitForRunEnd(mark);
    expect(second.some((e) => e.type === 'tool_confirm_request')).toBe(false);
    expect(second.find((e) => e.type === 'tool_call')).toMatchObject({
      tool: 'reverse_words',
      success: true,
      result: 'three two one',
    });
    const [ask, answer] = chatRequests(fake);
    // The new tool is offered (the profile enables only group:meta; enabled.json adds it).
    expect(ask?.body.tools?.map((t) => t.function.name)).toContain('reverse_words');
    expect(toolMessage(answer)).toBe('three two one');
    await client.close();
  });

  it('reports a tool that throws at import with its stack and leaves nothing enabled', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie: await navi.pair() } });
    fake.enqueue(
      { toolCalls: [{ name: 'write_tool', arguments: { name: 'needs_config', code: THROWS_AT_IMPORT } }] },
      { text: 'It failed.' },
    );
    client.send({ type: 'message', content: 'make a config tool' });
    const events = await approveWriteTool(client, 0);
    const result = events.find((e): e is ToolCallEvent => e.type === 'tool_call');
    expect(result?.success).toBe(false);
    expect(result?.result).toContain(
      'Tool "needs_config" was not installed: threw while loading: SyntaxError',
    );
    expect(result?.result).toMatch(/at .*needs_config\.ts/);
    expect(result?.result).toContain('No file was kept.');
    expect(toolMessage(chatRequests(fake)[1])).toContain('needs_config.ts');
    expect(existsSync(join(toolsDir, 'needs_config.ts'))).toBe(false);
    expect(JSON.parse(readFileSync(join(toolsDir, 'enabled.json'), 'utf8'))).not.toContain('needs_config');
    expect(navi.services.tools.has('needs_config')).toBe(false);
    await client.close();
  });
});
