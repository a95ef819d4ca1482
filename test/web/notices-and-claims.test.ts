/**
 * How the chat shows a run adapting to its model and an answer claiming what no tool did
 * (web/src/lib/timeline.ts, history.ts): a `notice` is an information line at its place in the
 * run, not an error; `claim_unverified` flags the answer it is about, whether it arrives while
 * the answer streams, after it, or before an answer that came whole; and a reload shows the
 * flag again from the stored message's `unverified_claims`.
 */
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { SessionMessage } from '../../src/protocol/rest.js';
import type { AssistantEntry, ChatEntry } from '../../web/src/lib/entries.js';
import { entriesFromMessages } from '../../web/src/lib/history.js';
import { isSettingsPage, parseHash, sessionHref } from '../../web/src/lib/route.js';
import { Timeline } from '../../web/src/lib/timeline.js';

/** A timeline whose text deltas are moved into the entries at once. */
function timeline(): Timeline {
  return new Timeline((callback) => callback());
}

function run(t: Timeline, events: ServerEvent[]): void {
  let seq = 0;
  for (const event of events) t.apply({ ...event, run_id: 'r1', seq: ++seq } as ServerEvent);
}

const answers = (entries: ChatEntry[]): AssistantEntry[] =>
  entries.filter((e): e is AssistantEntry => e.kind === 'assistant');

const end: ServerEvent = {
  type: 'stream_end',
  content: 'I have saved the file.',
  context_tokens: 10,
  max_context_tokens: 100,
};
const claims: ServerEvent = {
  type: 'claim_unverified',
  claims: ['I have saved the file.'],
  message: 'No tool saved a file.',
};

describe('notice events', () => {
  it('become an information line at their place in the run, with their code, and end nothing', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      {
        type: 'notice',
        code: 'TOOLS_UNSUPPORTED',
        message: 'qwen2.5:0.5b cannot call tools: none were offered.',
      },
      { type: 'stream_delta', delta: 'Hello.' },
    ]);
    expect(t.state.entries.map((e) => e.kind)).toEqual(['notice', 'assistant']);
    expect(t.state.entries[0]).toMatchObject({
      kind: 'notice',
      code: 'TOOLS_UNSUPPORTED',
      text: 'qwen2.5:0.5b cannot call tools: none were offered.',
    });
    expect(t.state.running).toBe(true);
    expect(t.state.entries.some((e) => e.kind === 'error')).toBe(false);
  });

  it('show each code once even when the replay after a reconnection repeats them', () => {
    const t = timeline();
    const notice = {
      type: 'notice',
      code: 'CONTEXT_CLAMPED',
      message: 'clamped',
      run_id: 'r1',
      seq: 2,
    } as const;
    t.apply({ type: 'stream_start', trigger: 'user', run_id: 'r1', seq: 1 });
    t.apply(notice);
    t.apply(notice);
    expect(t.state.entries.filter((e) => e.kind === 'notice')).toHaveLength(1);
  });
});

describe('claim_unverified events', () => {
  it('flag the answer still streaming', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_delta', delta: 'I have saved the file.' },
      claims,
      end,
    ]);
    const [answer] = answers(t.state.entries);
    expect(answer?.unverifiedClaims).toEqual(['I have saved the file.']);
    expect(answer?.streaming).toBe(false);
  });

  it('flag the answer that came whole with stream_end when they arrive before it', () => {
    const t = timeline();
    run(t, [{ type: 'stream_start', trigger: 'user' }, claims, end]);
    const list = answers(t.state.entries);
    expect(list).toHaveLength(1);
    expect(list[0]?.unverifiedClaims).toEqual(['I have saved the file.']);
  });

  it('flag the last answer of the run, not the text before its tool calls', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_delta', delta: 'Let me look.' },
      { type: 'tool_started', call_id: 'c1', tool: 'file_read', args: {}, is_subagent: false },
      {
        type: 'tool_call',
        call_id: 'c1',
        tool: 'file_read',
        args: {},
        result: 'x',
        success: true,
        is_subagent: false,
      },
      { type: 'stream_delta', delta: 'I have saved the file.' },
      claims,
      end,
    ]);
    const list = answers(t.state.entries);
    expect(list.map((a) => a.unverifiedClaims ?? null)).toEqual([null, ['I have saved the file.']]);
  });

  it('never flag an answer of an earlier run', () => {
    const t = timeline();
    t.reset(
      entriesFromMessages([
        { id: '1', role: 'user', content: 'hi', created_at: '2026-01-01T00:00:00Z' },
        { id: '2', role: 'assistant', content: 'Hello.', created_at: '2026-01-01T00:00:01Z' },
      ]),
    );
    // A form run has no user message of its own: its claims must wait for its own answer.
    run(t, [
      { type: 'stream_start', trigger: 'form' },
      claims,
      { type: 'stream_delta', delta: 'I have saved the file.' },
      end,
    ]);
    const list = answers(t.state.entries);
    expect(list[0]?.unverifiedClaims).toBeUndefined();
    expect(list[1]?.unverifiedClaims).toEqual(['I have saved the file.']);
  });
});

describe('the history after a reload', () => {
  it('shows the flag of an answer stored with unverified_claims, and none on the others', () => {
    const messages: SessionMessage[] = [
      { id: '1', role: 'user', content: 'save it', created_at: '2026-01-01T00:00:00Z' },
      {
        id: '2',
        role: 'assistant',
        content: 'I have saved the file.',
        created_at: '2026-01-01T00:00:01Z',
        unverified_claims: ['I have saved the file.'],
      },
      { id: '3', role: 'user', content: 'thanks', created_at: '2026-01-01T00:00:02Z' },
      {
        id: '4',
        role: 'assistant',
        content: 'You are welcome.',
        created_at: '2026-01-01T00:00:03Z',
        unverified_claims: [],
      },
    ];
    const list = answers(entriesFromMessages(messages));
    expect(list[0]?.unverifiedClaims).toEqual(['I have saved the file.']);
    expect(list[1]).not.toHaveProperty('unverifiedClaims');
  });
});

describe('routes of the settings page and the setup screen', () => {
  it('name their pages, and leave sessions and the vault as they were', () => {
    expect(parseHash('#/settings')).toEqual({ sessionId: null, messageId: null, page: 'settings' });
    expect(parseHash('#/setup')).toEqual({ sessionId: null, messageId: null, page: 'setup' });
    expect(parseHash('#/vault')).toEqual({ sessionId: null, messageId: null, page: 'vault' });
    expect(parseHash('#/memory')).toEqual({ sessionId: null, messageId: null, page: 'memory' });
    expect(parseHash('#/profiles')).toEqual({ sessionId: null, messageId: null, page: 'profiles' });
    expect(parseHash('#/sessions/abc')).toEqual({ sessionId: 'abc', messageId: null, page: 'chat' });
  });

  it('carry the message a chat opens at, and build the same link back', () => {
    expect(parseHash('#/sessions/abc?m=m%201')).toEqual({ sessionId: 'abc', messageId: 'm 1', page: 'chat' });
    expect(parseHash(sessionHref('a/b', 'x?y'))).toEqual({
      sessionId: 'a/b',
      messageId: 'x?y',
      page: 'chat',
    });
  });

  it('put the pages reached from the settings under its link, the chat and the vault not', () => {
    for (const page of ['settings', 'setup', 'memory', 'tools', 'mcp', 'profiles'] as const)
      expect(isSettingsPage(page)).toBe(true);
    expect(isSettingsPage('chat')).toBe(false);
    expect(isSettingsPage('vault')).toBe(false);
  });

  it('open nothing for a link whose escapes are broken, instead of throwing', () => {
    expect(parseHash('#/sessions/%E0%A4%A')).toEqual({ sessionId: null, messageId: null, page: 'chat' });
    expect(parseHash('#/sessions/abc?m=%ZZ')).toEqual({ sessionId: 'abc', messageId: null, page: 'chat' });
  });

  it('do not match a longer word that only starts like them', () => {
    expect(parseHash('#/settingsx')).toEqual({ sessionId: null, messageId: null, page: 'chat' });
    expect(parseHash('#/setup/')).toEqual({ sessionId: null, messageId: null, page: 'setup' });
  });
});
