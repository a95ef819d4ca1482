/**
 * The banner above the chat while the model does not answer, in a real Chromium against the
 * real server: Navi points at an Ollama address where nothing listens yet. Before anything is
 * typed the banner names that address and the header says the model is unreachable; once the
 * fake LLM server starts on that port, the next re-check (its interval shortened through the
 * page's address) takes the banner away. A model that stops answering later is noticed through
 * the failed run itself: the banner comes back, and the chat stays.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import { screenshot, sendMessage, useWebEnvWithoutModel, waitForText } from './web-harness.js';

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: the model-unreachable banner',
  () => {
    const { env, ollamaUrl } = useWebEnvWithoutModel();
    let ollama: FakeLlm | undefined;
    afterAll(async () => {
      await ollama?.close();
    });

    it('names the address that did not answer before anything is typed, and goes once the model answers', async () => {
      const page = await env.newPage();
      const id = await env.navi.createSession();
      await page.goto(`${env.navi.url}/?llm_check_ms=300#/sessions/${id}`);
      // Nothing ever answered in this tab: the setup screen comes first; the person goes on to the chat.
      await page.getByTestId('setup-skip-link').click();
      const banner = page.getByTestId('llm-banner');
      await banner.waitFor();
      const detail = (await page.getByTestId('llm-banner-detail').textContent()) ?? '';
      expect(detail).toContain('Ollama, model test-model');
      expect(detail).toContain(`Cannot reach the Ollama server at ${ollamaUrl()}`);
      expect(await banner.textContent()).toContain('npx navi doctor');
      expect(await banner.textContent()).not.toContain('`');
      expect(await page.getByTestId('model-state').getAttribute('data-state')).toBe('unreachable');
      expect(await page.getByTestId('model-state').textContent()).toContain('Model unreachable');
      expect(await page.getByTestId('composer').count()).toBe(1);
      await screenshot(page, 'laptop-llm-banner');

      // The model's server starts on the address Navi looks at: a re-check finds it.
      ollama = await startFakeLlm({ port: Number(new URL(ollamaUrl()).port) });
      ollama.setDefault({ text: 'Here now.' });
      await banner.waitFor({ state: 'detached' });
      await page.locator('[data-testid="model-state"][data-state="ready"]').waitFor();
      expect(await page.getByTestId('setup-screen').count()).toBe(0);

      await sendMessage(page, 'Are you there?');
      await waitForText(page.getByTestId('assistant-message'), 'Here now.');
      await page.close();
    });

    it('comes back after a run fails because the model stopped answering, and keeps the chat', async () => {
      if (!ollama) throw new Error('the first test starts the fake LLM server');
      const page = await env.newPage();
      const id = await env.navi.createSession();
      // Checks an hour apart: only the failed run can bring the banner back within this test.
      await page.goto(`${env.navi.url}/?llm_check_ms=3600000#/sessions/${id}`);
      await page.locator('[data-testid="model-state"][data-state="ready"]').waitFor();
      expect(await page.getByTestId('llm-banner').count()).toBe(0);

      await ollama.close();
      ollama = undefined;
      await sendMessage(page, 'Still there?');
      await page.getByTestId('llm-banner').waitFor();
      await page.locator('[data-testid="model-state"][data-state="unreachable"]').waitFor();
      expect(await page.getByTestId('llm-banner-detail').textContent()).toContain(ollamaUrl());
      // The conversation stays on screen; the setup screen does not take its place.
      expect(await page.getByTestId('setup-screen').count()).toBe(0);
      await waitForText(page.getByTestId('user-message'), 'Still there?');

      // Check again by hand: still nothing there, so the banner stays.
      await page.getByTestId('llm-banner-recheck').click();
      await page.locator('[data-testid="llm-banner-recheck"]:not([disabled])').waitFor();
      expect(await page.getByTestId('llm-banner').count()).toBe(1);
      await page.close();
    });
  },
);
