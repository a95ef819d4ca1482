/**
 * `GET /agents/tools?profile_id=` over real HTTP: each tool says whether the profile offers it
 * (and which rule refuses it), and whether its calls ask the person first (`never`, `always`,
 * `per_call`), as the executor decides it; the tools said to be allowed are exactly those the
 * model is offered, and a tool said to ask is not run while nobody can answer. Unknown, empty,
 * oversized and hostile profile ids are refused with a sentence saying what to send instead.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MessageReply, ToolSummary } from '../../src/protocol/rest.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

const ran: string[] = [];

function testTool(name: string, extra: Partial<ToolDefinition>): ToolDefinition {
  return {
    name,
    description: `The ${name} test tool.`,
    parameters: { type: 'object', properties: { action: { type: 'string' } } },
    execute: async () => {
      ran.push(name);
      return { success: true, output: `${name} ran` };
    },
    ...extra,
  };
}

const extraTools: ToolDefinition[] = [
  testTool('look_tool', { risk: { reads: true } }),
  testTool('change_tool', { risk: { reads: true, writes: true } }),
  testTool('mail_tool', {
    risk: { reads: true, writes: true, network: true },
    confirmCall: (params) => (params.action === 'send' ? 'it sends mail in your name' : undefined),
  }),
  testTool('asked_tool', { risk: { reads: true } }),
];

const profiles = profilesDir([
  { ...plainProfile, id: 'open', name: 'Open', confirm_tools: ['asked_*'] },
  {
    ...plainProfile,
    id: 'narrow',
    name: 'Narrow',
    enabled_tools: ['look_tool', 'mail_tool', 'group:runtime'],
    denied_tools: ['terminal'],
    autonomy: 'autonomous',
  },
  { ...plainProfile, id: 'strict', name: 'Strict', autonomy: 'strict', trusted_tools: ['change_tool'] },
  {
    ...plainProfile,
    id: 'split',
    name: 'Split',
    enabled_tools: ['look_tool', 'change_tool', 'asked_tool'],
    confirm_tools: ['asked_tool'],
    backends: { ollama: { denied_tools: ['change_tool'] } },
  },
]);

async function toolsOf(navi: NaviHandle, profileId: string): Promise<Map<string, ToolSummary>> {
  const res = await fetch(`${navi.url}/agents/tools?profile_id=${encodeURIComponent(profileId)}`);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as ToolSummary[];
  return new Map(body.map((t) => [t.name, t]));
}

async function refused(
  navi: NaviHandle,
  query: string,
): Promise<{ status: number; error: string; code: string }> {
  const res = await fetch(`${navi.url}/agents/tools${query}`);
  const body = (await res.json()) as { error: string; code: string };
  return { status: res.status, ...body };
}

describe('GET /agents/tools?profile_id=', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      extraTools,
      settings: {
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'open',
        DEFAULT_LLM_BACKEND: 'ollama',
        OLLAMA_DEFAULT_MODEL: 'test-model',
        OLLAMA_NUM_CTX: '200000',
        NAVI_SANDBOX: 'off',
      },
    }));
  });
  afterEach(() => {
    fake.reset();
    ran.length = 0;
  });
  afterAll(() => close());

  it('leaves policy out without a profile, as the plain list always was', async () => {
    const res = await fetch(`${navi.url}/agents/tools`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as ToolSummary[];
    expect(body.length).toBeGreaterThan(10);
    expect(body.filter((t) => t.policy !== undefined)).toEqual([]);
  });

  it('says what a profile allowing everything asks about: never, always or per call', async () => {
    const tools = await toolsOf(navi, 'open');
    expect(tools.get('look_tool')?.policy).toEqual({ allowed: true, confirm: 'never' });
    // Writes are logged, not asked about.
    expect(tools.get('change_tool')?.policy).toEqual({ allowed: true, confirm: 'never' });
    expect(tools.get('mail_tool')?.policy).toEqual({ allowed: true, confirm: 'per_call' });
    expect(tools.get('asked_tool')?.policy).toEqual({ allowed: true, confirm: 'always' });
    // Without the sandbox the terminal runs on the machine itself, so every call asks.
    expect(tools.get('terminal')?.policy).toEqual({ allowed: true, confirm: 'always' });
    expect(tools.get('look_tool')).toMatchObject({
      source: 'builtin',
      description: 'The look_tool test tool.',
    });
  });

  it('names the rule that refuses a tool, and follows autonomy and trust', async () => {
    const narrow = await toolsOf(navi, 'narrow');
    expect(narrow.get('look_tool')?.policy).toEqual({ allowed: true, confirm: 'never' });
    // Denied, and the autonomous profile would not have asked either.
    expect(narrow.get('terminal')?.policy).toEqual({
      allowed: false,
      reason: 'denied by "terminal"',
      confirm: 'never',
    });
    expect(narrow.get('change_tool')?.policy).toMatchObject({
      allowed: false,
      reason: 'not in enabled_tools',
    });
    // Autonomous: a tool's own question about a call is lifted too.
    expect(narrow.get('mail_tool')?.policy).toEqual({ allowed: true, confirm: 'never' });
    // code_exec is in group:runtime and, without the sandbox, autonomy keeps it from asking.
    expect(narrow.get('code_exec')?.policy).toEqual({ allowed: true, confirm: 'never' });

    const strict = await toolsOf(navi, 'strict');
    expect(strict.get('look_tool')?.policy?.confirm).toBe('never');
    expect(strict.get('mail_tool')?.policy?.confirm).toBe('always');
    expect(strict.get('change_tool')?.policy?.confirm).toBe('never');
  });

  it("applies the section of the profile's own backend, and says so", async () => {
    const tools = await toolsOf(navi, 'split');
    expect(tools.get('change_tool')?.policy).toEqual({
      allowed: false,
      reason: 'denied by "change_tool" on the ollama backend',
      confirm: 'never',
    });
    expect(tools.get('look_tool')?.policy?.allowed).toBe(true);
  });

  it('allows exactly the tools the model is offered, and a tool said to ask does not run unanswered', async () => {
    const tools = await toolsOf(navi, 'split');
    const allowed = [...tools.values()].filter((t) => t.policy?.allowed).map((t) => t.name);
    expect(allowed.sort()).toEqual(['asked_tool', 'look_tool']);

    const id = await navi.createSession('split');
    fake.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'look_tool', arguments: {} },
          { id: 'c2', name: 'asked_tool', arguments: {} },
        ],
      },
      { text: 'Done.' },
    );
    const res = await postMessage(navi, id, 'Look, then do the asked thing.');
    expect(res.status).toBe(200);
    const reply = (await res.json()) as MessageReply;
    const offered = (chatRequests(fake)[0]?.body.tools ?? []).map((t) => t.function.name).sort();
    expect(offered).toEqual(allowed.sort());
    expect(ran).toEqual(['look_tool']);
    expect(reply.tool_calls.find((c) => c.call_id === 'c2')?.success).toBe(false);
  });

  it('refuses a profile that does not exist, naming the ones that do', async () => {
    const answer = await refused(navi, '?profile_id=nobody');
    expect(answer).toMatchObject({ status: 400, code: 'UNKNOWN_PROFILE' });
    expect(answer.error).toContain('"nobody"');
    expect(answer.error).toContain('narrow, open, secretary, server_admin, smart_home, split, strict');
    expect(answer.error).toContain('GET /agents/profiles');
  });

  it('refuses hostile ids without touching anything, quoting at most 64 characters of them', async () => {
    for (const hostile of [
      '../../etc/passwd',
      '__proto__',
      'constructor',
      '<img src=x onerror=alert(1)>',
      'open\u0000',
      ' open',
    ]) {
      const answer = await refused(navi, `?profile_id=${encodeURIComponent(hostile)}`);
      expect(answer, hostile).toMatchObject({ status: 400, code: 'UNKNOWN_PROFILE' });
      expect(answer.error).toContain(JSON.stringify(hostile));
    }
    const long = `x${'y'.repeat(150)}`;
    const quoted = await refused(navi, `?profile_id=${long}`);
    expect(quoted).toMatchObject({ status: 400, code: 'UNKNOWN_PROFILE' });
    expect(quoted.error).toContain(JSON.stringify(long.slice(0, 64)));
    expect(quoted.error).not.toContain(long.slice(0, 65));
  });

  it('refuses empty, oversized, repeated and unknown parameters with what was wrong', async () => {
    const empty = await refused(navi, '?profile_id=');
    expect(empty).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(empty.error).toContain('profile_id');

    const oversized = await refused(navi, `?profile_id=${'a'.repeat(201)}`);
    expect(oversized).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(oversized.error).toContain('profile_id');

    const repeated = await refused(navi, '?profile_id=open&profile_id=split');
    expect(repeated).toMatchObject({ status: 400, code: 'BAD_REQUEST' });

    const unknown = await refused(navi, '?profile=open');
    expect(unknown).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(unknown.error).toContain('"profile"');
  });
});
