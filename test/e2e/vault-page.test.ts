/**
 * The Vault page and the composer's offer to store a pasted secret, in a real headless Chromium
 * against the real server with a real vault: a secret created in the page is listed masked,
 * revealed on a click and hidden again, and its creation is in the audit log; a token typed into
 * the composer is stored through the offer, only its reference reaches the model, a command uses
 * it by reference and the audit log shows that use; a locked
 * vault shows how to unlock it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNavi, tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { chatRequests, lastUserText } from '../support/rest.js';
import {
  openNewSession,
  PHONE,
  pairPage,
  screenshot,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const PASSWORD = 'Plum-Orbit-7731-quiet';
/** Built at run time, so that no secret scanner mistakes the test for a leak. */
const GITHUB_TOKEN = `ghp_${'Xq7Lm2Pz9Rt4Vb8Nc1Kd6Hf3Jg5Sw0Ye7Ua2'}`;

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: the Vault page', () => {
  const env = useWebEnv();

  it('creates a secret, lists it masked, reveals and hides it, and shows the creation in the audit log', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await page.getByTestId('nav-vault').click();
    await page.waitForURL(/#\/vault$/);
    await waitForText(page.getByTestId('vault-state'), 'Unlocked');
    await page.getByTestId('vault-empty').waitFor();

    await page.getByTestId('vault-new').click();
    const dialog = page.getByTestId('secret-dialog');
    await dialog.getByTestId('secret-name').fill('Home router');
    await dialog.getByTestId('secret-type').selectOption('password');
    await dialog.getByTestId('secret-tags').fill('home, network');
    const first = dialog.getByTestId('secret-field').first();
    await first.getByTestId('field-name').fill('password');
    await first.getByTestId('field-value').fill(PASSWORD);
    // What is typed into a secret field is dotted out.
    expect(await first.getByTestId('field-value').getAttribute('type')).toBe('password');
    await dialog.getByTestId('add-field').click();
    const second = dialog.getByTestId('secret-field').nth(1);
    await second.getByTestId('field-name').fill('username');
    await second.getByTestId('field-secret').uncheck();
    await second.getByTestId('field-value').fill('admin');
    await screenshot(page, 'laptop-vault-new-secret');
    await page.getByTestId('secret-save').click();

    const item = page.getByTestId('secret').filter({ hasText: 'Home router' });
    await item.waitFor();
    const id = (await item.getAttribute('data-secret-id')) ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const password = item.locator('[data-field="password"]');
    expect(await password.getByTestId('field-shown-value').textContent()).toBe('••••••••');
    expect(await password.getByTestId('field-reference').textContent()).toBe(`{{secret:${id}.password}}`);
    expect(await item.locator('[data-field="username"]').getByTestId('field-shown-value').textContent()).toBe(
      'admin',
    );
    expect(await page.content()).not.toContain(PASSWORD);
    await screenshot(page, 'laptop-vault-list');

    // Revealed on an explicit click only, and hidden again.
    await password.getByTestId('field-reveal').click();
    await waitForText(password.getByTestId('field-shown-value'), PASSWORD);
    await password.getByTestId('field-hide').click();
    await waitForText(password.getByTestId('field-shown-value'), '••••••••');
    expect(await page.content()).not.toContain(PASSWORD);

    // Search and filters.
    await page.getByTestId('vault-search').fill('nothing like it');
    await page.getByTestId('vault-empty').waitFor();
    await page.getByTestId('vault-search').fill('router');
    await item.waitFor();
    await page.getByTestId('vault-filter-type').selectOption('ssh_key');
    await page.getByTestId('vault-empty').waitFor();
    await page.getByTestId('vault-filter-type').selectOption('');
    await item.waitFor();

    await page.getByTestId('vault-tab-audit').click();
    const entries = page.getByTestId('audit-entry');
    await entries.nth(1).waitFor();
    expect(await entries.nth(0).getAttribute('data-action')).toBe('reveal');
    expect(await entries.nth(1).getAttribute('data-action')).toBe('create');
    await waitForText(entries.nth(1).getByTestId('audit-secret'), 'Home router');
    await waitForText(entries.nth(1).getByTestId('audit-actor'), 'You');
    await screenshot(page, 'laptop-vault-audit');
  });

  it('archives and restores a secret from the page, on a phone', async () => {
    const page = await env.newPage(PHONE);
    await pairPage(env, page);
    await page.goto(`${env.navi.url}/#/vault`);
    const item = page.getByTestId('secret').filter({ hasText: 'Home router' });
    await item.waitFor();
    await screenshot(page, 'phone-vault-list');
    await item.getByTestId('secret-archive').click();
    await page.getByTestId('vault-empty').waitFor();
    await page.getByTestId('vault-filter-status').selectOption('archived');
    await waitForText(item.getByTestId('secret-status'), 'Archived');
    await item.getByTestId('secret-restore').click();
    await page.getByTestId('vault-empty').waitFor();
    await page.getByTestId('vault-filter-status').selectOption('');
    await waitForText(item.getByTestId('secret-status'), 'Actual');
  });

  it('offers to store a token typed into the composer, and sends only its reference', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await openNewSession(env, page);
    const box = page.getByTestId('composer');

    // An ordinary message brings no offer; a token does, and keeping it as text dismisses it.
    await box.fill('Please check commit 6b55f4af515394917f378dad78f439d05e44c916 for me');
    expect(await page.getByTestId('secret-offer').count()).toBe(0);
    await box.fill(`log in with token ${GITHUB_TOKEN} please`);
    await waitForText(
      page.getByTestId('secret-offer'),
      'This looks like a password or key. Store it in the vault instead?',
    );
    await screenshot(page, 'laptop-composer-secret-offer');
    await page.getByTestId('secret-offer-keep').click();
    expect(await page.getByTestId('secret-offer').count()).toBe(0);
    expect(await box.inputValue()).toContain(GITHUB_TOKEN);

    // A different value brings the offer again; accepting opens the dialog prefilled.
    await box.fill(`use ${GITHUB_TOKEN.slice(0, -1)}Z to push`);
    await page.getByTestId('secret-offer-store').click();
    const dialog = page.getByTestId('secret-dialog');
    expect(await dialog.getByTestId('secret-name').inputValue()).toBe('GitHub token');
    expect(await dialog.getByTestId('secret-type').inputValue()).toBe('api_token');
    expect(await dialog.getByTestId('field-name').inputValue()).toBe('token');
    await dialog.getByTestId('secret-name').fill('GitHub push token');
    await page.getByTestId('secret-save').click();
    await page.getByTestId('secret-note').waitFor();

    const text = await box.inputValue();
    const match = /^use (\{\{secret:([0-9a-f-]{36})\.token\}\}) to push$/.exec(text);
    expect(match, text).not.toBeNull();
    const [, reference, id] = match ?? [];
    const stored = env.navi.services.vault.get(id ?? '');
    expect(stored.name).toBe('GitHub push token');

    // The model uses it by reference: the command gets the value, everyone else the mask.
    env.fake.enqueue(
      {
        toolCalls: [
          { id: 'p1', name: 'terminal', arguments: { command: `echo "pushing with ${reference}"` } },
        ],
      },
      { text: 'Pushed.' },
    );
    await box.press('Enter');
    // Without a sandbox, terminal asks first: the prompt shows the reference, not the value.
    const prompt = page.getByTestId('tool-confirm');
    await waitForText(prompt, reference ?? '');
    expect(await prompt.textContent()).not.toContain(GITHUB_TOKEN.slice(4, 20));
    await prompt.getByTestId('approve').click();
    await waitForIdle(page);
    const chats = chatRequests(env.fake);
    const sent = lastUserText(chats.at(-2));
    expect(sent).toContain(reference);
    const seen = JSON.stringify(chats.at(-1)?.body.messages?.filter((m) => m.role === 'tool'));
    expect(seen).toContain('pushing with [secret hidden: GitHub push token.token]');
    for (const request of chats)
      expect(JSON.stringify(request.body)).not.toContain(GITHUB_TOKEN.slice(4, 20));
    expect(await page.content()).not.toContain(GITHUB_TOKEN.slice(4, 20));

    // The use is in the audit log the page shows, with the tool that used it.
    await page.getByTestId('nav-vault').click();
    await page.getByTestId('vault-tab-audit').click();
    const use = page.getByTestId('audit-entry').filter({ hasText: 'GitHub push token' }).first();
    await use.waitFor();
    expect(await use.getAttribute('data-action')).toBe('use');
    expect(await use.textContent()).toContain('terminal');
    await screenshot(page, 'laptop-vault-audit-use');
  });

  it('shows why the vault is locked and how to unlock it', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'not-a-key'));
    const locked = await startNavi({ dir, settings: { GNEXUS_KEY_FILE: join(dir, 'not-a-key') } });
    try {
      const page = await env.newPage();
      await page.goto(`${locked.url}/#/vault`);
      const banner = page.getByTestId('vault-locked');
      await waitForText(banner, 'The vault is locked');
      await waitForText(banner, 'GNEXUS_MASTER_KEY');
      await waitForText(page.getByTestId('vault-state'), 'Locked');
      expect(await page.getByTestId('vault-new').isDisabled()).toBe(true);
      await screenshot(page, 'laptop-vault-locked');
    } finally {
      await locked.close();
    }
  });
});
