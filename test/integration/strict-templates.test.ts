/**
 * A model behind a strict chat template refuses two user or two assistant messages in a row.
 * A planned run stores a plan, the text said before the tool calls and the calls as three
 * assistant messages, and a failed run leaves a user message without an answer; every request
 * Navi sends must still alternate, over both wire formats.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/tools/types.js';
import { strictRolesProblem } from '../fake-llm/strict-roles.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

const lookup: ToolDefinition = {
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  async execute(params) {
    return { success: true, output: `${String(params.word)}: found` };
  },
};

const profiles = profilesDir([{ ...plainProfile, id: 'planner', name: 'Planner', planning_enabled: true }]);

describe.each(['ollama', 'openai'] as const)('strict chat templates over %s', (backend) => {
  let env: NaviWithLlm;
  beforeAll(async () => {
    env = await startNaviWithLlm({
      llm: { strictRoles: true },
      settings: { DEFAULT_LLM_BACKEND: backend, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'planner' },
      extraTools: [lookup],
    });
  });
  afterEach(() => env.fake.reset());
  afterAll(() => env?.close());

  const roles = (i: number) => chatRequests(env.fake)[i]?.body.messages?.map((m) => m.role);

  it('sends a planned run with text before its tool calls as alternating messages', async () => {
    const id = await env.navi.createSession('planner');
    env.fake.enqueue(
      { text: '1. Look both words up\n2. Answer' },
      {
        text: 'Let me look them up.',
        toolCalls: [
          { name: 'lookup', arguments: { word: 'alpha' } },
          { name: 'lookup', arguments: { word: 'beta' } },
        ],
      },
      { text: 'Both are there.' },
    );
    const res = await postMessage(env.navi, id, 'look up alpha and beta');
    expect(await res.json()).toMatchObject({ content: 'Both are there.', stopped: false });
    expect(res.status).toBe(200);

    const chats = chatRequests(env.fake);
    expect(chats).toHaveLength(3);
    for (const chat of chats) expect(strictRolesProblem(chat.body.messages ?? [])).toBeUndefined();
    expect(roles(2)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    const merged = chats[2]?.body.messages?.[2];
    expect(JSON.stringify(merged?.content)).toContain('1. Look both words up');
    expect(JSON.stringify(merged?.content)).toContain('Let me look them up.');
    expect(merged?.tool_calls).toHaveLength(2);

    // The next message reads the whole history back: the same three assistant messages again.
    env.fake.reset();
    env.fake.enqueue({ text: 'DIRECT' }, { text: 'Still there.' });
    const next = await postMessage(env.navi, id, 'are they still there?');
    expect(next.status).toBe(200);
    expect(roles(1)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'user']);
  });

  it('merges the unanswered message of a failed run with the next one', async () => {
    const id = await env.navi.createSession('planner');
    env.fake.setDefault({ httpError: { status: 500, body: '{"error":"model crashed"}' } });
    const failed = await postMessage(env.navi, id, 'first try');
    expect(failed.status).toBe(502);

    env.fake.reset();
    env.fake.enqueue({ text: 'DIRECT' }, { text: 'Answered.' });
    const res = await postMessage(env.navi, id, 'second try');
    expect(await res.json()).toMatchObject({ content: 'Answered.' });
    expect(roles(1)).toEqual(['system', 'user']);
    expect(JSON.stringify(chatRequests(env.fake)[1]?.body.messages?.[1]?.content)).toMatch(
      /first try.*second try/,
    );
  });
});
