/**
 * Profiles in a real headless Chromium against the real server: switching the conversation's
 * profile from the header (every open tab follows, the next run gets the new profile's prompt,
 * and the picker waits while Navi answers), the descriptions in the new-chat dialog, and the
 * Profiles page: a profile's JSON edited with a broken text and a wrong field shown next to the
 * editor, unsaved changes guarded, a browser without consent told to pair, and a valid save that
 * lands in the profile's file and in the page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  PHONE,
  pairPage,
  screenshot,
  sendMessage,
  useWebEnv,
  type WebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const PLANNER = {
  id: 'planner',
  name: 'Planner',
  description: 'Breaks a task into steps before doing it.',
  system_prompt: 'PROMPT-OF-THE-PLANNER: plan carefully.',
  enabled_tools: ['*'],
  max_iterations: 10,
  planning_enabled: false,
};

function systemText(r: RecordedRequest | undefined): string {
  const first = r?.body.messages?.[0];
  return first?.role === 'system' ? String(first.content) : '';
}

/** Saves the planner profile through the REST API, as a paired client. */
async function savePlanner(env: WebEnv): Promise<void> {
  const res = await fetch(`${env.navi.url}/agents/profiles/planner`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', cookie: await env.navi.pair() },
    body: JSON.stringify({ profile: PLANNER }),
  });
  if (res.status !== 200) throw new Error(`PUT planner answered ${res.status}: ${await res.text()}`);
}

async function activeProfile(page: Page): Promise<string> {
  return ((await page.getByTestId('active-profile').textContent()) ?? '').trim();
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: profiles', () => {
  const env = useWebEnv();

  it('switches the profile from the header: every tab follows and the next run uses its prompt', async () => {
    await savePlanner(env);
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    const other = await env.newPage();
    await other.goto(`${env.navi.url}/#/sessions/${id}`);
    await other.getByTestId('connection').and(other.locator('[data-state="open"]')).waitFor();
    await waitForText(page.getByTestId('active-profile'), 'Tester');
    await waitForText(other.getByTestId('active-profile'), 'Tester');

    await page.getByTestId('profile-picker-toggle').click();
    const option = (profile: string) =>
      page.locator(`[data-testid="profile-option"][data-profile-id="${profile}"]`);
    await option('planner').waitFor();
    expect(await option('tester').getAttribute('aria-checked')).toBe('true');
    expect(await option('planner').textContent()).toContain('Breaks a task into steps before doing it.');
    // The checked profile has the focus; the arrows move, Enter chooses.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-profile-id')))
      .toBe('tester');
    await screenshot(page, 'laptop-profile-picker');
    await page.keyboard.press('ArrowUp');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-profile-id')))
      .toBe('planner');
    await page.keyboard.press('Enter');

    await page.locator('[data-testid="profile-picker"][data-profile-id="planner"]').waitFor();
    expect(await activeProfile(page)).toBe('Planner');
    expect(await page.getByTestId('profile-menu').count()).toBe(0);
    await waitForText(page.getByTestId('notice'), 'Switched to profile “Planner”');
    // The other tab hears the server's profile_switched and follows.
    await other.locator('[data-testid="profile-picker"][data-profile-id="planner"]').waitFor();
    await waitForText(other.getByTestId('notice'), 'Switched to profile “Planner”');

    env.fake.enqueue({ text: 'Planning as asked.' });
    await sendMessage(page, 'Who are you now?');
    await waitForText(page.getByTestId('assistant-message').last(), 'Planning as asked.');
    const chats = env.fake.requests.filter((r) => r.kind === 'chat');
    expect(chats).toHaveLength(1);
    expect(systemText(chats[0])).toContain('PROMPT-OF-THE-PLANNER');
    expect(systemText(chats[0])).not.toContain('You are a test assistant.');
    await waitForIdle(page);

    // A reload shows the session's profile as the server keeps it.
    await page.reload();
    await page.locator('[data-testid="profile-picker"][data-profile-id="planner"]').waitFor();
    await other.close();
    await page.close();
  });

  it('does not open the picker while Navi answers, and opens it again afterwards (on a phone)', async () => {
    const page = await env.newPage(PHONE);
    await openNewSession(env, page);
    env.fake.enqueue(
      { toolCalls: [{ name: 'slow_task', arguments: { job: 'wait' } }] },
      { text: 'Done waiting.' },
    );
    await sendMessage(page, 'Wait for the slow task');
    await page.locator('[data-testid="tool-card"][data-tool="slow_task"]').waitFor();
    const toggle = page.getByTestId('profile-picker-toggle');
    expect(await toggle.getAttribute('aria-disabled')).toBe('true');
    expect(await toggle.getAttribute('title')).toContain('once Navi has finished answering');
    // Playwright waits for an aria-disabled button to become enabled: the click is forced, as a
    // person's tap would be.
    await toggle.click({ force: true });
    expect(await page.getByTestId('profile-menu').count()).toBe(0);

    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'Done waiting.');
    await waitForIdle(page);
    await toggle.click();
    await page.getByTestId('profile-menu').waitFor();
    const box = await page.getByTestId('profile-menu').boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
    await screenshot(page, 'phone-profile-picker');
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('profile-menu').count()).toBe(0);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('profile-picker-toggle');
    await page.close();
  });

  it('edits a profile on the Profiles page: JSON and field errors shown, leaving guarded, then saved', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    await page.getByTestId('nav-settings').click();
    await page.waitForURL(/#\/settings$/);
    await page.getByTestId('open-profiles').click();
    await page.waitForURL(/#\/profiles$/);
    const card = page.locator('[data-testid="profile-card"][data-profile-id="tester"]');
    await waitForText(card.getByTestId('profile-tools'), 'all tools');
    expect(await card.getByTestId('profile-planning').textContent()).toContain('answers directly');
    expect(await card.getByTestId('profile-model').textContent()).toContain('test-model');

    await card.getByTestId('profile-edit').click();
    const editor = card.getByTestId('profile-json');
    await expect.poll(() => editor.inputValue()).toContain('"name": "Tester"');
    const original = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    const problem = card.getByTestId('profile-problem');
    const save = card.getByTestId('profile-save');
    expect(await save.isDisabled()).toBe(true);

    // Broken JSON: said at once, with where, and not sent.
    await editor.fill('{\n  "id": "tester",\n  "name": "Tester"\n  "temperature": 0.2\n}');
    await waitForText(problem, 'not valid JSON');
    expect(await problem.textContent()).toMatch(/line 4/);
    expect(await save.isDisabled()).toBe(true);

    // Valid JSON, a field the schema refuses: the server's words, next to the editor.
    await editor.fill(JSON.stringify({ ...original, temperature: 'hot' }, null, 2));
    expect(await problem.count()).toBe(0);
    await save.click();
    await waitForText(problem, 'temperature: must be a number, not text');
    expect(await problem.textContent()).toContain('Not saved');
    await screenshot(page, 'laptop-profile-editor-error');

    // Leaving with unsaved changes asks; staying keeps the page and the text.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByTestId('back-to-settings').click();
    await expect.poll(() => asked).toEqual(['This profile has unsaved changes. Leave them and lose them?']);
    await expect.poll(() => page.url()).toMatch(/#\/profiles$/);
    expect(await editor.inputValue()).toContain('"hot"');

    const edited = { ...original, description: 'Tests things in the browser.', temperature: 0.2 };
    await editor.fill(JSON.stringify(edited, null, 2));
    await save.click();
    await card.getByTestId('profile-saved').waitFor();
    await waitForText(card.getByTestId('profile-card-description'), 'Tests things in the browser.');
    const file = JSON.parse(readFileSync(join(env.navi.dir, 'profiles', 'tester.json'), 'utf8'));
    expect(file).toEqual(edited);
    await screenshot(page, 'laptop-profiles-page');

    // Saved: leaving asks nothing any more.
    await page.getByTestId('back-to-settings').click();
    await page.waitForURL(/#\/settings$/);

    // The new-chat dialog tells the profiles apart by their descriptions.
    await page.getByTestId('new-session').click();
    await waitForText(page.getByTestId('profile-description'), 'Tests things in the browser.');
    await page.close();
  });

  it('tells a browser that is not paired to pair before it may save a profile', async () => {
    const page = await env.newPage();
    await page.goto(`${env.navi.url}/#/profiles`);
    const card = page.locator('[data-testid="profile-card"][data-profile-id="planner"]');
    await card.getByTestId('profile-edit').click();
    const editor = card.getByTestId('profile-json');
    await expect.poll(() => editor.inputValue()).toContain('"id": "planner"');
    const before = readFileSync(join(env.navi.dir, 'profiles', 'planner.json'), 'utf8');
    await editor.fill((await editor.inputValue()).replace('"name": "Planner"', '"name": "Not saved"'));
    await card.getByTestId('profile-save').click();
    await waitForText(card.getByTestId('profile-problem'), 'navi pair');
    expect(readFileSync(join(env.navi.dir, 'profiles', 'planner.json'), 'utf8')).toBe(before);
    // The unsaved text is still there to save once paired, and closing asks first.
    expect(await editor.inputValue()).toContain('"name": "Not saved"');
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await card.getByTestId('profile-close').click();
    await expect.poll(() => asked).toEqual(['This profile has unsaved changes. Leave them and lose them?']);
    expect(await card.getByTestId('profile-editor').count()).toBe(0);
    await page.close();
  });
});
