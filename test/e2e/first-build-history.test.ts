/**
 * The web client renders sessions written by the first build (test/fixtures/first-build) after
 * the typed-message migration: attached files as file chips rather than text, the plan card,
 * tool cards with their results and failures, the form shown as submitted, published content,
 * and interrupted answers marked as such.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { startWebEnv, type WebEnv, waitForText } from './web-harness.js';

const FIXTURE = join(repoRoot, 'test/fixtures/first-build');
const sessionIds = Object.fromEntries(
  Object.entries(
    JSON.parse(readFileSync(join(FIXTURE, 'first-build.json'), 'utf8')) as Record<
      string,
      { detail: { id: string } }
    >,
  ).map(([name, recorded]) => [name, recorded.detail.id]),
);

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: a first-build database', () => {
  let env: WebEnv;

  beforeAll(async () => {
    env = await startWebEnv();
    await env.restart(async () => {
      const db = join(env.navi.dir, 'navi.db');
      for (const suffix of ['-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
      copyFileSync(join(FIXTURE, 'navi.db'), db);
    });
  }, 180_000);
  afterAll(async () => {
    await env?.close();
  });
  afterEach(() => {
    expect(env.pageErrors).toEqual([]);
  });

  async function open(name: string) {
    const page = await env.newPage();
    await page.goto(`${env.navi.url}/#/sessions/${sessionIds[name]}`);
    await page.getByTestId('connection').and(page.locator('[data-state="open"]')).waitFor();
    return page;
  }

  it('shows attachments as files, thinking, and tool cards with their results', async () => {
    const page = await open('a');
    const user = page.getByTestId('user-message');
    await waitForText(user, 'What is in my notes?');
    expect(await user.locator('.user-text').textContent()).toBe('What is in my notes?');
    expect(await user.locator('.user-files li').allTextContents()).toEqual(['notes.txt']);
    await waitForText(page.getByTestId('thinking'), 'The user attached notes.');
    await page.locator('[data-testid="tool-card"][data-call-id="c-flaky"][data-status="failed"]').waitFor();
    await page.locator('[data-testid="tool-card"][data-call-id="c-pic"][data-status="done"]').waitFor();
    await waitForText(page.getByTestId('assistant-message'), 'the picture is a dot');
    // The image the tool loaded went to the model only: no bubble for it.
    expect(await page.getByTestId('user-message').count()).toBe(1);
    await page.close();
  });

  it('shows the plan, the form as submitted, and the published content', async () => {
    const page = await open('b');
    await waitForText(page.getByTestId('plan-card'), 'Ask for the city');
    await waitForText(page.locator('[data-testid="form-summary"][data-form-id="trip"]'), 'Oslo');
    await waitForText(page.getByTestId('published-caption'), 'Our trip');
    expect(await page.getByTestId('user-message').count()).toBe(1);
    await waitForText(page.getByTestId('assistant-message').last(), 'the plan is published');
    await page.close();
  });

  it('marks the answers that were cut or stopped as interrupted', async () => {
    const page = await open('c');
    await waitForText(page.getByTestId('assistant-message').first(), 'This answer wil');
    expect(await page.locator('[data-testid="assistant-message"] [data-testid="interrupted"]').count()).toBe(
      2,
    );
    await page.close();
  });
});
