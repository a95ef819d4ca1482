/**
 * A tool's time limit counts the tool's own time, not the person's (docs/tools.md#time-limits):
 * while an MCP server's form or sampling confirmation waits for the person, neither the
 * executor's limit (TOOL_TIMEOUT_MS) nor the call's own (the server's `timeout_ms`) runs on. A
 * real Navi, the fake LLM and the fixture server (src/mcp/fixtures/asking-server.ts) as a stdio
 * child; the person answers over a real WebSocket after longer than the limit.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/protocol/events.js';
import type { RecordedRequest } from '../fake-llm/index.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const LIMIT_MS = 1500;
/** The `quick` server's own call limit, below Navi's: its timeout is the call's, not the executor's. */
const QUICK_LIMIT_MS = 1000;
/** How long the person takes to answer: longer than either limit. */
const THINKING_MS = 2 * LIMIT_MS;

const day = { type: 'object', properties: { day: { type: 'string', title: 'Day' } }, required: ['day'] };

function toolText(request: RecordedRequest | undefined): string {
  const message = request?.body.messages?.filter((m) => m.role === 'tool').at(-1);
  return typeof message?.content === 'string' ? message.content : '';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the time limit of a call that asks the person', () => {
  const dir = tempDir('navi-mcp-ask-limit-');
  const serversDir = join(dir, 'servers');
  let app: NaviWithLlm;
  let client: EventClient;

  beforeAll(async () => {
    mkdirSync(serversDir);
    const server = (name: string, extra: Record<string, unknown> = {}) =>
      writeFileSync(
        join(serversDir, `${name}.json`),
        JSON.stringify({
          name,
          command: process.execPath,
          args: ['--import', 'tsx', join(repoRoot, 'src', 'mcp', 'fixtures', 'asking-server.ts')],
          cwd: repoRoot,
          ...extra,
        }),
      );
    // Its own limit far beyond Navi's: Navi's is the one that ends its calls.
    server('asking', { timeout_ms: 60_000 });
    server('quick', { timeout_ms: QUICK_LIMIT_MS });
    app = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: serversDir,
        TOOL_TIMEOUT_MS: String(LIMIT_MS),
      },
    });
    await app.navi.services.mcp?.ready();
    expect(app.navi.services.mcp?.server('asking')?.state).toBe('ready');
    expect(app.navi.services.mcp?.server('quick')?.state).toBe('ready');
    const cookie = await app.navi.pair();
    const id = await app.navi.createSession();
    client = await EventClient.connect(app.navi.wsUrl(id), { headers: { cookie } });
  }, 60_000);

  beforeEach(() => app.fake.reset());

  afterAll(async () => {
    await client?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs one tool call; the person answers its form after THINKING_MS. The model reads the result. */
  async function askSlowly(tool: string, args: Record<string, unknown>): Promise<string> {
    app.fake.enqueue({ toolCalls: [{ id: `c-${tool}`, name: tool, arguments: args }] }, { text: 'Done.' });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'Ask me' });
    const request = (await client.waitFor(
      (e) => e.type === 'elicitation_request',
      15_000,
      mark,
    )) as EventOf<'elicitation_request'>;
    await sleep(THINKING_MS);
    client.send({
      type: 'elicitation_answer',
      elicitation_id: request.elicitation_id,
      action: 'accept',
      values: { day: 'Monday' },
    });
    await client.waitForRunEnd(mark);
    return toolText(chatRequests(app.fake).at(-1));
  }

  it('waits for a form answered after longer than the limit, and the call succeeds', async () => {
    expect(JSON.parse(await askSlowly('mcp__asking__ask', { message: 'Which day?', schema: day }))).toEqual({
      action: 'accept',
      content: { day: 'Monday' },
    });
    // The call's own limit, shorter still, waits too.
    expect(JSON.parse(await askSlowly('mcp__quick__ask', { message: 'Which day?', schema: day }))).toEqual({
      action: 'accept',
      content: { day: 'Monday' },
    });
  }, 30_000);

  it('waits for a sampling confirmation answered after longer than the limit', async () => {
    app.fake.enqueue(
      {
        toolCalls: [
          { id: 'c-sample', name: 'mcp__asking__sample', arguments: { prompt: 'Hi', max_tokens: 10 } },
        ],
      },
      { text: 'Hello.' },
      { text: 'Sampled.' },
    );
    const mark = client.events.length;
    client.send({ type: 'message', content: 'Sample' });
    const confirm = (await client.waitFor(
      (e) => e.type === 'tool_confirm_request',
      15_000,
      mark,
    )) as EventOf<'tool_confirm_request'>;
    await sleep(THINKING_MS);
    client.send({ type: 'tool_confirm', call_id: confirm.call_id, approved: true });
    await client.waitForRunEnd(mark);
    expect(JSON.parse(toolText(chatRequests(app.fake).at(-1)))).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'Hello.' },
    });
  }, 30_000);

  it("still stops a tool that works past Navi's limit after the answer", async () => {
    const text = await askSlowly('mcp__asking__ask', { message: 'Which day?', schema: day, work_ms: 60_000 });
    expect(text).toContain(`did not finish within ${LIMIT_MS} ms and was stopped`);
  }, 30_000);

  it("still stops a call that works past its server's limit after the answer, with the SDK's message", async () => {
    const text = await askSlowly('mcp__quick__ask', { message: 'Which day?', schema: day, work_ms: 60_000 });
    expect(text).toMatch(/^MCP error -32001: Request timed out/);
  }, 30_000);
});
