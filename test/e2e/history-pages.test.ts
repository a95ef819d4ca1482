/**
 * Paged history in a real headless Chromium against the real server: a session of 100 000
 * messages opens with one request on its newest page (the page holds one page of messages, not
 * the session), scrolling to the top reads the page above while the message that was at the top
 * stays where it was, and paging goes on; a link to a message several pages back reads pages
 * until it is there; a page that fails to load says why and offers Retry, losing nothing; a
 * reload during a run shows the newest page and the run once; and a short session shows all of
 * itself with a quiet mark at its start, as before.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { SessionMessage } from '../../src/protocol/rest.js';
import type { BufferedMessage } from '../../src/store/types.js';
import { needsProgram } from '../support/requirements.js';
import { sendMessage, useWebEnv, waitForIdle, waitForText } from './web-harness.js';

/** Message `i` of a generated chat: `h-000000` is the oldest. */
const idOf = (i: number) => `h-${String(i).padStart(6, '0')}`;

/** `count` alternating questions and answers, one line each, in the order they were said. */
function generated(count: number): BufferedMessage[] {
  const start = Date.UTC(2025, 0, 1);
  const out: BufferedMessage[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const message: SessionMessage = {
      id: idOf(i),
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `${i % 2 === 0 ? 'Question' : 'Answer'} number ${i} of the long conversation.`,
      created_at: new Date(start + i * 1000).toISOString(),
    };
    out[i] = { message, display: true, context: false };
  }
  return out;
}

/** A session holding `count` generated messages, written in one transaction of the store. */
async function longSession(env: ReturnType<typeof useWebEnv>, count: number): Promise<string> {
  const id = await env.navi.createSession();
  await env.navi.services.sessions.update(id, { title: `${count} messages` });
  await env.navi.services.sessions.append(id, generated(count));
  return id;
}

/** The history reads (`GET /sessions/{id}` and its `/messages`) the page makes, path and query. */
function historyReads(page: Page, sessionId: string): string[] {
  const reads: string[] = [];
  const base = `/sessions/${sessionId}`;
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (request.method() === 'GET' && (url.pathname === base || url.pathname === `${base}/messages`))
      reads.push(`${url.pathname.slice(base.length)}${url.search}`);
  });
  return reads;
}

async function open(env: ReturnType<typeof useWebEnv>, page: Page, hash: string): Promise<void> {
  await page.goto(`${env.navi.url}/#/sessions/${hash}`);
  await page.getByTestId('connection').and(page.locator('[data-state="open"]')).waitFor();
}

/** The ids of the messages in the page, top to bottom. */
function shownIds(page: Page): Promise<string[]> {
  return page
    .locator('[data-message-id]')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-message-id') ?? ''));
}

/** Scrolls the chat to its very top and says where the message `id` is then (its rect's top). */
function scrollToTop(page: Page, id: string): Promise<number> {
  return page.evaluate((target) => {
    const scroller = document.querySelector<HTMLElement>('[data-testid="messages"]');
    if (!scroller) throw new Error('no chat scroller');
    scroller.scrollTop = 0;
    const element = document.querySelector(`[data-message-id="${target}"]`);
    if (!element) throw new Error(`no message ${target}`);
    return element.getBoundingClientRect().top;
  }, id);
}

/** Where the message `id` is now, and whether its top is inside the chat's scrolling area. */
function placeOf(page: Page, id: string): Promise<{ top: number; inView: boolean }> {
  return page.evaluate((target) => {
    const scroller = document.querySelector('[data-testid="messages"]');
    const element = document.querySelector(`[data-message-id="${target}"]`);
    if (!scroller || !element) throw new Error(`no message ${target}`);
    const rect = element.getBoundingClientRect();
    const view = scroller.getBoundingClientRect();
    return { top: rect.top, inView: rect.top >= view.top && rect.top < view.bottom };
  }, id);
}

/** Waits until no older page is being read (the top shows its button or the start again). */
async function settled(page: Page): Promise<void> {
  await page.locator('[data-testid="history-more"], [data-testid="history-start"]').first().waitFor();
}

/** Scrolls up, a page at a time, until the start of the conversation is shown. */
async function scrollToStart(page: Page): Promise<void> {
  const start = page.getByTestId('history-start');
  while ((await start.count()) === 0) {
    const top = (await shownIds(page))[0] ?? '';
    await scrollToTop(page, top);
    await page.waitForFunction(
      (id) => document.querySelector('[data-message-id]')?.getAttribute('data-message-id') !== id,
      top,
    );
    await settled(page);
  }
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: paged history', () => {
  const env = useWebEnv();
  const TOTAL = 100_000;
  let huge = '';

  it('opens a session of 100 000 messages on its newest page, and pages back as the person scrolls up', async () => {
    huge = await longSession(env, TOTAL);
    const page = await env.newPage();
    const reads = historyReads(page, huge);
    await open(env, page, huge);
    await page.locator(`[data-message-id="${idOf(TOTAL - 1)}"]`).waitFor();
    await settled(page);

    // One page in the page: the newest hundred, in order, from one read.
    const first = Array.from({ length: 100 }, (_, i) => idOf(TOTAL - 100 + i));
    expect(await shownIds(page)).toEqual(first);
    expect(reads).toEqual(['']);
    expect((await placeOf(page, idOf(TOTAL - 1))).inView).toBe(true);

    // To the top: the page above comes in and the message that was at the top stays put.
    const before = await scrollToTop(page, idOf(TOTAL - 100));
    await page.locator(`[data-message-id="${idOf(TOTAL - 200)}"]`).waitFor();
    await settled(page);
    const after = await placeOf(page, idOf(TOTAL - 100));
    expect(Math.abs(after.top - before)).toBeLessThan(2);
    expect(after.inView).toBe(true);
    expect(reads).toEqual(['', `/messages?before=${idOf(TOTAL - 100)}&limit=100`]);

    // And again: paging goes on, each message once, in order.
    const again = await scrollToTop(page, idOf(TOTAL - 200));
    await page.locator(`[data-message-id="${idOf(TOTAL - 300)}"]`).waitFor();
    await settled(page);
    expect(Math.abs((await placeOf(page, idOf(TOTAL - 200))).top - again)).toBeLessThan(2);
    expect(await shownIds(page)).toEqual(Array.from({ length: 300 }, (_, i) => idOf(TOTAL - 300 + i)));
    expect(reads).toHaveLength(3);
    expect(await page.getByTestId('history-start').count()).toBe(0);
    await page.close();
  }, 120_000);

  it('opens a link to a message several pages back by reading pages until it is there', async () => {
    const page = await env.newPage();
    const reads = historyReads(page, huge);
    const target = idOf(TOTAL - 3000);
    await open(env, page, `${huge}?m=${target}`);
    await page.locator(`[data-message-id="${target}"][data-jump-target]`).waitFor();
    expect((await placeOf(page, target)).inView).toBe(true);
    expect(reads).toEqual([
      '',
      `/messages?before=${target}&limit=1`,
      `/messages?before=${idOf(TOTAL - 100)}&limit=1000`,
      `/messages?before=${idOf(TOTAL - 1100)}&limit=1000`,
      `/messages?before=${idOf(TOTAL - 2100)}&limit=1000`,
    ]);
    expect(await page.locator('[data-message-id]').count()).toBe(3100);
    await page.close();
  }, 60_000);

  it('says why an older page failed to load and reads it on Retry, keeping what it shows', async () => {
    const page = await env.newPage();
    const olderPages = (url: URL) => url.pathname.endsWith('/messages');
    await page.route(olderPages, (route) => route.abort('connectionrefused'));
    await open(env, page, huge);
    await page.locator(`[data-message-id="${idOf(TOTAL - 1)}"]`).waitFor();
    await scrollToTop(page, idOf(TOTAL - 100));
    const failure = page.getByTestId('history-error');
    await waitForText(failure, 'Earlier messages could not be loaded: The Navi server cannot be reached.');
    expect(await page.locator('[data-message-id]').count()).toBe(100);

    await page.unroute(olderPages);
    await page.getByTestId('history-retry').click();
    await page.locator(`[data-message-id="${idOf(TOTAL - 200)}"]`).waitFor();
    expect(await page.locator('[data-message-id]').count()).toBe(200);
    expect(await failure.count()).toBe(0);
    await page.close();
  });

  it('shows the newest page and a run in progress once after a reload, and pages back past them', async () => {
    const id = await longSession(env, 300);
    const page = await env.newPage();
    await open(env, page, id);
    await page.locator(`[data-message-id="${idOf(299)}"]`).waitFor();
    env.fake.enqueue(
      { toolCalls: [{ name: 'slow_task', arguments: { job: 'backup' } }] },
      { text: 'The backup is finished.' },
    );
    await sendMessage(page, 'Run the backup');
    const card = page.locator('[data-testid="tool-card"][data-tool="slow_task"]');
    await card.and(page.locator('[data-status="running"]')).waitFor();

    await page.reload();
    await page.getByTestId('connection').and(page.locator('[data-state="open"]')).waitFor();
    await card.and(page.locator('[data-status="running"]')).waitFor();
    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'The backup is finished.');
    await waitForIdle(page);
    expect(await page.getByTestId('user-message').filter({ hasText: 'Run the backup' }).count()).toBe(1);
    expect(await card.count()).toBe(1);
    expect(
      await page.getByTestId('assistant-message').filter({ hasText: 'The backup is finished.' }).count(),
    ).toBe(1);

    // The pages above the newest one join it without a gap or a repeat.
    await scrollToStart(page);
    const all = await shownIds(page);
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((m) => m.startsWith('h-'))).toEqual(Array.from({ length: 300 }, (_, i) => idOf(i)));
    await page.close();
  });

  it('shows a short session whole, with a quiet mark at its start, from one read', async () => {
    const id = await longSession(env, 6);
    const page = await env.newPage();
    const reads = historyReads(page, id);
    await open(env, page, id);
    await waitForText(page.getByTestId('history-start'), 'Start of the conversation');
    expect(await shownIds(page)).toEqual(Array.from({ length: 6 }, (_, i) => idOf(i)));
    expect(await page.getByTestId('history-more').count()).toBe(0);
    await sendMessage(page, 'One more question');
    await waitForText(page.getByTestId('assistant-message').last(), 'OK.');
    expect(reads).toEqual(['']);
    await page.close();
  });
});
