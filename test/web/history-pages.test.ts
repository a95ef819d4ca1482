/**
 * Paged history in the web client's code (web/src/lib/history-pages.ts) against the real store's
 * pages (SqliteSessionStore.getMessagePage on a SQLite file): older pages go in above the newest
 * one in order, a tool call and its result split by a page boundary end as one card, a form shows
 * the submission a newer page held, a jump reads MAX_PAGE_LIMIT at a time until its message is
 * there, one read runs at a time, a failed read can be retried, a run in progress that began
 * before the newest page is not shown twice, and a cursor a rewind removed makes the chat read
 * its newest page again.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ref } from 'vue';
import type { MessagePage, SessionMessage } from '../../src/protocol/rest.js';
import { createSqliteStores, type SqliteStores } from '../../src/store/sqlite/index.js';
import type { BufferedMessage } from '../../src/store/types.js';
import type { ChatEntry, ToolEntry } from '../../web/src/lib/entries.js';
import { entriesFromMessages } from '../../web/src/lib/history.js';
import { createHistoryPages, type HistoryPages, joinOlder } from '../../web/src/lib/history-pages.js';
import { Timeline } from '../../web/src/lib/timeline.js';
import { tempDir } from '../support/navi.js';

const at = '2026-01-01T00:00:00Z';
let dir: string;
let stores: SqliteStores;
let sessionCount = 0;

beforeAll(() => {
  dir = tempDir('navi-history-pages-');
  stores = createSqliteStores(join(dir, 'navi.db'));
});
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `count` alternating questions and answers, `m0` the oldest. */
function chat(count: number): SessionMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `m${i}`,
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `${i % 2 === 0 ? 'Question' : 'Answer'} ${i}`,
    created_at: at,
  }));
}

/** A new session in the store holding `messages`, and a chat paging it with the store's pages. */
async function paged(messages: SessionMessage[], options: { failing?: () => boolean } = {}) {
  const id = `s${++sessionCount}`;
  await stores.sessions.create({ id, profile_id: 'tester' });
  const buffered: BufferedMessage[] = messages.map((message) => ({ message, display: true, context: true }));
  await stores.sessions.append(id, buffered);
  const reads: { before: string; limit: number }[] = [];
  let reloads = 0;
  const timeline = new Timeline((callback) => callback());
  const pages: HistoryPages = createHistoryPages({
    timeline,
    async fetchPage(before, limit) {
      reads.push({ before, limit });
      if (options.failing?.())
        throw new Error('The Navi server cannot be reached. Check that it is running.');
      const page = await stores.sessions.getMessagePage(id, { limit, before });
      if (!page)
        throw Object.assign(new Error(`no message ${before} in this session`), { code: 'MESSAGE_NOT_FOUND' });
      return page;
    },
    scroller: ref(null),
    container: ref(null),
    reload: () => {
      reloads += 1;
    },
    onMoved: () => {},
  });
  const newest = async (limit = 100): Promise<MessagePage> =>
    (await stores.sessions.getMessagePage(id, { limit })) as MessagePage;
  pages.reset(await newest());
  return { id, pages, timeline, reads, reloads: () => reloads, newest };
}

const ids = (entries: readonly ChatEntry[]) => entries.map((entry) => entry.messageId);

describe('paged history in the chat', () => {
  it('opens on the newest page and puts each older page above it, in order, until the start', async () => {
    const { pages, timeline, reads } = await paged(chat(250));
    expect(ids(timeline.state.entries)).toEqual(
      chat(250)
        .slice(150)
        .map((m) => m.id),
    );
    expect(pages.nextBefore.value).toBe('m150');

    await pages.loadOlder();
    expect(reads).toEqual([{ before: 'm150', limit: 100 }]);
    expect(ids(timeline.state.entries)).toEqual(
      chat(250)
        .slice(50)
        .map((m) => m.id),
    );
    await pages.loadOlder();
    expect(ids(timeline.state.entries)).toEqual(chat(250).map((m) => m.id));
    expect(pages.nextBefore.value).toBeNull();
    // At the start nothing more is read.
    await pages.loadOlder();
    expect(reads).toHaveLength(2);
    expect(pages.loading.value).toBe(false);
  });

  it('shares one read between callers, and drops a read that a reset overtook', async () => {
    const { pages, timeline, reads, newest } = await paged(chat(400));
    await Promise.all([pages.loadOlder(), pages.loadOlder(), pages.loadOlder()]);
    expect(reads).toHaveLength(1);
    expect(timeline.state.entries).toHaveLength(200);

    const late = pages.loadOlder();
    pages.reset(await newest());
    await late;
    expect(ids(timeline.state.entries)).toEqual(
      chat(400)
        .slice(300)
        .map((m) => m.id),
    );
    expect(pages.nextBefore.value).toBe('m300');
  });

  it('joins a tool call and its result that a page boundary split into one card', () => {
    const messages: SessionMessage[] = [
      { id: 'u1', role: 'user', content: 'Weather?', created_at: at },
      {
        id: 'a1',
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', name: 'weather', arguments: { city: 'Oslo' } },
          { id: 'c2', name: 'weather', arguments: { city: 'Bergen' } },
        ],
        created_at: at,
      },
      { id: 't1', role: 'tool', tool_call_id: 'c1', name: 'weather', content: 'Rain', created_at: at },
      { id: 't2', role: 'tool', tool_call_id: 'c2', name: 'weather', content: 'Sun', created_at: at },
      { id: 'a2', role: 'assistant', content: 'Rain in Oslo, sun in Bergen.', created_at: at },
    ];
    // The newer page starts at the second result: its card knows only the result.
    const timeline = new Timeline((callback) => callback());
    timeline.reset(entriesFromMessages(messages.slice(3)));
    expect((timeline.state.entries[0] as ToolEntry).args).toEqual({});
    const joined = joinOlder(entriesFromMessages(messages.slice(0, 3)), timeline.state.entries, new Map());
    timeline.state.entries.unshift(...joined);

    const whole = entriesFromMessages(messages);
    const shape = (entries: readonly ChatEntry[]) =>
      entries.map((entry) =>
        entry.kind === 'tool'
          ? {
              call: entry.callId,
              tool: entry.tool,
              args: entry.args,
              status: entry.status,
              result: entry.result,
            }
          : { kind: entry.kind, id: entry.messageId },
      );
    expect(shape(timeline.state.entries)).toEqual(shape(whole));
    const cards = timeline.state.entries.filter((entry): entry is ToolEntry => entry.kind === 'tool');
    expect(cards.map((card) => [card.callId, card.messageId])).toEqual([
      ['c1', 't1'],
      ['c2', 't2'],
    ]);
  });

  it('shows a form of an older page as submitted when a newer page holds the submission', () => {
    const form = { component: 'form', payload: { form_id: 'trip', fields: [] } };
    const older: SessionMessage[] = [
      {
        id: 'a1',
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', name: 'render_component', arguments: {} }],
        created_at: at,
      },
      { id: 't1', role: 'tool', tool_call_id: 'c1', content: 'rendered', ui_component: form, created_at: at },
    ];
    const submitted = new Map([['trip', { city: 'Oslo' }]]);
    const joined = joinOlder(entriesFromMessages(older), [], submitted);
    expect((joined[0] as ToolEntry).formSubmitted).toEqual({ city: 'Oslo' });
    // Without the submission the form stays open.
    expect((joinOlder(entriesFromMessages(older), [], new Map())[0] as ToolEntry).formSubmitted).toBeNull();
  });

  it('reads a thousand at a time until the message a link points to is there, or says it is absent', async () => {
    const { pages, timeline, reads } = await paged(chat(3000));
    expect(await pages.loadUntil('m2950')).toBe('found');
    expect(reads).toEqual([]);

    expect(await pages.loadUntil('m500')).toBe('found');
    expect(reads).toEqual([
      { before: 'm500', limit: 1 },
      { before: 'm2900', limit: 1000 },
      { before: 'm1900', limit: 1000 },
      { before: 'm900', limit: 1000 },
    ]);
    expect(timeline.state.entries).toHaveLength(3000);

    // At the start of the session nothing is left to read: absent without asking.
    expect(await pages.loadUntil('no-such-message')).toBe('absent');
    expect(reads).toHaveLength(4);
    expect(pages.nextBefore.value).toBeNull();
  });

  it('says a message the session lacks is absent after one small read, not after reading every page', async () => {
    const { pages, timeline, reads } = await paged(chat(3000));
    expect(await pages.loadUntil('edited-away')).toBe('absent');
    expect(reads).toEqual([{ before: 'edited-away', limit: 1 }]);
    expect(timeline.state.entries).toHaveLength(100);
    expect(pages.nextBefore.value).toBe('m2900');
  });

  it('reads the pages on when the small read fails for another reason', async () => {
    let calls = 0;
    const { pages, reads } = await paged(chat(300), { failing: () => ++calls === 1 });
    expect(await pages.loadUntil('m10')).toBe('found');
    expect(reads.map((r) => r.limit)).toEqual([1, 1000]);
  });

  it('keeps what it shows when a read fails, says why, and reads again on retry', async () => {
    let failing = true;
    const { pages, timeline } = await paged(chat(150), { failing: () => failing });
    await pages.loadOlder();
    expect(pages.error.value).toBe('The Navi server cannot be reached. Check that it is running.');
    expect(pages.loading.value).toBe(false);
    expect(timeline.state.entries).toHaveLength(100);
    expect(pages.nextBefore.value).toBe('m50');
    // A scroll does not read again until the person retries.
    pages.onScroll();
    expect(await pages.loadUntil('m0')).toBe('failed');

    failing = false;
    await pages.loadOlder();
    expect(pages.error.value).toBeNull();
    expect(ids(timeline.state.entries)).toEqual(chat(150).map((m) => m.id));
  });

  it('shows no part of a run in progress twice when the run began before the newest page', async () => {
    // m150 is the person's message of a run whose 149 answers since fill more than the newest page.
    const run = chat(300).map((m, i) => (i > 150 ? { ...m, role: 'assistant' as const } : m));
    const { pages, timeline } = await paged(run);
    const start = {
      type: 'stream_start',
      run_id: 'r',
      seq: 1,
      trigger: 'user',
      user_message_id: 'm150',
    } as const;
    expect(timeline.dropUnfinishedRun(start)).toBe(false);
    expect(timeline.state.entries).toEqual([]);
    pages.skipRun(start);
    // The replay would rebuild m151…m299 here; older pages bring m150 and what came before it.
    await pages.loadOlder();
    expect(ids(timeline.state.entries)).toEqual(
      chat(300)
        .slice(100, 151)
        .map((m) => m.id),
    );
    await pages.loadOlder();
    expect(ids(timeline.state.entries)).toEqual(
      chat(300)
        .slice(0, 151)
        .map((m) => m.id),
    );

    // A recall's prompt is the replay's to show, and a run whose start is in view drops only itself.
    const recall = await paged(run);
    recall.pages.skipRun({ ...start, trigger: 'recall', user_message_id: 'm120' });
    recall.timeline.state.entries.splice(0);
    await recall.pages.loadOlder();
    expect(ids(recall.timeline.state.entries)).toEqual(
      chat(300)
        .slice(100, 120)
        .map((m) => m.id),
    );
    const inView = await paged(chat(300));
    expect(inView.timeline.dropUnfinishedRun({ ...start, user_message_id: 'm298' })).toBe(true);
    expect(inView.timeline.state.entries.at(-1)?.messageId).toBe('m298');
  });

  it('reads the newest page again when a rewind removed the message its cursor names', async () => {
    const { id, pages, reloads } = await paged(chat(150));
    await stores.sessions.rewind(id, 'm40', { keepAnchor: false });
    await pages.loadOlder();
    expect(reloads()).toBe(1);
    expect(pages.error.value).toBeNull();
  });
});
