/**
 * Accessibility of every main screen of the web client, checked by axe-core in a real headless
 * Chromium against the real server and the fake LLM, in the light and the dark theme: the chat
 * (plan card, thinking, tool cards, highlighted code, a failed turn, an approval request, the
 * composer, the profile and model menus, the message editor, search results, the shortcuts
 * help), the welcome screen, the sidebar drawer on a phone, the new-chat dialog, the settings
 * page with its memory, tools, MCP and profiles pages, the setup screen (chosen from the settings
 * and on a first run) with the model-unreachable banner, and the vault. A screen fails on any
 * violation of impact serious or critical; the message names the rule, the elements and the fix.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import { checkAccessibility } from './axe-check.js';
import {
  mcpServersDir,
  openNewSession,
  PHONE,
  pairPage,
  sendMessage,
  useWebEnv,
  useWebEnvWithoutModel,
  waitForIdle,
  waitForText,
} from './web-harness.js';

// One MCP server that runs and one that waits for approval, so the MCP page shows both kinds of card.
const mcpDir = mcpServersDir('navi-e2e-a11y-mcp-');

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: accessibility (axe-core)', () => {
  const env = useWebEnv({ settings: { MCP_SERVERS_DIR: mcpDir } });

  /**
   * Fails the test with axe's findings when the page, as it is now, breaks a serious or critical
   * rule; the test goes on, so every screen it visits is reported.
   */
  async function expectAccessible(page: Page, screen: string): Promise<void> {
    expect.soft(await checkAccessibility(page, screen)).toBe('');
  }

  /** A paired page at one of the client's own addresses. */
  async function pairedPageAt(hash: string, viewport?: { width: number; height: number }): Promise<Page> {
    const page = await env.newPage(viewport);
    await pairPage(env, page);
    await page.goto(`${env.navi.url}/${hash}`);
    return page;
  }

  it('the chat: plan card, thinking, tool card, code, a failed turn and the composer', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await openNewSession(env, page, 'planner');
    env.fake.enqueue(
      { text: '1. Read the report\n2. Answer briefly' },
      {
        thinking: 'The report has what I need, so I read it first.',
        toolCalls: [{ name: 'long_report', arguments: {} }],
      },
      {
        text: [
          'The report says **all is well**. A quick check, with `size` in [the docs](https://example.org):',
          '```python\n# every token colour of the highlighter\nsize = 42\nprint("ok", size, True)\n```',
          '| item | state |\n|---|---|\n| disk | fine |',
        ].join('\n\n'),
      },
    );
    await sendMessage(page, 'Read the report and tell me how things are');
    await waitForText(page.getByTestId('plan-card'), 'Read the report');
    await waitForText(page.getByTestId('assistant-message').last(), 'all is well');
    await waitForIdle(page);
    // The LLM server answers with HTTP 500: the turn fails and says what to do.
    env.fake.setDefault(undefined);
    await sendMessage(page, 'And the backups?');
    await page.getByTestId('failed-turn').waitFor();
    await waitForIdle(page);
    // Open the collapsed parts, so what they hold is checked too.
    await page.locator('[data-testid="thinking"] summary').first().click();
    const card = page.locator('[data-testid="tool-card"][data-tool="long_report"]');
    await card.locator('.tool-head').click();
    await card.getByTestId('tool-result').waitFor();
    await page.getByTestId('composer').fill('A draft that is not sent yet');
    await expectAccessible(page, 'chat');
    await page.close();
  });

  it('the chat: a tool call that waits for approval', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await openNewSession(env, page);
    env.fake.enqueue(
      { toolCalls: [{ name: 'dangerous_op', arguments: { what: 'restart the router' } }] },
      { text: 'Not restarted.' },
    );
    await sendMessage(page, 'Restart the router');
    await waitForText(page.getByTestId('tool-confirm'), 'restart the router');
    await expectAccessible(page, 'approval request');
    await page.getByTestId('tool-confirm').getByTestId('deny').click();
    await waitForText(page.getByTestId('assistant-message').last(), 'Not restarted.');
    await page.close();
  });

  it("the chat's menus, message editor and shortcuts help", async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'The ferry leaves at noon.' });
    await sendMessage(page, 'When does the Zanzibar ferry leave?');
    await waitForText(page.getByTestId('assistant-message').last(), 'leaves at noon');
    await waitForIdle(page);

    await page.getByTestId('profile-picker-toggle').click();
    await page.getByTestId('profile-option').first().waitFor();
    await expectAccessible(page, 'profile menu');
    await page.keyboard.press('Escape');
    await page.getByTestId('profile-menu').waitFor({ state: 'detached' });

    await page.getByTestId('model-picker-toggle').click();
    await page.locator('#model-menu [role="menuitemradio"]').first().waitFor();
    await expectAccessible(page, 'model menu');
    await page.keyboard.press('Escape');
    await page.getByTestId('model-picker').waitFor({ state: 'detached' });

    await page.getByTestId('edit-message').first().click();
    await page.getByTestId('edit-box').waitFor();
    await expectAccessible(page, 'message editor');
    await page.getByTestId('edit-cancel').click();

    await page.locator('body').click({ position: { x: 1, y: 1 } });
    await page.keyboard.press('?');
    await page.getByTestId('shortcuts-help').waitFor();
    await expectAccessible(page, 'shortcuts help');
    await page.close();
  });

  it("the sidebar's search results", async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'The ferry leaves at noon.' });
    await sendMessage(page, 'When does the Zanzibar ferry leave?');
    await waitForIdle(page);
    await page.locator('#session-search').fill('zanzibar');
    await page.getByTestId('search-hit').first().waitFor();
    await expectAccessible(page, 'search results');
    await page.close();
  });

  it('the welcome screen', async () => {
    const page = await pairedPageAt('');
    await page.getByTestId('welcome-new').waitFor();
    await expectAccessible(page, 'welcome screen');
    await page.close();
  });

  it('the new-chat dialog', async () => {
    const page = await pairedPageAt('');
    await page.getByTestId('new-session').click();
    await page.getByTestId('create-session').waitFor();
    await expectAccessible(page, 'new-chat dialog');
    await page.close();
  });

  it('the sidebar open on a phone', async () => {
    const page = await env.newPage(PHONE);
    await pairPage(env, page);
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'A short answer.' });
    await sendMessage(page, 'A chat to list in the sidebar');
    await waitForText(page.getByTestId('assistant-message').last(), 'A short answer.');
    await page.getByRole('button', { name: 'Show conversations' }).click();
    await page.locator('.sidebar').waitFor({ state: 'visible' });
    await expectAccessible(page, 'sidebar drawer (phone)');
    await page.close();
  });

  it('the settings page', async () => {
    const page = await pairedPageAt('#/settings');
    await page.getByTestId('settings-page').waitFor();
    await page.getByTestId('default-model-name').waitFor();
    await expectAccessible(page, 'settings page');
    await page.close();
  });

  it('the setup screen, each of its three ways', async () => {
    const page = await pairedPageAt('#/setup');
    await page.getByTestId('setup-screen').waitFor();
    for (const way of ['ollama', 'openai', 'llamacpp']) {
      await page.getByTestId(`setup-tab-${way}`).click();
      await page.getByTestId(`setup-tab-${way}`).and(page.locator('[aria-selected="true"]')).waitFor();
      await expectAccessible(page, `setup screen (${way})`);
    }
    await page.close();
  });

  it('the vault page and its new-secret dialog', async () => {
    const page = await pairedPageAt('#/vault');
    await waitForText(page.getByTestId('vault-state'), 'Unlocked');
    await page.getByTestId('vault-empty').waitFor();
    await expectAccessible(page, 'vault page');
    await page.getByTestId('vault-new').click();
    await page.getByTestId('secret-dialog').waitFor();
    await expectAccessible(page, 'new-secret dialog');
    await page.close();
  });

  it('the memory page', async () => {
    const store = env.navi.services.memory?.store;
    if (!store) throw new Error('memory is not enabled');
    await store.upsert({ category: 'food', key: 'favourite_drink', value: 'green tea' });
    await store.upsert({ category: 'home', key: 'city', value: 'Lisbon' });
    await store.setSummary('The person drinks green tea in Lisbon.');
    const page = await pairedPageAt('#/memory');
    await waitForText(page.getByTestId('memory-summary'), 'green tea');
    await page.locator('[data-testid="fact"][data-key="city"]').waitFor();
    await expectAccessible(page, 'memory page');
    await page.close();
  });

  it('the tools page', async () => {
    const page = await pairedPageAt('#/tools');
    await page.locator('[data-testid="tool-row"][data-tool="dangerous_op"]').waitFor();
    await expectAccessible(page, 'tools page');
    await page.close();
  });

  it('the MCP page', async () => {
    const page = await pairedPageAt('#/mcp');
    await page.locator('[data-testid="mcp-server"][data-server="fixture"][data-state="ready"]').waitFor();
    await page.locator('[data-testid="mcp-server"][data-server="helper"]').waitFor();
    await expectAccessible(page, 'MCP page');
    await page.close();
  });

  it('the profiles page and its editor', async () => {
    const page = await pairedPageAt('#/profiles');
    await page.getByTestId('profile-card').first().waitFor();
    await expectAccessible(page, 'profiles page');
    await page.getByTestId('profile-edit').first().click();
    await page.getByTestId('profile-editor').waitFor();
    await expectAccessible(page, 'profile editor');
    await page.close();
  });
});

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: accessibility (axe-core) while no model answers',
  () => {
    const { env } = useWebEnvWithoutModel();

    it('the setup screen of a first run, and the banner over the chat', async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      const id = await env.navi.createSession();
      await page.goto(`${env.navi.url}/#/sessions/${id}`);
      await page.getByTestId('setup-screen').waitFor();
      await page.getByTestId('setup-reason').waitFor();
      expect.soft(await checkAccessibility(page, 'setup screen (first run)')).toBe('');
      await page.getByTestId('setup-skip-link').click();
      await page.getByTestId('llm-banner').waitFor();
      await page.locator('[data-testid="model-state"][data-state="unreachable"]').waitFor();
      expect.soft(await checkAccessibility(page, 'chat under the model-unreachable banner')).toBe('');
      await page.close();
    });
  },
);
