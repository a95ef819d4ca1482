/**
 * Subagents end to end: `spawn_agent` runs a memory-only agent whose tool events reach the
 * parent's WebSocket stream flagged `is_subagent`, whose scratchpad is its own, which the
 * parent's stop ends, and which may not spawn agents beyond SUBAGENT_MAX_DEPTH.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([{ ...plainProfile, max_iterations: 8 }]);

function toolEvents(events: ServerEvent[]) {
  return events.flatMap((e) =>
    e.type === 'tool_started' || e.type === 'tool_call' ? [{ ...e, kind: e.type }] : [],
  );
}

function userTexts(r: RecordedRequest): string[] {
  return (r.body.messages ?? []).filter((m) => m.role === 'user').map((m) => String(m.content));
}

describe('spawn_agent', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    }));
  });
  afterEach(() => fake.reset());
  afterAll(() => close());

  it('forwards the subagent tool events flagged is_subagent and keeps its scratchpad apart', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      // parent: note something, then delegate
      {
        toolCalls: [
          {
            id: 'p1',
            name: 'scratchpad',
            arguments: { action: 'write', section: 'parent', content: 'P-NOTE' },
          },
        ],
      },
      { toolCalls: [{ id: 'p2', name: 'spawn_agent', arguments: { task: 'Find the answer to SUBTASK.' } }] },
      // subagent: its pad starts empty, it writes its own section, answers
      {
        thinking: 'I should look at my notes.',
        toolCalls: [{ id: 's1', name: 'scratchpad', arguments: { action: 'read' } }],
      },
      {
        toolCalls: [
          {
            id: 's2',
            name: 'scratchpad',
            arguments: { action: 'write', section: 'child', content: 'C-NOTE' },
          },
        ],
      },
      { text: 'SUB-ANSWER 42' },
      // parent again: reads its pad, answers
      { toolCalls: [{ id: 'p3', name: 'scratchpad', arguments: { action: 'read' } }] },
      { text: 'The subagent found 42.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Delegate SUBTASK please.' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'The subagent found 42.' });

    const tools = toolEvents(events).map((e) => [e.kind, e.call_id, e.tool, e.is_subagent]);
    expect(tools).toEqual([
      ['tool_started', 'p1', 'scratchpad', false],
      ['tool_call', 'p1', 'scratchpad', false],
      ['tool_started', 'p2', 'spawn_agent', false],
      ['tool_started', 's1', 'scratchpad', true],
      ['tool_call', 's1', 'scratchpad', true],
      ['tool_started', 's2', 'scratchpad', true],
      ['tool_call', 's2', 'scratchpad', true],
      ['tool_call', 'p2', 'spawn_agent', false],
      ['tool_started', 'p3', 'scratchpad', false],
      ['tool_call', 'p3', 'scratchpad', false],
    ]);
    expect(events.find((e) => e.type === 'turn_thinking')).toMatchObject({
      thinking: 'I should look at my notes.',
      is_subagent: true,
    });
    const result = (callId: string) => {
      const e = events.find((x) => x.type === 'tool_call' && x.call_id === callId);
      return e?.type === 'tool_call' ? e.result : undefined;
    };
    // The subagent does not see the parent's notes, and the parent never sees the subagent's.
    expect(result('s1')).toBe('The scratchpad is empty.');
    expect(result('p2')).toBe('SUB-ANSWER 42');
    expect(result('p3')).toContain('P-NOTE');
    expect(result('p3')).not.toContain('C-NOTE');
    // The subagent's answer is not streamed as the parent's answer.
    const streamed = events.flatMap((e) => (e.type === 'stream_delta' ? [e.delta] : [])).join('');
    expect(streamed).toBe('The subagent found 42.');

    // The subagent's first LLM request holds only its task, not the parent's conversation.
    const chats = chatRequests(fake);
    expect(chats).toHaveLength(7);
    expect(userTexts(chats[2]!)).toEqual(['Find the answer to SUBTASK.']);
    expect(JSON.stringify(chats[2]!.body.messages)).not.toContain('Delegate SUBTASK');

    // The display buffer holds the parent's turn only; the subagent left no scratchpad behind.
    const session = await getSession(navi, id);
    const toolIds = session.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(toolIds).toEqual(['p1', 'p2', 'p3']);
    expect(await navi.services.kv.get(id, 'scratchpad')).toEqual({ parent: 'P-NOTE' });
    await client.close();
  });

  it('refuses to nest beyond SUBAGENT_MAX_DEPTH and tells the subagent so', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ id: 'd1', name: 'spawn_agent', arguments: { task: 'Level one.' } }] },
      { toolCalls: [{ id: 'd2', name: 'spawn_agent', arguments: { task: 'Level two.' } }] },
      { text: 'I did it myself.' },
      { text: 'Done.' },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Nest agents.' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_end');
    const nested = events.find((e) => e.type === 'tool_call' && e.call_id === 'd2');
    expect(nested).toMatchObject({ tool: 'spawn_agent', success: false, is_subagent: true });
    expect(nested?.type === 'tool_call' ? nested.result : '').toMatch(/refused.*SUBAGENT_MAX_DEPTH/s);
    const outer = events.find((e) => e.type === 'tool_call' && e.call_id === 'd1');
    expect(outer).toMatchObject({ success: true, result: 'I did it myself.', is_subagent: false });
    // No LLM call was made for a second-level subagent.
    const chats = chatRequests(fake);
    expect(chats).toHaveLength(4);
    expect(chats.some((r) => userTexts(r).includes('Level two.'))).toBe(false);
    await client.close();
  });

  it('stops the subagent and the parent when the user stops during a stalled subagent stream', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ id: 'x1', name: 'spawn_agent', arguments: { task: 'Take forever.' } }] },
      { text: 'I am thinking very slowly about this', chunkSize: 4, stallAfterChunks: 2 },
    );
    const client = await EventClient.connect(navi.wsUrl(id));
    client.send({ type: 'message', content: 'Start a slow subagent.' });
    await client.waitFor((e) => e.type === 'tool_started' && e.tool === 'spawn_agent');
    await fake.waitForRequests(2);
    const stop = await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    expect(await stop.json()).toEqual({ stopped: true });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_stopped');
    expect(events.filter((e) => e.type === 'stream_end' || e.type === 'stream_stopped')).toHaveLength(1);
    await fake.waitForAborted(1);
    expect(fake.requests[1]?.aborted).toBe(true);
    const spawn = events.find((e) => e.type === 'tool_call' && e.call_id === 'x1');
    expect(spawn).toMatchObject({ success: false, is_subagent: false });
    // Nothing else was asked of the LLM after the stop, and the session takes a new message.
    expect(chatRequests(fake)).toHaveLength(2);
    fake.enqueue({ text: 'Back again.' });
    const from = client.events.length;
    client.send({ type: 'message', content: 'Hello again' });
    const next = await client.waitForRunEnd(from);
    expect(next.at(-1)).toMatchObject({ type: 'stream_end', content: 'Back again.' });
    await client.close();
  });

  it('stops the subagent when the spawn_agent call runs out of time, and the parent goes on', async () => {
    const timed = await startNavi({
      settings: {
        OLLAMA_HOST: fake.ollamaUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        TOOL_TIMEOUT_MS: '1000',
      },
    });
    try {
      const id = await timed.createSession();
      fake.enqueue(
        { toolCalls: [{ id: 't1', name: 'spawn_agent', arguments: { task: 'Never finish.' } }] },
        { text: 'stalling', chunkSize: 2, stallAfterChunks: 1 },
        { text: 'The subagent took too long; here is what I know.' },
      );
      const client = await EventClient.connect(timed.wsUrl(id));
      client.send({ type: 'message', content: 'Try a subagent.' });
      const events = await client.waitForRunEnd();
      expect(events.at(-1)).toMatchObject({
        type: 'stream_end',
        content: 'The subagent took too long; here is what I know.',
      });
      expect(events.find((e) => e.type === 'tool_call' && e.call_id === 't1')).toMatchObject({
        success: false,
        metadata: { timed_out: true },
      });
      // The subagent's own LLM request was abandoned, not left streaming in the background.
      await fake.waitForAborted(1);
      // A new Navi asks the model's capabilities first: count chat requests only.
      expect(chatRequests(fake)[1]?.aborted).toBe(true);
      await client.close();
    } finally {
      await timed.close();
    }
  });
});
