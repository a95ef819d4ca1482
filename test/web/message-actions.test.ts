/**
 * The chat's per-message actions and failed turns in the web client's code
 * (web/src/lib/timeline.ts, history.ts, rewind.ts, message-ids.ts, message-actions.ts): a run
 * that fails leaves a failed-turn entry (live and after a reload), `history_rewound` drops what
 * a regenerate or edit replaces, live entries get their message ids from the run's events (and
 * from a read of the session only for what no event names), the actions land on the right
 * entries, an edit carries the message's images and files again, and a refused edit is the
 * editor's alone.
 */
import { describe, expect, it } from 'vitest';
import { computed, ref } from 'vue';
import type { EditCommand, RegenerateCommand } from '../../src/protocol/commands.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { SessionMessage } from '../../src/protocol/rest.js';
import type { ChatEntry, ErrorEntry, UserEntry } from '../../web/src/lib/entries.js';
import { entriesFromMessages } from '../../web/src/lib/history.js';
import {
  actionTargets,
  copyableText,
  createMessageActions,
  editCommand,
  isEditable,
} from '../../web/src/lib/message-actions.js';
import { adoptMessageIds } from '../../web/src/lib/message-ids.js';
import { Timeline } from '../../web/src/lib/timeline.js';

const at = '2026-01-01T00:00:00Z';

/** A timeline whose text deltas are moved into the entries at once. */
function timeline(): Timeline {
  return new Timeline((callback) => callback());
}

let runCounter = 0;
/** Applies the events as one run (its own run id, seq from 1). */
function run(t: Timeline, events: ServerEvent[]): void {
  runCounter += 1;
  let seq = 0;
  for (const event of events) t.apply({ ...event, run_id: `r${runCounter}`, seq: ++seq } as ServerEvent);
}

const kinds = (t: Timeline): string[] => t.state.entries.map((e) => e.kind);
const texts = (t: Timeline): string[] =>
  t.state.entries.map((e) => ('text' in e ? e.text : e.kind === 'error' ? e.message : e.kind));

function history(): SessionMessage[] {
  return [
    { id: 'u1', role: 'user', content: 'first question', created_at: at },
    { id: 'a1', role: 'assistant', content: 'first answer', created_at: at },
    { id: 'u2', role: 'user', content: 'second question', created_at: at },
    { id: 'a2', role: 'assistant', content: 'second answer', created_at: at },
  ];
}

const failure: ServerEvent = {
  type: 'error',
  message: 'The LLM server at http://127.0.0.1:1 answered HTTP 500: model exploded',
  recoverable: false,
  code: 'LLM_HTTP_ERROR',
};

describe('a failed turn', () => {
  it('shows as a failed-turn entry with its code when the run ends with an error', () => {
    const t = timeline();
    t.push({ kind: 'user', key: 'k-user', text: 'Hello?', images: [], files: [] });
    run(t, [{ type: 'stream_start', trigger: 'user' }, { type: 'stream_delta', delta: 'Par' }, failure]);
    expect(kinds(t)).toEqual(['user', 'assistant', 'error']);
    const entry = t.state.entries[2] as ErrorEntry;
    expect(entry).toMatchObject({ failed: true, code: 'LLM_HTTP_ERROR' });
    expect(entry.message).toContain('model exploded');
    expect(entry.hint).toMatch(/Retry/);
    expect(t.state.running).toBe(false);
    expect(t.state.entries[1]).toMatchObject({ interrupted: true, streaming: false });
    expect(actionTargets(t.state.entries).retryKey).toBe(entry.key);
  });

  it('is a plain error box, with no Retry, when the server refused a command and no run ended', () => {
    const t = timeline();
    t.apply({
      type: 'error',
      message: 'The agent is still answering.',
      recoverable: true,
      code: 'RUN_ACTIVE',
    });
    const entry = t.state.entries[0] as ErrorEntry;
    expect(entry.failed).toBeUndefined();
    expect(entry.hint).toMatch(/Nothing was lost/);
    expect(actionTargets(t.state.entries).retryKey).toBeNull();
  });

  it('comes back after a reload from the stored kind: error message, with its id and code', () => {
    const entries = entriesFromMessages([
      { id: 'u1', role: 'user', content: 'Hello?', created_at: at },
      {
        id: 'e1',
        role: 'system',
        kind: 'error',
        content: 'The LLM server cannot be reached',
        error: { message: 'The LLM server at http://x cannot be reached', code: 'LLM_UNREACHABLE' },
        created_at: at,
      },
    ]);
    expect(entries[1]).toMatchObject({
      kind: 'error',
      failed: true,
      code: 'LLM_UNREACHABLE',
      messageId: 'e1',
      message: 'The LLM server at http://x cannot be reached',
    });
    expect(actionTargets(entries).retryKey).toBe(entries[1]?.key);
  });

  it('offers Retry only while it is the last turn', () => {
    const entries = entriesFromMessages([
      { id: 'u1', role: 'user', content: 'Hello?', created_at: at },
      {
        id: 'e1',
        role: 'system',
        kind: 'error',
        content: 'down',
        error: { message: 'down' },
        created_at: at,
      },
      { id: 'u2', role: 'user', content: 'Again?', created_at: at },
      { id: 'a2', role: 'assistant', content: 'Here.', created_at: at },
    ]);
    const targets = actionTargets(entries);
    expect(targets.retryKey).toBeNull();
    expect(targets.lastAnswerKey).toBe(entries[3]?.key);
  });
});

describe('the history', () => {
  it('gives every entry the id of the message it shows', () => {
    const entries = entriesFromMessages([
      {
        id: 'u1',
        role: 'user',
        content: 'q',
        created_at: at,
        attachments: [{ name: 'a.txt', path: '/f/a.txt' }],
      },
      {
        id: 'a1',
        role: 'assistant',
        content: '',
        thinking: 'hmm',
        tool_calls: [{ id: 'c1', name: 'file_read', arguments: {} }],
        created_at: at,
      },
      { id: 't1', role: 'tool', tool_call_id: 'c1', name: 'file_read', content: 'x', created_at: at },
      { id: 'a2', role: 'assistant', content: 'done', created_at: at },
    ]);
    expect(entries.map((e) => [e.kind, e.messageId])).toEqual([
      ['user', 'u1'],
      ['thinking', 'a1'],
      ['tool', 't1'],
      ['assistant', 'a2'],
    ]);
    expect((entries[0] as UserEntry).attachments).toEqual([{ name: 'a.txt', path: '/f/a.txt' }]);
  });
});

describe('history_rewound', () => {
  it('of a regenerate drops the answer by its id, and the new answer takes its place', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    t.expectRewind({ kind: 'regenerate' });
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'a2', removed_ids: ['a2'] },
      { type: 'stream_delta', delta: 'better answer' },
      { type: 'stream_end', content: 'better answer', context_tokens: 5, max_context_tokens: 100 },
    ]);
    expect(texts(t)).toEqual(['first question', 'first answer', 'second question', 'better answer']);
    expect(t.takeStale()).toBe(false);
  });

  it('of this client’s regenerate drops everything after the last question when the answer has no id yet', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history().slice(0, 3)));
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_delta', delta: 'live answer' },
      { type: 'stream_end', content: 'live answer', context_tokens: 5, max_context_tokens: 100 },
    ]);
    t.expectRewind({ kind: 'regenerate' });
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'unknown-id', removed_ids: ['unknown-id'] },
    ]);
    expect(texts(t)).toEqual(['first question', 'first answer', 'second question']);
  });

  it('of an edit replaces the edited bubble and everything after it with the new text', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    const edited = t.state.entries[0] as UserEntry;
    const replacement: UserEntry = {
      kind: 'user',
      key: 'k-new',
      text: 'better question',
      images: [],
      files: [],
    };
    t.expectRewind({ kind: 'edit', entry: edited, replacement });
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'u1', removed_ids: ['u1', 'a1', 'u2', 'a2'] },
      { type: 'stream_end', content: 'new answer', context_tokens: 5, max_context_tokens: 100 },
    ]);
    expect(texts(t)).toEqual(['better question', 'new answer']);
  });

  it('from another tab drops what it names and asks for a reload, since the edit’s new text is not in the view', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'u2', removed_ids: ['u2', 'a2'] },
    ]);
    expect(texts(t)).toEqual(['first question', 'first answer']);
    expect(t.takeStale()).toBe(true);
    expect(t.takeStale()).toBe(false);
  });

  it('changes nothing when the history was loaded after it happened (a replay after reconnecting)', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history().slice(0, 3)));
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'old', removed_ids: ['old', 'older'] },
    ]);
    expect(texts(t)).toEqual(['first question', 'first answer', 'second question']);
    expect(t.takeStale()).toBe(false);
  });
});

describe('message ids of live entries, from the events', () => {
  const end = (message_id?: string): ServerEvent => ({
    type: 'stream_end',
    content: 'the answer',
    context_tokens: 5,
    max_context_tokens: 100,
    ...(message_id !== undefined ? { message_id } : {}),
  });

  it('name the bubble this client sent and the answer, so no read is needed', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history().slice(0, 2)));
    t.pushSent({ kind: 'user', key: 'k-sent', text: 'new question', images: [], files: [] });
    run(t, [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u9' },
      { type: 'tool_started', call_id: 'c9', tool: 'file_read', args: {}, is_subagent: false },
      {
        type: 'tool_call',
        call_id: 'c9',
        tool: 'file_read',
        args: {},
        result: 'x',
        success: true,
        is_subagent: false,
      },
      { type: 'stream_delta', delta: 'the answer' },
      end('a9'),
    ]);
    expect(t.state.entries.map((e) => [e.kind, e.messageId ?? null])).toEqual([
      ['user', 'u1'],
      ['assistant', 'a1'],
      ['user', 'u9'],
      ['tool', null],
      ['assistant', 'a9'],
    ]);
    expect(t.takeUnnamed()).toBe(false);
    expect(t.takeStale()).toBe(false);
  });

  it('leave a plan or text said before tool calls to a read of the session', () => {
    const withText = timeline();
    withText.pushSent({ kind: 'user', key: 'k', text: 'q', images: [], files: [] });
    run(withText, [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u1' },
      { type: 'stream_delta', delta: 'Let me look.' },
      { type: 'tool_started', call_id: 'c1', tool: 'file_read', args: {}, is_subagent: false },
      { type: 'stream_delta', delta: 'the answer' },
      end('a2'),
    ]);
    expect(withText.state.entries.map((e) => e.messageId ?? null)).toEqual(['u1', null, null, 'a2']);
    expect(withText.takeUnnamed()).toBe(true);
    expect(withText.takeUnnamed()).toBe(false);

    const planned = timeline();
    planned.pushSent({ kind: 'user', key: 'k', text: 'q', images: [], files: [] });
    run(planned, [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u1' },
      { type: 'plan_ready', plan: '1. Answer' },
      { type: 'stream_delta', delta: 'the answer' },
      end('a2'),
    ]);
    expect(planned.takeUnnamed()).toBe(true);
  });

  it('name a recall’s prompt, an edit’s new text and a stopped partial answer', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    run(t, [
      {
        type: 'stream_start',
        trigger: 'recall',
        user_message_id: 'r1',
        recall_id: 'rc1',
        prompt: 'water the plants',
        scheduled_for: at,
      },
      { type: 'stream_delta', delta: 'Done' },
      { type: 'stream_stopped', content: 'Done', message_id: 'a-stop' },
    ]);
    expect(t.state.entries.slice(4).map((e) => [e.kind, e.messageId ?? null])).toEqual([
      ['user', 'r1'],
      ['assistant', 'a-stop'],
      ['notice', null],
    ]);
    expect(t.takeUnnamed()).toBe(false);

    const edited = t.state.entries[2] as UserEntry;
    const replacement: UserEntry = { kind: 'user', key: 'k-new', text: 'better', images: [], files: [] };
    t.expectRewind({ kind: 'edit', entry: edited, replacement });
    run(t, [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u-new' },
      { type: 'history_rewound', from_message_id: 'u2', removed_ids: ['u2', 'a2', 'r1', 'a-stop'] },
      { type: 'stream_delta', delta: 'the answer' },
      end('a-new'),
    ]);
    expect(t.state.entries.map((e) => e.messageId)).toEqual(['u1', 'a1', 'u-new', 'a-new']);
    expect(t.takeUnnamed()).toBe(false);
    expect(t.takeStale()).toBe(false);
  });

  it('leave a regenerated message its id and give the new answer its own', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    t.expectRewind({ kind: 'regenerate' });
    run(t, [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u2' },
      { type: 'history_rewound', from_message_id: 'a2', removed_ids: ['a2'] },
      { type: 'stream_delta', delta: 'the answer' },
      end('a3'),
    ]);
    expect(t.state.entries.map((e) => e.messageId)).toEqual(['u1', 'a1', 'u2', 'a3']);
    expect(t.takeStale()).toBe(false);
  });

  it('ask for a reload when the run answers a message this view does not show', () => {
    // Sent from another tab or over REST: the events do not carry its text.
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    run(t, [{ type: 'stream_start', trigger: 'user', user_message_id: 'u-elsewhere' }, end('a-elsewhere')]);
    expect(t.takeStale()).toBe(true);
  });

  it('never give a refused message’s bubble the id of the next run’s message', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    const refused = t.pushSent({ kind: 'user', key: 'k-refused', text: 'too soon', images: [], files: [] });
    t.apply({
      type: 'error',
      message: 'The agent is still answering.',
      recoverable: true,
      code: 'RUN_ACTIVE',
    });
    run(t, [{ type: 'stream_start', trigger: 'user', user_message_id: 'u-other' }, end('a-other')]);
    expect(refused.messageId).toBeUndefined();
    expect(t.takeStale()).toBe(true);
  });

  it('give a form’s run no bubble to name, and keep working with a server that sends no ids', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    run(t, [{ type: 'stream_start', trigger: 'form', user_message_id: 'f1' }, end('a-form')]);
    expect(t.takeStale()).toBe(false);
    const sent = t.pushSent({ kind: 'user', key: 'k-old', text: 'hi', images: [], files: [] });
    run(t, [{ type: 'stream_start', trigger: 'user' }, { type: 'stream_delta', delta: 'Hello' }, end()]);
    expect(sent.messageId).toBeUndefined();
    expect(t.takeStale()).toBe(false);
    // Its answer has no id: only a read can name it.
    expect(t.takeUnnamed()).toBe(true);
  });
});

describe('message ids of live entries, from a read of the session', () => {
  it('are taken from the session read after the run, matched by kind and text from the end', () => {
    const t = timeline();
    t.reset(entriesFromMessages(history().slice(0, 2)));
    t.push({ kind: 'user', key: 'k-refused', text: 'never stored', images: [], files: [] });
    t.push({ kind: 'user', key: 'k-sent', text: 'second question', images: [], files: [] });
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'tool_started', call_id: 'c9', tool: 'file_read', args: {}, is_subagent: false },
      {
        type: 'tool_call',
        call_id: 'c9',
        tool: 'file_read',
        args: {},
        result: 'x',
        success: true,
        is_subagent: false,
      },
      { type: 'stream_delta', delta: 'second answer' },
      { type: 'stream_end', content: 'second answer', context_tokens: 5, max_context_tokens: 100 },
    ]);
    const fresh = entriesFromMessages([
      ...history().slice(0, 3),
      {
        id: 'a-call',
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c9', name: 'file_read', arguments: {} }],
        created_at: at,
      },
      { id: 't9', role: 'tool', tool_call_id: 'c9', name: 'file_read', content: 'x', created_at: at },
      { id: 'a2', role: 'assistant', content: 'second answer', created_at: at },
    ]);
    expect(adoptMessageIds(t.state.entries, fresh)).toBe(3);
    expect(t.state.entries.map((e) => e.messageId ?? null)).toEqual(['u1', 'a1', null, 'u2', 't9', 'a2']);
  });

  it('tell equal texts apart by their order', () => {
    const view: ChatEntry[] = [
      { kind: 'user', key: 'a', text: 'hi', images: [], files: [] },
      { kind: 'assistant', key: 'b', text: 'OK.', streaming: false, interrupted: false },
      { kind: 'user', key: 'c', text: 'hi', images: [], files: [] },
      { kind: 'assistant', key: 'd', text: 'OK.', streaming: false, interrupted: false },
    ];
    const fresh = entriesFromMessages([
      { id: 'u1', role: 'user', content: 'hi', created_at: at },
      { id: 'a1', role: 'assistant', content: 'OK.', created_at: at },
      { id: 'u2', role: 'user', content: 'hi', created_at: at },
      { id: 'a2', role: 'assistant', content: 'OK.', created_at: at },
    ]);
    adoptMessageIds(view, fresh);
    expect(view.map((e) => e.messageId)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });
});

describe('the actions', () => {
  it('go to the right entries: Regenerate on the last finished answer after the last question only', () => {
    const entries = entriesFromMessages(history());
    expect(actionTargets(entries).lastAnswerKey).toBe(entries[3]?.key);
    expect(actionTargets(entries.slice(0, 3)).lastAnswerKey).toBeNull();
    expect(actionTargets([]).lastAnswerKey).toBeNull();
    const streaming: ChatEntry[] = [
      ...entries.slice(0, 3),
      { kind: 'assistant', key: 's', text: 'par', streaming: true, interrupted: false },
    ];
    expect(actionTargets(streaming).lastAnswerKey).toBeNull();
  });

  it('copy what was said, and edit only what the person typed', () => {
    const [question, answer] = entriesFromMessages(history());
    expect(copyableText(question as ChatEntry)).toBe('first question');
    expect(copyableText(answer as ChatEntry)).toBe('first answer');
    expect(copyableText({ kind: 'notice', key: 'n', text: 'Stopped.' })).toBeNull();
    expect(
      copyableText({ kind: 'assistant', key: 'e', text: '  ', streaming: false, interrupted: true }),
    ).toBeNull();
    expect(isEditable(question as ChatEntry)).toBe(true);
    expect(isEditable(answer as ChatEntry)).toBe(false);
    const recalled: UserEntry = {
      kind: 'user',
      key: 'r',
      text: 'water the plants',
      images: [],
      files: [],
      recall: { recall_id: 'rc1', scheduled_for: at },
    };
    expect(isEditable(recalled)).toBe(false);
  });

  it('send an edit with the message’s images and files again', () => {
    const entry: UserEntry = {
      kind: 'user',
      key: 'u',
      text: 'old',
      images: ['data:image/png;base64,iVBORw0KGgo='],
      files: ['notes.txt'],
      attachments: [{ name: 'notes.txt', path: '/files/notes.txt' }],
      messageId: 'u1',
    };
    expect(editCommand(entry, 'u1', 'new')).toEqual({
      type: 'edit',
      message_id: 'u1',
      content: 'new',
      images: ['data:image/png;base64,iVBORw0KGgo='],
      files: [{ name: 'notes.txt', path: '/files/notes.txt' }],
    });
    expect(editCommand({ ...entry, images: [], attachments: [] }, 'u1', 'new')).toEqual({
      type: 'edit',
      message_id: 'u1',
      content: 'new',
    });
  });
});

describe('the edit flow', () => {
  function setup(connected = true) {
    const t = timeline();
    t.reset(entriesFromMessages(history()));
    const running = ref(false);
    const sent: (RegenerateCommand | EditCommand)[] = [];
    const notices: string[] = [];
    let syncs = 0;
    const actions = createMessageActions({
      timeline: t,
      running: computed(() => running.value),
      send: (command) => {
        if (!connected) return false;
        sent.push(command);
        return true;
      },
      syncIds: async () => {
        syncs += 1;
      },
      notify: (text) => notices.push(text),
    });
    return { t, running, sent, notices, actions, syncs: () => syncs };
  }

  it('sends the edit, keeps the editor busy until the rewind, then shows the new text in place', async () => {
    const { t, sent, actions } = setup();
    const question = t.state.entries[2] as UserEntry;
    actions.startEdit(question);
    expect(actions.editing.value).toBe(question.key);
    await actions.saveEdit(question, 'a better second question');
    expect(sent).toEqual([{ type: 'edit', message_id: 'u2', content: 'a better second question' }]);
    expect(actions.editBusy.value).toBe(true);
    const rewound: ServerEvent = {
      type: 'history_rewound',
      from_message_id: 'u2',
      removed_ids: ['u2', 'a2'],
    };
    run(t, [{ type: 'stream_start', trigger: 'user' }, rewound]);
    actions.observe(rewound);
    expect(actions.editing.value).toBeNull();
    expect(texts(t)).toEqual(['first question', 'first answer', 'a better second question']);
  });

  it('keeps the editor open with the server’s reason when the edit is refused', async () => {
    const { t, actions } = setup();
    const question = t.state.entries[0] as UserEntry;
    actions.startEdit(question);
    await actions.saveEdit(question, 'changed');
    const refusal: ServerEvent = {
      type: 'error',
      message: 'Only a message you typed can be edited…',
      recoverable: true,
      code: 'MESSAGE_NOT_EDITABLE',
    };
    t.apply(refusal);
    actions.observe(refusal);
    expect(actions.editing.value).toBe(question.key);
    expect(actions.editBusy.value).toBe(false);
    expect(actions.editError.value).toMatch(/Only a message you typed/);
    // The refused edit's rewind is no longer expected: a later one from elsewhere is not taken for it.
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'u2', removed_ids: ['u2', 'a2'] },
    ]);
    expect(texts(t)).not.toContain('changed');
  });

  it('refuses an empty message, a message during a run, and says so when not connected', async () => {
    const { t, running, sent, actions } = setup();
    const question = t.state.entries[0] as UserEntry;
    await actions.saveEdit(question, '   ');
    expect(actions.editError.value).toMatch(/empty/);
    running.value = true;
    await actions.saveEdit(question, 'x');
    expect(actions.editError.value).toMatch(/still answering/);
    actions.regenerate();
    expect(sent).toEqual([]);

    const offline = setup(false);
    await offline.actions.saveEdit(offline.t.state.entries[0] as UserEntry, 'x');
    expect(offline.actions.editError.value).toMatch(/Not connected/);
    offline.actions.regenerate();
    expect(offline.notices[0]).toMatch(/Not connected/);
  });

  it('reads the session first when the message has no id yet, and refuses one the server never stored', async () => {
    const { t, sent, actions, syncs } = setup();
    const unsaved = t.push<UserEntry>({ kind: 'user', key: 'k-x', text: 'refused', images: [], files: [] });
    await actions.saveEdit(unsaved, 'changed');
    expect(syncs()).toBe(1);
    expect(sent).toEqual([]);
    expect(actions.editError.value).toMatch(/not saved on the server/);
  });

  it('claims the refusal of the edit it sent, and only that one', async () => {
    const { t, actions } = setup();
    const refusal: ServerEvent = {
      type: 'error',
      message: 'test-model reads text only, so it cannot see images.',
      recoverable: true,
      code: 'IMAGES_UNSUPPORTED',
    };
    // Nothing sent yet: the refusal is another's (the composer's message).
    expect(actions.ownsRefusal(refusal)).toBe(false);
    const question = t.state.entries[0] as UserEntry;
    actions.startEdit(question);
    await actions.saveEdit(question, 'changed');
    expect(actions.ownsRefusal(refusal)).toBe(true);
    // An error of a run is not a refusal of the edit.
    expect(actions.ownsRefusal({ ...failure, run_id: 'r-x', seq: 3 })).toBe(false);
    t.apply(refusal);
    actions.observe(refusal);
    expect(actions.editing.value).toBe(question.key);
    expect(actions.editBusy.value).toBe(false);
    expect(actions.editError.value).toBe(refusal.message);
    // Answered: a later refusal is someone else's again.
    expect(actions.ownsRefusal(refusal)).toBe(false);
    expect(texts(t).slice(0, 4)).toEqual([
      'first question',
      'first answer',
      'second question',
      'second answer',
    ]);
  });

  it('opens the editor again when the edit’s run ends before it rewound anything', async () => {
    const { t, actions } = setup();
    const question = t.state.entries[0] as UserEntry;
    actions.startEdit(question);
    await actions.saveEdit(question, 'changed');
    const events: ServerEvent[] = [
      { type: 'stream_start', trigger: 'user', user_message_id: 'u-new', run_id: 'r-edit', seq: 1 },
      {
        type: 'error',
        message: 'That message was summarised…',
        recoverable: false,
        code: 'MESSAGE_NOT_EDITABLE',
        run_id: 'r-edit',
        seq: 2,
      },
    ];
    for (const event of events) {
      t.apply(event);
      actions.observe(event);
    }
    expect(actions.editing.value).toBe(question.key);
    expect(actions.editBusy.value).toBe(false);
    expect(actions.editError.value).toMatch(/summarised/);
  });

  it('regenerates with one command and drops the old answer when the rewind comes', () => {
    const { t, sent, actions } = setup();
    actions.regenerate();
    expect(sent).toEqual([{ type: 'regenerate' }]);
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'history_rewound', from_message_id: 'a2', removed_ids: ['a2'] },
    ]);
    expect(texts(t)).toEqual(['first question', 'first answer', 'second question']);
  });
});

describe('the context meter', () => {
  it('takes the figures a stopped run reports', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_delta', delta: 'Part' },
      { type: 'stream_stopped', content: 'Part', context_tokens: 321, max_context_tokens: 8192 },
    ]);
    expect(t.state.contextTokens).toBe(321);
    expect(t.state.maxContextTokens).toBe(8192);
  });

  it('takes the estimate a compression reports, and 0 from a server that sends none', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_end', content: 'a', context_tokens: 7400, max_context_tokens: 8192 },
      { type: 'context_compressed', messages_before: 12, messages_after: 5, context_tokens: 640 },
    ]);
    expect(t.state.contextTokens).toBe(640);
    t.apply({ type: 'context_compressed', messages_before: 5, messages_after: 3 });
    expect(t.state.contextTokens).toBe(0);
  });

  it('keeps its figure when an older server sends a stop without them', () => {
    const t = timeline();
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_end', content: 'a', context_tokens: 40, max_context_tokens: 100 },
    ]);
    run(t, [
      { type: 'stream_start', trigger: 'user' },
      { type: 'stream_stopped', content: '' },
    ]);
    expect(t.state.contextTokens).toBe(40);
  });
});
