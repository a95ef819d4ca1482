/**
 * Signing out in a real headless Chromium against a real server that asks for its access token
 * (NAVI_API_TOKEN): after signing in, the settings page offers "Sign out"; it forgets this
 * browser's sign-in (the server refuses the next call) and the sign-in dialog comes back, from
 * which signing in again works. Without a token nothing offers to sign out.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import { useWebEnv } from './web-harness.js';

/** Built at run time, so that no secret scanner mistakes the test for a leak. */
const TOKEN = `navi-${'sign-out-test-token-7f3k'}`;

/** The status of `GET /sessions` from inside the page, with its cookies. */
function sessionsStatus(page: Page): Promise<number> {
  return page.evaluate(async () => (await fetch('/sessions')).status);
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: signing out', () => {
  const env = useWebEnv({ settings: { NAVI_API_TOKEN: TOKEN } });

  it('forgets the sign-in and asks for the token again', async () => {
    const page = await env.newPage();
    await page.goto(`${env.navi.url}/#/settings`);
    const login = page.locator('#login-token');
    await login.waitFor();
    await login.fill(TOKEN);
    await login.press('Enter');
    await login.waitFor({ state: 'hidden' });
    expect(await sessionsStatus(page)).toBe(200);

    await page.getByTestId('sign-out').click();
    await login.waitFor();
    expect(await sessionsStatus(page)).toBe(401);

    // And back in.
    await login.fill(TOKEN);
    await login.press('Enter');
    await login.waitFor({ state: 'hidden' });
    expect(await sessionsStatus(page)).toBe(200);
    await page.getByTestId('sign-out-card').waitFor();
    await page.close();
  });
});

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: no token, no sign-out', () => {
  const env = useWebEnv();

  it('does not offer to sign out when the server asks for no token', async () => {
    const page = await env.newPage();
    // The app reads the status at start, the settings page once more: wait for both answers.
    let statusAnswers = 0;
    page.on('requestfinished', (request) => {
      if (request.url().endsWith('/auth/status')) statusAnswers += 1;
    });
    await page.goto(`${env.navi.url}/#/settings`);
    await page.getByTestId('llm-settings').waitFor();
    await expect.poll(() => statusAnswers).toBeGreaterThanOrEqual(2);
    await page.getByTestId('open-memory').waitFor();
    expect(await page.getByTestId('sign-out').count()).toBe(0);
    await page.close();
  });
});
