/**
 * The model picker in a real headless Chromium against the real server and two fake model
 * servers (an Ollama and an OpenAI-compatible one): it lists the models of both, grouped, with a
 * backend that cannot list them shown with why; choosing one with the keyboard makes the next
 * message go to that server with that model, the choice survives a reload, and "Profile
 * default" gives the session back to its profile. A run on a model that cannot call tools shows
 * the notice as an information line, and an answer claiming what no tool did is flagged, live
 * and after a reload.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  PHONE,
  pairPage,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: the model picker', () => {
  let remote: FakeLlm | undefined;
  const settings: Record<string, string> = {};
  beforeAll(async () => {
    remote = await startFakeLlm({
      models: ['remote-model', 'remote-large', 'remote-tiny'],
      // An OpenRouter-style entry saying it takes no tools.
      modelInfo: { 'remote-tiny': { openai: { supported_parameters: ['temperature', 'max_tokens'] } } },
    });
    settings.OPENAI_BASE_URL = remote.openaiUrl;
    settings.OPENAI_MODEL = 'remote-model';
  });
  const env = useWebEnv({ settings });
  const server = (): FakeLlm => {
    if (!remote) throw new Error('the remote fake server did not start');
    return remote;
  };
  afterEach(() => {
    server().reset();
  });
  afterAll(async () => {
    await remote?.close();
  });

  it('lists the models of both backends, sends the next message to the one chosen, and clears the choice', async () => {
    server().setDefault({ text: 'Answered by the remote server.' });
    env.fake.setDefault({ text: 'Answered by the Ollama server.' });
    const page = await env.newPage();
    await openNewSession(env, page);
    const toggle = page.getByTestId('model-picker-toggle');
    expect((await toggle.textContent())?.trim()).toBe('Profile default');

    await toggle.click();
    const option = (backend: string, model: string) =>
      page.locator(`[data-testid="model-option"][data-backend="${backend}"][data-model="${model}"]`);
    await option('openai', 'remote-tiny').waitFor();
    const groups = page.getByTestId('model-group');
    expect(await groups.evaluateAll((els) => els.map((el) => el.getAttribute('data-backend')))).toEqual([
      'ollama',
      'openai',
    ]);
    expect(
      await page
        .locator('[data-testid="model-group"][data-backend="openai"] [data-testid="model-option"]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-model'))),
    ).toEqual(['remote-model', 'remote-large', 'remote-tiny']);
    expect(await option('ollama', 'test-model').textContent()).toContain('default');
    expect(await page.getByTestId('model-option-default').getAttribute('aria-checked')).toBe('true');
    await screenshot(page, 'laptop-model-picker');

    // Keyboard: the checked item has the focus; arrows move, Enter chooses.
    await page.keyboard.press('ArrowDown'); // test-model
    await page.keyboard.press('ArrowDown'); // remote-model
    await page.keyboard.press('ArrowDown'); // remote-large
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-model')))
      .toBe('remote-large');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="model-picker-toggle"][data-model="remote-large"]').waitFor();
    expect(await page.getByTestId('model-picker').count()).toBe(0);

    await sendMessage(page, 'Which server are you?');
    await waitForText(page.getByTestId('assistant-message'), 'Answered by the remote server.');
    expect(
      server()
        .requests.filter((r) => r.kind === 'chat')
        .map((r) => r.body.model),
    ).toEqual(['remote-large']);
    expect(env.fake.requests.filter((r) => r.kind === 'chat')).toEqual([]);
    await waitForIdle(page);

    // The choice is the session's: a reload shows it again.
    await page.reload();
    await page.locator('[data-testid="model-picker-toggle"][data-model="remote-large"]').waitFor();
    await page.getByTestId('model-picker-toggle').click();
    expect(await option('openai', 'remote-large').getAttribute('aria-checked')).toBe('true');
    await page.getByTestId('model-option-default').click();
    await waitForText(page.getByTestId('model-picker-toggle'), 'Profile default');

    await sendMessage(page, 'And now?');
    await waitForText(page.getByTestId('assistant-message').nth(1), 'Answered by the Ollama server.');
    expect(env.fake.requests.filter((r) => r.kind === 'chat').map((r) => r.body.model)).toEqual([
      'test-model',
    ]);
    expect(server().requests.filter((r) => r.kind === 'chat')).toHaveLength(1);
  });

  it('shows a backend that cannot list its models with why, and still lists the others (on a phone)', async () => {
    server().setEndpointError('models', { status: 500, body: 'model list broken' });
    const page = await env.newPage(PHONE);
    await openNewSession(env, page);
    await page.getByTestId('model-picker-toggle').click();
    const problem = page.locator(
      '[data-testid="model-group"][data-backend="openai"] [data-testid="model-problem"]',
    );
    await problem.waitFor();
    expect(await problem.textContent()).toContain('500');
    expect(await page.locator('[data-testid="model-option"][data-backend="ollama"]').count()).toBe(1);
    const box = await page.getByTestId('model-picker').boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
    await screenshot(page, 'phone-model-picker-problem');
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('model-picker').count()).toBe(0);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('model-picker-toggle');
  });

  it('shows the default model and what it can do on the settings page, fixed settings as fixed, and saves a change', async () => {
    const page = await env.newPage();
    // Testing a connection and saving are the person's decisions: a paired browser's.
    await pairPage(env, page);
    await page.getByTestId('nav-settings').click();
    await page.waitForURL(/#\/settings$/);
    await waitForText(page.getByTestId('default-model-name'), 'test-model');
    const caps = page.getByTestId('capabilities');
    await caps.waitFor();
    // The fake Ollama's /api/show claims tools, thinking and images, and no context length.
    expect(await caps.locator('dd').allTextContents()).toEqual(['yes', 'yes', 'yes', 'not known']);
    expect(
      await page.locator('[data-testid="backend-status"][data-backend="openai"]').getAttribute('data-ready'),
    ).toBe('true');

    // The environment of this server sets the backends: shown, not editable.
    const host = page.getByTestId('setting-OLLAMA_HOST');
    expect(await host.isDisabled()).toBe(true);
    expect(await host.inputValue()).toBe(env.fake.ollamaUrl);
    expect(await page.getByTestId('llm-settings').textContent()).toContain(
      'Fixed by the environment (OLLAMA_HOST)',
    );
    expect(await page.getByTestId('setting-OPENAI_API_KEY').isDisabled()).toBe(false);

    await page.getByTestId('test-ollama').click();
    await page.locator('[data-testid="test-result"][data-ok="true"]').waitFor();
    await screenshot(page, 'laptop-settings-page');

    const save = page.getByTestId('settings-save');
    expect(await save.isDisabled()).toBe(true);
    await page.getByTestId('setting-LLAMACPP_MODEL_PATH').fill('  tiny-test.gguf ');
    await save.click();
    await page.getByTestId('settings-saved').waitFor();
    const saved = (await (await fetch(`${env.navi.url}/llm/settings`)).json()) as {
      values: Record<string, string>;
    };
    expect(saved.values.LLAMACPP_MODEL_PATH).toBe('tiny-test.gguf');
    await page.getByTestId('setting-LLAMACPP_MODEL_PATH').fill('');
    await save.click();
    await page.getByTestId('settings-saved').waitFor();

    await page.getByTestId('open-setup').click();
    await page.getByTestId('setup-screen').waitFor();
    expect(await page.getByTestId('ollama-locked').textContent()).toContain('OLLAMA_HOST');
  });

  it('shows the notice of a model without tools as information, and flags a claim no tool backs, also after a reload', async () => {
    server().setDefault({ text: 'I have saved the file.' });
    const page = await env.newPage();
    await openNewSession(env, page);
    await page.getByTestId('model-picker-toggle').click();
    await page.locator('[data-testid="model-option"][data-model="remote-tiny"]').click();
    await page.locator('[data-testid="model-picker-toggle"][data-model="remote-tiny"]').waitFor();

    await sendMessage(page, 'Save my notes to notes.txt.');
    const notice = page.locator('[data-testid="notice"][data-code="TOOLS_UNSUPPORTED"]');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('remote-tiny');
    const flag = page.getByTestId('claim-flag');
    await flag.waitFor();
    expect(await flag.textContent()).toContain('Not verified: no tool call in this turn did this.');
    expect(await flag.getByTestId('claim').allTextContents()).toEqual(['“I have saved the file.”']);
    expect(await page.getByTestId('error').count()).toBe(0);
    expect(await page.getByTestId('failed-turn').count()).toBe(0);
    // The model was offered no tools.
    const chat = server().requests.find((r) => r.kind === 'chat');
    expect(chat?.body.tools ?? []).toEqual([]);
    await waitForIdle(page);
    await screenshot(page, 'laptop-notice-and-claim-flag');

    await page.reload();
    await page.getByTestId('claim-flag').waitFor();
    expect(await page.getByTestId('claim').allTextContents()).toEqual(['“I have saved the file.”']);
  });
});
