/**
 * Profiles end to end: `switch_profile` in the middle of a run changes the prompt, the model and
 * the tool list of the very next LLM request, is announced with `profile_switched`, and sticks to
 * the session; `list_profiles` and the per-profile scratchpad description.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession, systemText } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([
  {
    ...plainProfile,
    id: 'first',
    name: 'First',
    system_prompt: 'PROMPT-OF-FIRST',
    scratchpad_sections: ['alpha', 'beta'],
  },
  {
    ...plainProfile,
    id: 'second',
    name: 'Second Profile',
    system_prompt: 'PROMPT-OF-SECOND',
    model: 'second-model',
    enabled_tools: ['scratchpad', 'list_profiles'],
    scratchpad_sections: ['gamma'],
  },
]);

function toolNames(r: RecordedRequest): string[] {
  return (r.body.tools ?? []).map((t) => t.function.name).sort();
}

function scratchpadDescription(r: RecordedRequest): string {
  return r.body.tools?.find((t) => t.function.name === 'scratchpad')?.function.description ?? '';
}

describe('switching profiles', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      llm: { models: ['test-model', 'second-model'] },
      settings: { OLLAMA_DEFAULT_MODEL: 'test-model', PROFILES_DIR: profiles, DEFAULT_PROFILE: 'first' },
    }));
  });
  afterEach(() => fake.reset());
  afterAll(() => close());

  it('uses the new prompt, model and tools from the next LLM call on and keeps them', async () => {
    const id = await navi.createSession('first');
    fake.enqueue(
      { toolCalls: [{ id: 'c1', name: 'switch_profile', arguments: { profile_id: 'second' } }] },
      { toolCalls: [{ id: 'c2', name: 'list_profiles', arguments: {} }] },
      { text: 'Now working as the second profile.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Please switch to the second profile.' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_end');

    const switched = events.filter((e) => e.type === 'profile_switched');
    expect(switched).toEqual([
      expect.objectContaining({ profile_id: 'second', profile_name: 'Second Profile' }),
    ]);
    const switchCall = events.find((e) => e.type === 'tool_call' && e.call_id === 'c1');
    expect(switchCall).toMatchObject({ success: true, is_subagent: false });
    // profile_switched comes while the tool runs, before its result.
    expect(events.indexOf(switched[0]!)).toBeLessThan(events.indexOf(switchCall!));

    const chats = chatRequests(fake);
    expect(chats).toHaveLength(3);
    const [before, after] = chats;
    expect(systemText(before!)).toContain('PROMPT-OF-FIRST');
    expect(before!.body.model).toBe('test-model');
    expect(toolNames(before!)).toContain('switch_profile');
    expect(scratchpadDescription(before!)).toContain('alpha, beta');

    expect(systemText(after!)).toContain('PROMPT-OF-SECOND');
    expect(systemText(after!)).not.toContain('PROMPT-OF-FIRST');
    expect(after!.body.model).toBe('second-model');
    expect(toolNames(after!)).toEqual(['list_profiles', 'scratchpad']);
    expect(scratchpadDescription(after!)).toContain('gamma');
    expect(scratchpadDescription(after!)).not.toContain('alpha');

    const listed = events.find((e) => e.type === 'tool_call' && e.call_id === 'c2');
    expect(listed).toMatchObject({ success: true });
    expect(listed?.type === 'tool_call' ? listed.result : '').toMatch(/second: Second Profile \(current\)/);

    const session = await getSession(navi, id);
    expect(session.profile_id).toBe('second');

    // The next run of the session starts with the new profile.
    fake.reset();
    fake.enqueue({ text: 'still second' });
    const from = client.events.length;
    client.send({ type: 'message', content: 'And now?' });
    await client.waitForRunEnd(from);
    const next = chatRequests(fake)[0]!;
    expect(systemText(next)).toContain('PROMPT-OF-SECOND');
    expect(next.body.model).toBe('second-model');
    await client.close();
  });

  it('refuses an unknown profile and leaves the run on the current one', async () => {
    const id = await navi.createSession('first');
    fake.enqueue(
      { toolCalls: [{ id: 'u1', name: 'switch_profile', arguments: { profile_id: 'nobody' } }] },
      { text: 'I stayed.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Switch to nobody.' });
    const events = await client.waitForRunEnd();
    expect(events.some((e) => e.type === 'profile_switched')).toBe(false);
    const call = events.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({ success: false });
    expect(call?.type === 'tool_call' ? call.result : '').toMatch(/Unknown profile "nobody".*first.*second/s);
    const chats = chatRequests(fake);
    expect(systemText(chats[1]!)).toContain('PROMPT-OF-FIRST');
    const session = await getSession(navi, id);
    expect(session.profile_id).toBe('first');
    await client.close();
  });
});
