/**
 * The web client's chat in a real headless Chromium against the real server and the fake LLM:
 * streaming Markdown, thinking, tool cards, subagent nesting, stopping, the plan card, errors.
 */
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: chat', () => {
  const env = useWebEnv();

  it('streams an answer as sanitised Markdown with highlighted code that can be copied', async () => {
    const page = await env.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.navi.url });
    await openNewSession(env, page);
    env.fake.enqueue({
      text: 'Here is **bold** text.\n\n```python\nprint("hi")\n```\n\n<img src=x onerror="window.hacked=1">',
      chunkSize: 3,
    });
    await sendMessage(page, 'Show me some code');
    await waitForText(page.getByTestId('user-message'), 'Show me some code');
    const answer = page.locator('[data-testid="assistant-message"][data-streaming="false"]');
    await answer.waitFor();
    expect(await answer.locator('strong').textContent()).toBe('bold');
    expect(await answer.locator('.code-block .hljs-built_in').first().textContent()).toBe('print');
    expect(await answer.locator('img[onerror]').count()).toBe(0);
    expect(await page.evaluate(() => (window as { hacked?: number }).hacked)).toBeUndefined();
    await answer.getByRole('button', { name: 'Copy code' }).click();
    await waitForText(answer.locator('.copy-button'), 'Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('print("hi")');
    // The title comes from the first message and shows in the sidebar and the header.
    await waitForText(page.locator('.session-item.current'), 'Show me some code');
    await page.close();
  });

  it('shows text while it streams, locks the composer, and stops on request', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    env.fake.enqueue({
      text: 'Partial answer that would go on for a long time',
      chunkSize: 4,
      stallAfterChunks: 3,
    });
    await sendMessage(page, 'Tell me a long story');
    const streaming = page.locator('[data-testid="assistant-message"][data-streaming="true"]');
    await waitForText(streaming, 'Partial ans');
    expect(await page.getByTestId('composer').isDisabled()).toBe(true);
    await screenshot(page, 'laptop-light-streaming');
    await page.getByTestId('stop').click();
    await waitForText(page.getByTestId('notice'), 'Stopped');
    await page.getByTestId('interrupted').waitFor();
    await waitForIdle(page);
    // After a reload the saved partial answer is marked as interrupted.
    await page.reload();
    await page.locator('[data-testid="assistant-message"] [data-testid="interrupted"]').waitFor();
    await waitForText(page.getByTestId('assistant-message'), 'Partial ans');
    expect(page.url()).toContain(`#/sessions/${id}`);
    await page.close();
  });

  it('shows live thinking and collapses it when it is done', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({
      thinking: 'Hmm, let me weigh the options one by one',
      chunkSize: 4,
      stallAfterChunks: 2,
    });
    await sendMessage(page, 'Think hard');
    const live = page.locator('[data-testid="thinking"][data-done="false"]');
    await waitForText(live, 'Hmm, let');
    expect(await live.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true);
    await page.getByTestId('stop').click();
    await waitForIdle(page);

    env.fake.enqueue({ thinking: 'Considering the options carefully.', text: 'Decision made.' });
    await sendMessage(page, 'Decide now');
    await waitForText(
      page.locator('[data-testid="assistant-message"][data-streaming="false"]'),
      'Decision made.',
    );
    const done = page.locator('[data-testid="thinking"][data-done="true"]').last();
    expect(await done.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    await done.locator('summary').click();
    expect(await done.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true);
    await waitForText(done, 'Considering the options carefully.');
    await page.close();
  });

  it('turns a tool card from a spinner into its result, and nests subagent calls', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue(
      {
        thinking: 'The user wants a backup, so I call slow_task.',
        toolCalls: [{ name: 'slow_task', arguments: { job: 'backup' } }],
      },
      { text: 'The backup is **finished**.' },
    );
    await sendMessage(page, 'Run the backup');
    const card = page.locator('[data-testid="tool-card"][data-tool="slow_task"]');
    await card.and(page.locator('[data-status="running"]')).waitFor();
    expect(await card.locator('.spinner').count()).toBe(1);
    // The turn's reasoning (live, then turn_thinking) shows once, collapsed, above the card.
    const reasoning = page.locator('[data-testid="thinking"][data-done="true"]');
    await waitForText(reasoning, 'so I call slow_task');
    expect(await page.getByTestId('thinking').count()).toBe(1);
    expect(await reasoning.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    env.gate.open();
    await card.and(page.locator('[data-status="done"]')).waitFor();
    await waitForText(page.getByTestId('assistant-message').last(), 'The backup is finished.');
    await card.locator('.tool-head').click();
    await waitForText(card.getByTestId('tool-result'), 'finished backup');

    // spawn_agent runs a subagent whose calls arrive with is_subagent and nest under the card.
    env.gate.open();
    env.fake.enqueue(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Back up the photos' } }] },
      { toolCalls: [{ name: 'slow_task', arguments: { job: 'photos' } }] },
      { text: 'Photos are backed up.' },
      { text: 'Your helper backed up the photos.' },
    );
    await sendMessage(page, 'Ask a helper to back up the photos');
    await waitForText(page.getByTestId('assistant-message').last(), 'Your helper backed up the photos.');
    const spawn = page.locator('[data-testid="tool-card"][data-tool="spawn_agent"]');
    await spawn.and(page.locator('[data-status="done"]')).waitFor();
    await spawn
      .locator('[data-testid="subagent-calls"] [data-tool="slow_task"][data-status="done"]')
      .waitFor();
    await screenshot(page, 'laptop-light-tools');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'laptop-dark-tools');
    await page.close();
  });

  it('folds a long tool result and shows a profile switch as a quiet notice', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    await waitForText(page.getByTestId('active-profile'), 'Tester');
    env.fake.enqueue(
      { toolCalls: [{ name: 'long_report', arguments: {} }] },
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'planner' } }] },
      { text: 'Report read; the planner takes over.' },
    );
    await sendMessage(page, 'Read the report, then hand over to the planner');
    await waitForText(page.getByTestId('assistant-message').last(), 'the planner takes over');
    await waitForText(page.getByTestId('notice'), 'Switched to profile “Planner”');
    await waitForText(page.getByTestId('active-profile'), 'Planner');

    const card = page.locator('[data-testid="tool-card"][data-tool="long_report"]');
    await card.locator('.tool-head').click();
    const result = card.getByTestId('tool-result');
    expect(await result.textContent()).toContain('report line 1\n');
    expect(await result.textContent()).not.toContain('report line 400');
    await card.getByRole('button', { name: /Show all/ }).click();
    await waitForText(result, 'report line 400');
    await screenshot(page, 'laptop-light-long-result');
    await page.close();
  });

  it('shows a context compression as a quiet notice, and the meter what was kept, as a reload does', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    env.fake.enqueue({ text: 'First answer.' });
    await sendMessage(page, 'First question');
    await waitForText(page.getByTestId('assistant-message').last(), 'First answer.');
    // A turn that fills most of the window makes the agent summarise the older turn after it.
    env.fake.enqueue(
      { text: 'Second answer.', usage: { prompt: 7400, completion: 20 } },
      { text: 'Summary.' },
    );
    await sendMessage(page, 'Second question');
    await waitForText(page.getByTestId('assistant-message').last(), 'Second answer.');
    await waitForText(page.getByTestId('notice'), 'Context compressed');
    // The meter shows the server's estimate of what was kept: neither the 7.4k before the summary
    // nor 0, and the figure the session holds, so a reload shows the same.
    const meter = page.getByTestId('context-meter');
    const session = (await (await fetch(`${env.navi.url}/sessions/${id}`)).json()) as {
      context_token_count: number;
    };
    expect(session.context_token_count).toBeGreaterThan(0);
    expect(session.context_token_count).toBeLessThan(7400);
    await expect.poll(() => meter.getAttribute('aria-valuenow')).toBe(String(session.context_token_count));
    const shown = ((await meter.textContent()) ?? '').trim();
    expect(shown).toMatch(/^\S+ \/ 8\.2k$/);
    expect(shown).not.toMatch(/^0 \/|7\.4k/);
    await page.reload();
    await waitForText(page.getByTestId('assistant-message').last(), 'Second answer.');
    await expect.poll(async () => ((await meter.textContent()) ?? '').trim()).toBe(shown);
    await page.close();
  });

  it('shows the plan card of a planning profile, also after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page, 'planner');
    await waitForText(page.getByTestId('active-profile'), 'Planner');
    env.fake.enqueue(
      { text: '1. Read the question\n2. Answer it briefly' },
      { text: 'Here is the brief answer.' },
    );
    await sendMessage(page, 'Plan, then answer');
    await waitForText(page.getByTestId('plan-card'), 'Read the question');
    await waitForText(page.getByTestId('assistant-message').last(), 'Here is the brief answer.');
    await page.getByTestId('context-meter').waitFor();
    await page.reload();
    await waitForText(page.getByTestId('plan-card'), 'Answer it briefly');
    // The meter knows the window before any run of this page ends (OLLAMA_NUM_CTX is 8192).
    await waitForText(page.getByTestId('context-meter'), '/ 8.2k');
    await waitForText(page.getByTestId('assistant-message').last(), 'Here is the brief answer.');
    await page.close();
  });

  it('shows an LLM failure plainly, with what to do', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ httpError: { status: 500, body: 'model exploded' } });
    await sendMessage(page, 'Hello?');
    // A failed run is a failed turn in the conversation, with Retry (test/e2e/message-actions.test.ts).
    const failed = page.getByTestId('failed-turn');
    await failed.waitFor();
    expect(await failed.textContent()).toMatch(/send your message again/);
    await waitForIdle(page);
    await page.close();
  });
});
