/**
 * Tool confirmation end to end (docs/architecture.md#confirmations): the real agent asks through the real server,
 * answers come over the WebSocket or `POST /sessions/{id}/confirm`, and a call that is not
 * approved never runs. The LLM is the fake server; the guarded tool only counts its calls.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../fake-llm/index.js';
import { guardedTool } from '../support/guarded-tool.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

/** A tool no default or profile marks for confirmation: its shipped action is `log`. */
function everydayTool(): ToolDefinition & { calls: number } {
  const tool = {
    name: 'everyday_action',
    description: 'Changes something small.',
    parameters: { type: 'object', properties: {} },
    calls: 0,
    async execute() {
      tool.calls += 1;
      return { success: true, output: 'small change made' };
    },
  };
  return tool;
}

const profiles = profilesDir([
  { ...plainProfile, confirm_tools: ['guarded_*'] },
  { ...plainProfile, id: 'strict', name: 'Strict', autonomy: 'strict' },
  { ...plainProfile, id: 'free', name: 'Free', autonomy: 'autonomous', confirm_tools: ['guarded_*'] },
  { ...plainProfile, id: 'trusting', name: 'Trusting', trusted_tools: ['group:meta'] },
]);

/** The content of the tool message the LLM received in `request` (the result of the call). */
function toolResultSent(request: RecordedRequest | undefined): string {
  const message = request?.body.messages?.find((m) => m.role === 'tool');
  return typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content);
}

/** The `Cookie` header of the person's paired client, set once Navi runs. */
let consentCookie = '';
const paired = () => ({ headers: { cookie: consentCookie } });

async function postJson(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: consentCookie },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

type ConfirmRequestEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

async function confirmRequest(client: EventClient): Promise<ConfirmRequestEvent> {
  return (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
}

function toolCallOf(events: ServerEvent[]): ToolCallEvent | undefined {
  return events.find((e): e is ToolCallEvent => e.type === 'tool_call');
}

describe('tool confirmation through the server', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let guarded: ReturnType<typeof guardedTool>;
  let everyday: ReturnType<typeof everydayTool>;

  beforeAll(async () => {
    fake = await startFakeLlm();
    guarded = guardedTool();
    everyday = everydayTool();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_BASE_URL: fake.openaiUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
      },
      extraTools: [guarded, everyday],
    });
    consentCookie = await navi.pair();
  });
  afterEach(() => {
    fake.reset();
    guarded.calls.length = 0;
    everyday.calls = 0;
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  function scriptCall(args: Record<string, unknown>, answer = 'Finished.'): void {
    fake.enqueue(
      { toolCalls: [{ id: 'call-1', name: 'guarded_action', arguments: args }] },
      { text: answer },
    );
  }

  it('asks with the call id, tool and arguments, and runs the call once approved over the WebSocket', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the backup' });
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'back up please' });
    const asked = await confirmRequest(client);
    expect(asked).toMatchObject({ tool: 'guarded_action', args: { what: 'the backup' } });
    expect(guarded.calls).toHaveLength(0);

    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    const events = await client.waitForRunEnd();
    // The client hears of the call before it is asked about it.
    const types = events.map((e) => e.type);
    expect(types.indexOf('tool_started')).toBeLessThan(types.indexOf('tool_confirm_request'));
    expect(toolCallOf(events)).toMatchObject({
      call_id: asked.call_id,
      success: true,
      result: 'did the backup',
    });
    expect(guarded.calls).toEqual([{ what: 'the backup' }]);
    expect(toolResultSent(chatRequests(fake)[1])).toBe('did the backup');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Finished.' });
    await client.close();
  });

  it('accepts the answer over REST while a client is watching', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the report' });
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'write the report' });
    const asked = await confirmRequest(client);
    const answer = await postJson(`${navi.url}/sessions/${id}/confirm`, {
      call_id: asked.call_id,
      approved: true,
    });
    expect(answer).toEqual({ status: 200, json: { ok: true } });
    const events = await client.waitForRunEnd();
    expect(toolCallOf(events)).toMatchObject({ success: true, result: 'did the report' });
    expect(guarded.calls).toHaveLength(1);

    // The question was answered: a second answer for the same call finds nothing waiting.
    const late = await postJson(`${navi.url}/sessions/${id}/confirm`, {
      call_id: asked.call_id,
      approved: true,
    });
    expect(late.status).toBe(404);
    expect(late.json).toMatchObject({
      error: 'No tool call of this session is waiting for that confirmation',
    });
    await client.close();
  });

  it('does not run a denied call, and tells the LLM why', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the deletion' }, 'Understood, I will not.');
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'delete everything' });
    const asked = await confirmRequest(client);
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await client.waitForRunEnd();
    const done = toolCallOf(events);
    expect(done?.success).toBe(false);
    expect(done?.result).toContain('Tool "guarded_action" was not run');
    expect(done?.result).toContain('did not get it: the user declined');
    expect(guarded.calls).toHaveLength(0);
    expect(toolResultSent(chatRequests(fake)[1])).toContain('the user declined');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Understood, I will not.' });
    await client.close();
  });

  it('refuses when the run is stopped while it waits for the answer', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the upgrade' });
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'upgrade' });
    await confirmRequest(client);
    expect(await postJson(`${navi.url}/sessions/${id}/stop`, {})).toEqual({
      status: 200,
      json: { stopped: true },
    });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_stopped');
    expect(guarded.calls).toHaveLength(0);
    // Nothing after the stop asked the LLM again.
    expect(chatRequests(fake)).toHaveLength(1);
    expect(toolCallOf(events)).toMatchObject({ success: false, metadata: { refused: 'confirmation' } });
    expect(toolCallOf(events)?.result).toContain('did not get it: the run was stopped');
    await client.close();
  });

  it('refuses in a REST-started run with nobody connected to ask', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the headless job' }, 'I could not do it.');
    const reply = await postJson(`${navi.url}/sessions/${id}/messages`, { content: 'do it' });
    expect(reply.status).toBe(200);
    const body = reply.json as { content: string; tool_calls: { success: boolean; result: string }[] };
    expect(body.content).toBe('I could not do it.');
    expect(body.tool_calls).toHaveLength(1);
    expect(body.tool_calls[0]?.success).toBe(false);
    expect(body.tool_calls[0]?.result).toContain('did not get it: nobody is connected to approve it');
    expect(guarded.calls).toHaveLength(0);
    expect(toolResultSent(chatRequests(fake)[1])).toContain('nobody is connected to approve it');
  });

  it('gives no weight to an "approved: true" the LLM puts in the arguments', async () => {
    const id = await navi.createSession();
    scriptCall({ what: 'the sneaky thing', approved: true });
    const headless = await postJson(`${navi.url}/sessions/${id}/messages`, { content: 'go' });
    const body = headless.json as { tool_calls: { success: boolean; result: string }[] };
    expect(body.tool_calls[0]?.success).toBe(false);
    expect(body.tool_calls[0]?.result).toContain('nobody is connected to approve it');
    expect(guarded.calls).toHaveLength(0);

    // With someone watching, the question is still asked, and the flag never reaches the tool.
    fake.reset();
    scriptCall({ what: 'the sneaky thing', approved: true });
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'go again' });
    const asked = await confirmRequest(client);
    expect(asked.args).toEqual({ what: 'the sneaky thing' });
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    await client.waitForRunEnd();
    expect(guarded.calls).toEqual([{ what: 'the sneaky thing' }]);
    await client.close();
  });

  it('rejects an answer sent to another session for a call it does not own', async () => {
    const owner = await navi.createSession();
    const stranger = await navi.createSession();
    scriptCall({ what: 'the owner only thing' }, 'Not done.');
    const ownerClient = await EventClient.connect(navi.wsUrl(owner), paired());
    const strangerClient = await EventClient.connect(navi.wsUrl(stranger), paired());
    ownerClient.send({ type: 'message', content: 'do the thing' });
    const asked = await confirmRequest(ownerClient);

    strangerClient.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    const error = await strangerClient.waitFor((e) => e.type === 'error');
    expect(error).toMatchObject({
      type: 'error',
      recoverable: true,
      message: 'No tool call of this session is waiting for that confirmation.',
    });
    const rest = await postJson(`${navi.url}/sessions/${stranger}/confirm`, {
      call_id: asked.call_id,
      approved: true,
    });
    expect(rest.status).toBe(404);
    expect(rest.json).toMatchObject({
      error: 'No tool call of this session is waiting for that confirmation',
    });
    expect(guarded.calls).toHaveLength(0);

    // The owner's question is still open and still answerable by the owner.
    ownerClient.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await ownerClient.waitForRunEnd();
    expect(toolCallOf(events)?.result).toContain('the user declined');
    expect(guarded.calls).toHaveLength(0);
    await ownerClient.close();
    await strangerClient.close();
  });

  it('answers 4xx JSON to malformed confirmations', async () => {
    const id = await navi.createSession();
    const cases: [unknown, number][] = [
      [{ call_id: 'x' }, 400],
      [{ call_id: 'x', approved: 'yes' }, 400],
      [{ call_id: '', approved: true }, 400],
      [{ call_id: 'x', approved: true, extra: 1 }, 400],
      [{ call_id: 'nothing-pending', approved: true }, 404],
    ];
    for (const [body, status] of cases) {
      const res = await postJson(`${navi.url}/sessions/${id}/confirm`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(typeof (res.json as { error?: unknown }).error).toBe('string');
    }
    const unknown = await postJson(`${navi.url}/sessions/no-such-session/confirm`, {
      call_id: 'x',
      approved: true,
    });
    expect(unknown.status).toBe(404);
  });

  it('asks before every changing tool under a strict profile, but not before silent ones', async () => {
    const id = await navi.createSession('strict');
    fake.enqueue(
      {
        toolCalls: [
          { id: 's1', name: 'everyday_action', arguments: {} },
          { id: 's2', name: 'todo', arguments: { action: 'read' } },
        ],
      },
      { text: 'OK.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'small change' });
    const asked = await confirmRequest(client);
    expect(asked.tool).toBe('everyday_action');
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await client.waitForRunEnd();
    expect(events.filter((e) => e.type === 'tool_confirm_request')).toHaveLength(1);
    const calls = events.filter((e): e is ToolCallEvent => e.type === 'tool_call');
    const byTool = new Map(calls.map((c) => [c.tool, c]));
    expect(byTool.get('everyday_action')?.result).toContain(
      "needs the user's approval (the profile is strict: every tool that may change something asks first)",
    );
    expect(byTool.get('todo')).toMatchObject({ success: true, result: 'The todo list is empty.' });
    expect(everyday.calls).toBe(0);
    await client.close();
  });

  it('asks nothing under an autonomous profile except what confirm_tools names', async () => {
    const id = await navi.createSession('free');
    fake.enqueue(
      {
        toolCalls: [
          { id: 'f1', name: 'tool_manual', arguments: { name: 'nothing_here' } },
          { id: 'f2', name: 'everyday_action', arguments: {} },
          { id: 'f3', name: 'guarded_action', arguments: { what: 'the named one' } },
        ],
      },
      { text: 'OK.' },
    );
    // Headless: a call that asked would be refused, so every success proves nobody was asked.
    const reply = await postJson(`${navi.url}/sessions/${id}/messages`, { content: 'go' });
    const body = reply.json as { tool_calls: { tool: string; success: boolean; result: string }[] };
    const byTool = new Map(body.tool_calls.map((c) => [c.tool, c]));
    expect(byTool.get('everyday_action')).toMatchObject({ success: true, result: 'small change made' });
    expect(byTool.get('guarded_action')?.result).toContain('nobody is connected to approve it');
    expect(guarded.calls).toHaveLength(0);
  });

  // The temporary TOOLS_DIR of this Navi does not exist yet: write_tool creates it.
  it('lets trusted_tools skip the question of write_tool', async () => {
    const id = await navi.createSession('trusting');
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'tw',
            name: 'write_tool',
            arguments: {
              name: 'trusted_one',
              code: "export const name = 'trusted_one';\nexport const description = 'Made without asking.';\nexport const parameters = { type: 'object', properties: {} };\nexport async function execute() { return 'trusted'; }\n",
            },
          },
        ],
      },
      { text: 'OK.' },
    );
    const reply = await postJson(`${navi.url}/sessions/${id}/messages`, { content: 'make it' });
    const body = reply.json as { tool_calls: { tool: string; success: boolean; result: string }[] };
    expect(body.tool_calls[0]).toMatchObject({ tool: 'write_tool', success: true });
    expect(navi.services.tools.get('trusted_one')?.source).toBe('user');
  });

  it('asks before write_tool by default and writes nothing when denied', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'write_tool',
            arguments: {
              name: 'never_written',
              code: "export const name = 'never_written';\nexport const description = 'x';\nexport const parameters = { type: 'object', properties: {} };\nexport async function execute() { return 'x'; }\n",
            },
          },
        ],
      },
      { text: 'OK.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'make a tool' });
    const asked = await confirmRequest(client);
    expect(asked.tool).toBe('write_tool');
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await client.waitForRunEnd();
    expect(toolCallOf(events)?.result).toContain('Tool "write_tool" was not run');
    expect(navi.services.tools.has('never_written')).toBe(false);
    await client.close();
  });
});

describe('tool confirmation that nobody answers', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let guarded: ReturnType<typeof guardedTool>;

  beforeAll(async () => {
    fake = await startFakeLlm();
    guarded = guardedTool();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_BASE_URL: fake.openaiUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        TOOL_CONFIRM_TIMEOUT_MS: '300',
        // Without the sandbox, terminal and code_exec ask first.
        NAVI_SANDBOX: 'off',
      },
      extraTools: [guarded],
    });
    consentCookie = await navi.pair();
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it('counts as refused once TOOL_CONFIRM_TIMEOUT_MS has passed', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ id: 't1', name: 'guarded_action', arguments: { what: 'the slow thing' } }] },
      { text: 'Nobody answered.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id), paired());
    client.send({ type: 'message', content: 'try it' });
    const asked = await confirmRequest(client);
    const events = await client.waitForRunEnd();
    const done = toolCallOf(events);
    expect(done?.success).toBe(false);
    expect(done?.result).toMatch(/did not get it: nobody answered within \d+ seconds/);
    expect(guarded.calls).toHaveLength(0);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Nobody answered.' });

    // A late answer finds nothing waiting.
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    const late = await client.waitFor((e) => e.type === 'error');
    expect(late).toMatchObject({ message: 'No tool call of this session is waiting for that confirmation.' });
    expect(guarded.calls).toHaveLength(0);
    await client.close();
  });

  it('asks before terminal and code_exec when they would run without the sandbox', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'x1', name: 'terminal', arguments: { command: 'echo hi' } },
          { id: 'x2', name: 'code_exec', arguments: { code: 'print(1)' } },
        ],
      },
      { text: 'Neither ran.' },
    );
    const res = await fetch(`${navi.url}/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'run things' }),
    });
    const body = (await res.json()) as { tool_calls: { tool: string; success: boolean; result: string }[] };
    expect(body.tool_calls.map((c) => c.tool).sort()).toEqual(['code_exec', 'terminal']);
    for (const c of body.tool_calls) {
      expect(c.success).toBe(false);
      expect(c.result).toContain(
        'without the bubblewrap sandbox (not installed, or NAVI_SANDBOX=off) it would run directly on this machine',
      );
      expect(c.result).toContain('nobody is connected to approve it');
    }
  });
});
