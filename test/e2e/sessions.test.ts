/**
 * The sessions sidebar, hash routing, the phone drawer, themes, and reconnection after a server
 * restart, in a real headless Chromium against the real server and the fake LLM.
 */
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  PHONE,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: sessions and connection', () => {
  const env = useWebEnv();

  it('creates sessions with a profile, renames, pins and deletes them, with the session in the URL', async () => {
    const page = await env.newPage();
    await page.goto(env.navi.url);
    await page.getByTestId('welcome-new').waitFor();
    await screenshot(page, 'laptop-light-welcome');

    await page.getByTestId('new-session').click();
    await page.getByLabel('Planner').check();
    await screenshot(page, 'laptop-light-new-session');
    await page.getByTestId('create-session').click();
    await page.waitForURL(/#\/sessions\/[0-9a-f-]+$/);
    const firstId = page.url().split('/').at(-1) ?? '';
    await waitForText(page.getByTestId('active-profile'), 'Planner');
    env.fake.enqueue({ text: 'No plan needed' }, { text: 'First answer.' });
    await sendMessage(page, 'Alpha conversation');
    await waitForText(page.getByTestId('assistant-message').last(), 'First answer.');

    await page.getByTestId('new-session').click();
    await page.getByLabel('Tester').check();
    await page.getByTestId('create-session').click();
    await page.waitForURL((url) => !url.hash.endsWith(firstId) && url.hash.startsWith('#/sessions/'));
    const secondId = page.url().split('/').at(-1) ?? '';
    await sendMessage(page, 'Beta conversation');
    await waitForIdle(page);
    const items = page.locator('.session-item');
    await waitForText(items.first(), 'Beta conversation');

    // Back goes to the first session, forward to the second.
    await page.goBack();
    await waitForText(page.getByTestId('chat-title'), 'Alpha conversation');
    await page.goForward();
    await waitForText(page.getByTestId('chat-title'), 'Beta conversation');

    // Pinning moves Alpha to the top.
    const alpha = page.locator(`.session-item[data-session-id="${firstId}"]`);
    await alpha.hover();
    await alpha.locator('[data-action="pin"]').click();
    await waitForText(items.first(), 'Alpha conversation');
    expect(await items.first().getAttribute('class')).toContain('pinned');

    // Rename.
    await alpha.hover();
    await alpha.locator('[data-action="rename"]').click();
    const input = page.locator(`[data-rename="${firstId}"]`);
    await input.fill('Renamed alpha');
    await input.press('Enter');
    await waitForText(items.first(), 'Renamed alpha');
    const list = await (await fetch(`${env.navi.url}/sessions`)).json();
    expect(list.find((s: { id: string }) => s.id === firstId)).toMatchObject({
      title: 'Renamed alpha',
      pinned: true,
    });

    // Delete asks first; cancelling keeps it, confirming removes it and leaves its URL.
    const beta = page.locator(`.session-item[data-session-id="${secondId}"]`);
    await beta.hover();
    await beta.locator('[data-action="delete"]').click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await beta.count()).toBe(1);
    await beta.hover();
    await beta.locator('[data-action="delete"]').click();
    await page.getByTestId('confirm-delete').click();
    await beta.waitFor({ state: 'detached' });
    await page.getByTestId('welcome-new').waitFor();
    expect((await fetch(`${env.navi.url}/sessions/${secondId}`)).status).toBe(404);
    await page.close();
  });

  it('uses a drawer for the sessions on a phone, in light and dark', async () => {
    const page = await env.newPage(PHONE);
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Here is a list:\n\n- one\n- two\n\n```bash\necho hello\n```' });
    await sendMessage(page, 'Phone chat');
    await waitForText(page.getByTestId('assistant-message').last(), 'echo hello');
    await screenshot(page, 'phone-light-chat');
    expect(await page.locator('.sidebar').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Show conversations' }).click();
    await page.locator('.sidebar').waitFor({ state: 'visible' });
    await screenshot(page, 'phone-light-drawer');
    await page.keyboard.press('Escape');
    await page.locator('.sidebar').waitFor({ state: 'hidden' });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'phone-dark-chat');
    await page.getByRole('button', { name: 'Show conversations' }).click();
    await page.locator('.sidebar').waitFor({ state: 'visible' });
    await screenshot(page, 'phone-dark-drawer');
    await page.close();
  });

  it('catches up on the run in progress when its connection drops and comes back', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue(
      { toolCalls: [{ name: 'slow_task', arguments: { job: 'archive' } }] },
      { text: 'Archived everything.' },
    );
    await sendMessage(page, 'Archive now');
    const card = page.locator('[data-testid="tool-card"][data-tool="slow_task"]');
    await card.and(page.locator('[data-status="running"]')).waitFor();
    // Remember in the page whether the indicator ever left "open", so a quick reconnection
    // cannot slip past the test.
    await page.evaluate(() => {
      const flags = window as { dropped?: boolean };
      flags.dropped = false;
      new MutationObserver(() => {
        const state = document.querySelector('[data-testid="connection"]')?.getAttribute('data-state');
        if (state !== 'open') flags.dropped = true;
      }).observe(document.body, { subtree: true, attributes: true, childList: true });
    });
    // The server stays up and the run goes on; only the sockets are cut.
    for (const client of env.navi.app.websocketServer.clients) client.terminate();
    await page.waitForFunction(() => (window as { dropped?: boolean }).dropped === true);
    await page.locator('[data-testid="connection"][data-state="open"]').waitFor();
    await card.and(page.locator('[data-status="running"]')).waitFor();
    expect(await page.getByTestId('composer').isDisabled()).toBe(true);
    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'Archived everything.');
    await waitForIdle(page);
    expect(await card.count()).toBe(1);
    expect(await card.getAttribute('data-status')).toBe('done');
    expect(await page.getByTestId('user-message').filter({ hasText: 'Archive now' }).count()).toBe(1);
    await page.close();
  });

  it('reconnects by itself after the server restarts, and catches up on a run in progress', async () => {
    const page = await env.newPage();
    await page.emulateMedia({ colorScheme: 'dark' });
    const id = await openNewSession(env, page);
    env.fake.enqueue({ text: 'Before the restart.' });
    await sendMessage(page, 'Hello before');
    await waitForText(page.getByTestId('assistant-message').last(), 'Before the restart.');
    await screenshot(page, 'laptop-dark-chat');

    await env.restart(async () => {
      await page.locator('[data-testid="connection"]:not([data-state="open"])').waitFor();
    });
    await page.locator('[data-testid="connection"][data-state="open"]').waitFor({ timeout: 30_000 });
    // The chat was reloaded from the same database and still works.
    await waitForText(page.getByTestId('assistant-message').last(), 'Before the restart.');
    env.fake.enqueue({ text: 'After the restart.' });
    await sendMessage(page, 'Hello after');
    await waitForText(page.getByTestId('assistant-message').last(), 'After the restart.');

    // A second page that joins during a run sees the run so far, once, and its end.
    env.fake.enqueue({ toolCalls: [{ name: 'slow_task', arguments: { job: 'sync' } }] }, { text: 'Synced.' });
    await sendMessage(page, 'Sync now');
    await page.locator('[data-testid="tool-card"][data-tool="slow_task"][data-status="running"]').waitFor();
    const other = await env.newPage();
    await other.goto(`${env.navi.url}/#/sessions/${id}`);
    await other.locator('[data-testid="tool-card"][data-tool="slow_task"][data-status="running"]').waitFor();
    env.gate.open();
    await waitForText(other.getByTestId('assistant-message').last(), 'Synced.');
    await waitForText(page.getByTestId('assistant-message').last(), 'Synced.');
    expect(await other.locator('[data-testid="tool-card"][data-tool="slow_task"]').count()).toBe(1);
    expect(await other.getByTestId('user-message').filter({ hasText: 'Sync now' }).count()).toBe(1);
    expect(await page.locator('[data-testid="tool-card"][data-tool="slow_task"]').count()).toBe(1);
    await other.close();
    await page.close();
  });
});
