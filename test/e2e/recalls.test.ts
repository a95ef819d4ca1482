/**
 * Recalls in the web client, on the real clock: the agent schedules one through the fake LLM,
 * the recall panel lists it, the recall run shows up in the chat by itself with its prompt
 * marked as a recall (live, for a page that joins mid-run, and after a reload), and the person
 * skips and cancels recalls from the panel.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RecallSummary } from '../../src/protocol/rest.js';
import type { RecordedRequest, ReplyScript } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import { getRecalls, lastUserText } from '../support/rest.js';
import {
  openNewSession,
  PHONE,
  screenshot,
  sendMessage,
  useWebEnv,
  type WebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

function endsWithToolResult(request: RecordedRequest): boolean {
  const messages = request.body.messages ?? [];
  return messages[messages.length - 1]?.role === 'tool';
}

/**
 * A fake model that answers the person's `ask` by calling `first` (then saying `scheduled`), and
 * the recall's `prompt` by calling `recallCalls` if any (then answering `answer`).
 */
function recallModel(options: {
  ask: string;
  first: NonNullable<ReplyScript['toolCalls']>;
  scheduled: string;
  prompt: string;
  recallCalls?: NonNullable<ReplyScript['toolCalls']>;
  answer: string;
}): (request: RecordedRequest) => ReplyScript {
  return (request) => {
    const user = lastUserText(request);
    if (user.includes(options.prompt)) {
      if (options.recallCalls && !endsWithToolResult(request)) return { toolCalls: options.recallCalls };
      return { text: options.answer };
    }
    if (user.includes(options.ask)) {
      return endsWithToolResult(request) ? { text: options.scheduled } : { toolCalls: options.first };
    }
    return { text: 'OK.' };
  };
}

function recallsOf(env: WebEnv, sessionId: string): Promise<RecallSummary[]> {
  return getRecalls(env.navi, sessionId);
}

/** The recall bubbles of the chat. */
const recallBubbles = (page: Page) =>
  page.getByTestId('user-message').filter({ has: page.getByTestId('recall-badge') });

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: recalls', () => {
  const env = useWebEnv();

  it('shows a one-shot recall, its run in the chat as it happens, and its outcome', async () => {
    const prompt = 'Check whether the oven timer has gone off and tell the user.';
    env.fake.setDefault(
      recallModel({
        ask: 'Remind me about the oven',
        first: [{ name: 'schedule_recall', arguments: { prompt, when: { type: 'once', delay: '2s' } } }],
        scheduled: 'I will check the oven in two seconds.',
        prompt,
        recallCalls: [{ name: 'slow_task', arguments: { job: 'oven' } }],
        answer: 'The oven timer is done.',
      }),
    );
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    // No recalls yet: no control for them.
    expect(await page.getByTestId('recalls-toggle').count()).toBe(0);
    await sendMessage(page, 'Remind me about the oven in two seconds');
    await waitForText(page.getByTestId('assistant-message'), 'I will check the oven in two seconds.');

    // The tool call made the panel fetch the list: the control appears and lists the recall.
    const toggle = page.getByTestId('recalls-toggle');
    await toggle.click();
    const item = page.getByTestId('recall').filter({ hasText: 'oven timer' });
    await waitForText(item.getByTestId('recall-prompt'), prompt);
    await item.getByTestId('recall-description').waitFor();

    // The recall run starts by itself: its prompt appears as a marked bubble, without a reload.
    const oven = page.locator('[data-testid="tool-card"][data-tool="slow_task"]');
    await oven.and(page.locator('[data-status="running"]')).waitFor();
    await waitForText(recallBubbles(page), prompt);
    await waitForText(page.getByTestId('recall-badge'), 'Recall');
    await waitForText(item.getByTestId('recall-last'), 'running now');

    // A page that opens the session during the recall run sees its prompt once, marked.
    const other = await env.newPage();
    await other.goto(`${env.navi.url}/#/sessions/${id}`);
    await other.locator('[data-testid="tool-card"][data-tool="slow_task"][data-status="running"]').waitFor();
    expect(await recallBubbles(other).count()).toBe(1);
    await waitForText(recallBubbles(other), prompt);

    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'The oven timer is done.');
    await waitForText(other.getByTestId('assistant-message').last(), 'The oven timer is done.');
    expect(await recallBubbles(other).count()).toBe(1);
    await other.close();

    // The panel shows it finished, with how its run went; nothing is active any more.
    await page.locator('[data-testid="recall"][data-status="done"]').waitFor();
    await page.locator('[data-testid="recall-last"][data-outcome="completed"]').waitFor();
    await waitForText(item.getByTestId('recall-last'), 'completed');
    expect(await item.getByTestId('recall-cancel').count()).toBe(0);
    expect(await toggle.getAttribute('data-active')).toBe('0');
    expect(await recallBubbles(page).count()).toBe(1);
    const badge = (await page.getByTestId('recall-badge').textContent()) ?? '';
    expect(badge).toMatch(/Recall\s+· due /);
    expect(badge).not.toContain('late');
    await screenshot(page, 'laptop-recall-done');

    // After a reload the prompt is still marked, and the answer follows it.
    await page.reload();
    await waitForText(page.getByTestId('assistant-message').last(), 'The oven timer is done.');
    expect(await recallBubbles(page).count()).toBe(1);
    await waitForText(recallBubbles(page), prompt);
    const texts = await page
      .locator('[data-testid="user-message"], [data-testid="assistant-message"]')
      .allTextContents();
    expect(texts.findIndex((t) => t.includes(prompt))).toBeLessThan(
      texts.findIndex((t) => t.includes('The oven timer is done.')),
    );
    const [stored] = await recallsOf(env, id);
    expect(stored).toMatchObject({ status: 'done', run_count: 1, last_outcome: { status: 'completed' } });
    await page.setViewportSize(PHONE);
    await screenshot(page, 'phone-recall-done');
    await page.close();
  });

  it('says how late a recall ran when its session was busy at its time', async () => {
    const prompt = 'Send the user the late report.';
    env.fake.setDefault(
      recallModel({
        ask: 'Start the long job',
        first: [
          { name: 'schedule_recall', arguments: { prompt, when: { type: 'once', delay: '1s' } } },
          { name: 'slow_task', arguments: { job: 'long' } },
        ],
        scheduled: 'The long job is finished.',
        prompt,
        answer: 'Here is the late report.',
      }),
    );
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    await sendMessage(page, 'Start the long job and report later');
    await page.locator('[data-testid="tool-card"][data-tool="slow_task"][data-status="running"]').waitFor();
    await page
      .locator('[data-testid="tool-card"][data-tool="schedule_recall"][data-status="done"]')
      .waitFor();
    // The recall is due while the session is still answering: it waits, and starts late.
    const [recall] = await recallsOf(env, id);
    const due = Date.parse(recall?.next_run_at ?? '');
    expect(Number.isNaN(due)).toBe(false);
    await page.waitForTimeout(Math.max(0, due + 6500 - Date.now()));
    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'Here is the late report.');
    const badge = page.getByTestId('recall-badge');
    expect((await badge.textContent()) ?? '').toMatch(/ran \d+ s late/);

    await page.reload();
    await waitForText(page.getByTestId('assistant-message').last(), 'Here is the late report.');
    expect((await page.getByTestId('recall-badge').textContent()) ?? '').toMatch(/ran \d+ s late/);
    await page.close();
  });

  it('skips the next run of a recurring recall and cancels it from the panel', async () => {
    const prompt = [
      'Look at the greenhouse sensors: temperature, humidity and soil moisture of every bed,',
      'compare them with yesterday and warn the user about anything that drifted.',
      'Then water the beds that are dry.',
    ].join('\n');
    env.fake.setDefault(
      recallModel({
        ask: 'Watch the greenhouse',
        first: [{ name: 'schedule_recall', arguments: { prompt, when: { type: 'recurring', every: '1h' } } }],
        scheduled: 'I will look at the greenhouse every hour.',
        prompt,
        answer: 'All beds are fine.',
      }),
    );
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    await sendMessage(page, 'Watch the greenhouse for me every hour');
    await waitForText(page.getByTestId('assistant-message'), 'I will look at the greenhouse every hour.');
    await waitForIdle(page);

    const toggle = page.getByTestId('recalls-toggle');
    await page.locator('[data-testid="recalls-toggle"][data-active="1"]').waitFor();
    await toggle.click();
    const item = page.locator('[data-testid="recall"][data-status="active"]');
    await waitForText(item.getByTestId('recall-description'), 'every 1 hour');
    await waitForText(item.getByTestId('recall-next'), 'in 1 hour');
    // A long prompt is shortened, in full on hover and when expanded.
    const promptBox = item.getByTestId('recall-prompt');
    expect(await promptBox.getAttribute('title')).toBe(prompt);
    await item.getByRole('button', { name: 'Show all' }).click();
    expect(await promptBox.getAttribute('class')).toContain('expanded');
    await screenshot(page, 'laptop-recalls-panel');

    // Skip moves the next run on by one interval.
    const before = Date.parse((await item.getByTestId('recall-next').getAttribute('data-at')) ?? '');
    await item.getByTestId('recall-skip').click();
    await page
      .locator(`[data-testid="recall-next"]:not([data-at="${new Date(before).toISOString()}"])`)
      .waitFor();
    const after = Date.parse((await item.getByTestId('recall-next').getAttribute('data-at')) ?? '');
    expect(after - before).toBe(3_600_000);
    await waitForText(item.getByTestId('recall-next'), 'in 2 hours');

    // The phone shows the panel as a sheet under the header.
    const phone = await env.newPage(PHONE);
    await phone.goto(`${env.navi.url}/#/sessions/${id}`);
    await waitForText(phone.getByTestId('assistant-message'), 'I will look at the greenhouse every hour.');
    await phone.getByTestId('recalls-toggle').click();
    await phone.getByTestId('recall').waitFor();
    const sheet = await phone.getByTestId('recalls-panel').boundingBox();
    expect(sheet && sheet.x >= 0 && sheet.x + sheet.width <= PHONE.width).toBe(true);
    await screenshot(phone, 'phone-recalls-panel');
    await phone.close();

    // Cancel takes it out of the active ones.
    await item.getByTestId('recall-cancel').click();
    await page.locator('[data-testid="recall"][data-status="cancelled"]').waitFor();
    expect(await page.locator('[data-testid="recall"][data-status="active"]').count()).toBe(0);
    expect(await page.getByTestId('recall-skip').count()).toBe(0);
    expect(await toggle.getAttribute('data-active')).toBe('0');
    const [stored] = await recallsOf(env, id);
    expect(stored).toMatchObject({ status: 'cancelled', next_run_at: null, run_count: 0 });
    await page.close();
  });

  it('says plainly why a skip failed when the recall was cancelled elsewhere', async () => {
    const prompt = 'Remind the user to stretch.';
    env.fake.setDefault(
      recallModel({
        ask: 'Remind me to stretch',
        first: [{ name: 'schedule_recall', arguments: { prompt, when: { type: 'recurring', every: '2h' } } }],
        scheduled: 'I will remind you every two hours.',
        prompt,
        answer: 'Time to stretch.',
      }),
    );
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    await sendMessage(page, 'Remind me to stretch every two hours');
    await waitForText(page.getByTestId('assistant-message'), 'I will remind you every two hours.');
    await page.locator('[data-testid="recalls-toggle"][data-active="1"]').click();
    const item = page.locator('[data-testid="recall"][data-status="active"]');
    await item.waitFor();
    const recallId = (await item.getAttribute('data-recall-id')) ?? '';

    // Another client cancels it while this panel still shows it as active.
    const cancelled = await fetch(`${env.navi.url}/sessions/${id}/recalls/${recallId}`, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    await item.getByTestId('recall-skip').click();
    const failure = page.getByTestId('recall-failure');
    await waitForText(failure, 'could not be skipped');
    await waitForText(failure, 'already cancelled');
    // The list was fetched again and shows the recall as it is now.
    await page
      .locator(`[data-testid="recall"][data-recall-id="${recallId}"][data-status="cancelled"]`)
      .waitFor();
    // Escape closes the panel.
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('recalls-panel').count()).toBe(0);
    await page.close();
  });
});
