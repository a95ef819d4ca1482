/**
 * The chat's per-message actions, failed turns, keyboard shortcuts and context meter in a real
 * headless Chromium against the real server and the fake LLM server: a failed turn survives a
 * reload and Retry runs the message again; editing a message replaces it and what followed;
 * regenerating replaces the last answer; a run's bubbles get their ids from its events; an edit
 * a text-only model refuses stays in its editor; copying puts the text on the clipboard; Escape
 * stops a run, unless it closes a dialog or a menu; the shortcuts help lists the shortcuts; and
 * the meter after a stop is the meter after a reload.
 */
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { SessionMessage } from '../../src/protocol/rest.js';
import type { RecordedRequest } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

/** The text of every message bubble, in order, as `who: text`. */
async function transcript(page: Page): Promise<string[]> {
  return page
    .locator(
      '.chat-message.is-user [data-testid="user-message"], .chat-message.is-assistant [data-testid="assistant-message"]',
    )
    .evaluateAll((elements) =>
      elements.map((el) => {
        const who = el.getAttribute('data-testid') === 'user-message' ? 'you' : 'navi';
        const text = (el.querySelector('.user-text, .markdown')?.textContent ?? '').trim();
        return `${who}: ${text}`;
      }),
    );
}

/** Waits until the chat shows exactly these bubbles (live updates settle in any order). */
async function waitForTranscript(page: Page, expected: string[]): Promise<void> {
  await expect.poll(() => transcript(page), { timeout: 15_000 }).toEqual(expected);
}

/** The user messages of a chat request the fake LLM received. */
function userTexts(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

function lastChat(requests: RecordedRequest[]): RecordedRequest | undefined {
  return requests.filter((r) => r.kind === 'chat').at(-1);
}

/** The message ids the chat's bubbles carry (`data-message-id`), in order; null where one has none. */
function shownIds(page: Page): Promise<(string | null)[]> {
  return page
    .locator('.chat-message.is-user, .chat-message.is-assistant')
    .evaluateAll((elements) => elements.map((el) => el.getAttribute('data-message-id')));
}

/** The ids of the messages of the session that show as bubbles: what was said, by whom. */
async function storedBubbleIds(url: string, sessionId: string): Promise<string[]> {
  const res = await fetch(`${url}/sessions/${sessionId}`);
  const { messages } = (await res.json()) as { messages: SessionMessage[] };
  return messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && (m.content ?? '').trim() !== '')
    .map((m) => m.id);
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: message actions', () => {
  const env = useWebEnv();

  it('keeps a failed turn after a reload, and Retry answers once the LLM is back', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    // The LLM server answers every chat request with HTTP 500 until the test says otherwise.
    env.fake.setDefault(undefined);
    await sendMessage(page, 'Are you there?');
    const failed = page.getByTestId('failed-turn');
    await failed.waitFor();
    expect(await failed.getAttribute('data-code')).toBe('LLM_HTTP_ERROR');
    expect(await failed.textContent()).toContain("The model's server answered with an error.");
    await waitForIdle(page);
    await screenshot(page, 'laptop-failed-turn');

    await page.reload();
    await failed.waitFor();
    expect(await failed.getAttribute('data-code')).toBe('LLM_HTTP_ERROR');
    await waitForTranscript(page, ['you: Are you there?']);

    env.fake.setDefault({ text: 'Yes, back again.' });
    await failed.getByTestId('retry').click();
    await waitForTranscript(page, ['you: Are you there?', 'navi: Yes, back again.']);
    expect(await failed.count()).toBe(0);
    // The message ran again without being stored a second time.
    expect(userTexts(lastChat(env.fake.requests))).toEqual(['Are you there?']);

    await page.reload();
    await waitForTranscript(page, ['you: Are you there?', 'navi: Yes, back again.']);
    expect(await failed.count()).toBe(0);
    await page.close();
  });

  it('edits a message and resends it: what followed is replaced, also after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Four.' }, { text: 'Paris.' }, { text: 'Six.' });
    await sendMessage(page, 'What is 2+2?');
    await waitForTranscript(page, ['you: What is 2+2?', 'navi: Four.']);
    await waitForIdle(page);
    await sendMessage(page, 'Capital of France?');
    await waitForTranscript(page, [
      'you: What is 2+2?',
      'navi: Four.',
      'you: Capital of France?',
      'navi: Paris.',
    ]);
    await waitForIdle(page);

    // By keyboard: the first message's Edit button, then the editor; Enter saves.
    const first = page.locator('.chat-message.is-user').first();
    const edit = first.getByRole('button', { name: 'Edit and resend your message' });
    await edit.focus();
    await page.keyboard.press('Enter');
    const box = page.getByTestId('edit-box');
    await box.waitFor();
    expect(await box.inputValue()).toBe('What is 2+2?');
    await box.fill('What is 3+3?');
    await screenshot(page, 'laptop-edit-message');
    await box.press('Enter');
    await waitForTranscript(page, ['you: What is 3+3?', 'navi: Six.']);
    expect(userTexts(lastChat(env.fake.requests))).toEqual(['What is 3+3?']);
    await waitForIdle(page);

    await page.reload();
    await waitForTranscript(page, ['you: What is 3+3?', 'navi: Six.']);

    // Cancel (and Escape) leave the message as it was.
    await page.locator('.chat-message.is-user').first().hover();
    await page.getByTestId('edit-message').first().click();
    await page.getByTestId('edit-box').fill('Never sent');
    await page.getByTestId('edit-cancel').click();
    await page.getByTestId('edit-message').first().click();
    await page.getByTestId('edit-box').press('Escape');
    expect(await page.getByTestId('message-editor').count()).toBe(0);
    await waitForTranscript(page, ['you: What is 3+3?', 'navi: Six.']);
    await page.close();
  });

  it('edits a message it sent in this page, before any reload gave it an id', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Blue.' }, { text: 'Green.' });
    await sendMessage(page, 'Favourite colour?');
    await waitForTranscript(page, ['you: Favourite colour?', 'navi: Blue.']);
    await waitForIdle(page);
    await page.locator('.chat-message.is-user').hover();
    await page.getByTestId('edit-message').click();
    await page.getByTestId('edit-box').fill('Second favourite colour?');
    await page.getByTestId('edit-save').click();
    await waitForTranscript(page, ['you: Second favourite colour?', 'navi: Green.']);
    await page.close();
  });

  it('regenerates the last answer in place of the old one, also after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'First take.' }, { text: 'Second take.' });
    await sendMessage(page, 'Write a slogan');
    await waitForTranscript(page, ['you: Write a slogan', 'navi: First take.']);
    await waitForIdle(page);
    // Only the last answer offers Regenerate.
    expect(await page.getByTestId('regenerate').count()).toBe(1);
    await page.getByRole('button', { name: 'Regenerate this answer' }).click();
    await waitForTranscript(page, ['you: Write a slogan', 'navi: Second take.']);
    expect(userTexts(lastChat(env.fake.requests))).toEqual(['Write a slogan']);
    await waitForIdle(page);
    await page.reload();
    await waitForTranscript(page, ['you: Write a slogan', 'navi: Second take.']);
    await page.close();
  });

  it('names the bubbles of a run from its events, reading the session only for what they cannot name', async () => {
    const page = await env.newPage();
    const id = await openNewSession(env, page);
    const reads: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'GET' && new URL(request.url()).pathname === `/sessions/${id}`)
        reads.push(request.url());
    });
    env.fake.enqueue({ text: 'Plain answer.' });
    await sendMessage(page, 'A plain question');
    await waitForTranscript(page, ['you: A plain question', 'navi: Plain answer.']);
    await waitForIdle(page);
    await expect.poll(() => shownIds(page)).toEqual(await storedBubbleIds(env.navi.url, id));
    // Editing that message needs its id, which the run's first event gave: no read either.
    await page.locator('.chat-message.is-user').hover();
    await page.getByTestId('edit-message').click();
    await page.getByTestId('edit-box').fill('A better question');
    env.fake.enqueue({ text: 'Better answer.' });
    await page.getByTestId('edit-save').click();
    await waitForTranscript(page, ['you: A better question', 'navi: Better answer.']);
    await waitForIdle(page);
    await expect.poll(() => shownIds(page)).toEqual(await storedBubbleIds(env.navi.url, id));
    expect(reads).toEqual([]);

    // What the model says before a tool call is a message of its own, which no event names.
    env.fake.enqueue(
      { text: 'Let me read the report.', toolCalls: [{ name: 'long_report', arguments: {} }] },
      { text: 'The report is read.' },
    );
    await sendMessage(page, 'Read the report');
    await waitForTranscript(page, [
      'you: A better question',
      'navi: Better answer.',
      'you: Read the report',
      'navi: Let me read the report.',
      'navi: The report is read.',
    ]);
    await waitForIdle(page);
    await expect.poll(() => shownIds(page)).toEqual(await storedBubbleIds(env.navi.url, id));
    expect(reads).toHaveLength(1);
    await page.close();
  });

  it('keeps the editor open with the server’s reason when a text-only model refuses the edit’s images', async () => {
    const capabilities = env.navi.services.capabilities;
    try {
      const page = await env.newPage();
      await openNewSession(env, page);
      const png = await sharp({
        create: { width: 24, height: 24, channels: 3, background: { r: 200, g: 20, b: 20 } },
      })
        .png()
        .toBuffer();
      await page
        .getByTestId('file-input')
        .setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
      await page.getByTestId('image-preview').waitFor();
      env.fake.enqueue({ text: 'A red dot.' });
      await sendMessage(page, 'What is this?');
      await waitForTranscript(page, ['you: What is this?', 'navi: A red dot.']);
      await waitForIdle(page);

      // The session's model now reads text only: an edit carries the message's image again.
      env.fake.setModelInfo('test-model', {
        show: { details: { format: 'gguf' }, model_info: {}, capabilities: ['completion'] },
      });
      capabilities?.invalidate();
      const chats = env.fake.requests.filter((r) => r.kind === 'chat').length;
      await page.locator('.chat-message.is-user').hover();
      await page.getByTestId('edit-message').click();
      await page.getByTestId('edit-box').fill('What colour is it?');
      await page.getByTestId('edit-save').click();
      await waitForText(page.getByTestId('edit-error'), 'reads text only');
      const save = page.getByTestId('edit-save');
      expect((await save.textContent())?.trim()).toBe('Save');
      expect(await save.isDisabled()).toBe(false);
      expect(await page.getByTestId('edit-box').inputValue()).toBe('What colour is it?');
      // Nothing was removed or run (the message shows as its editor), and the composer, which sent
      // nothing, was not touched.
      expect(await page.locator('.chat-message.is-user [data-testid="message-editor"]').count()).toBe(1);
      await waitForTranscript(page, ['navi: A red dot.']);
      expect(await page.getByTestId('image-preview').count()).toBe(0);
      expect(await page.getByTestId('images-unsupported').count()).toBe(0);
      expect(env.fake.requests.filter((r) => r.kind === 'chat').length).toBe(chats);

      // With a model that sees images again, saving once more goes through.
      env.fake.setModelInfo('test-model', undefined);
      capabilities?.invalidate();
      env.fake.enqueue({ text: 'Red.' });
      await save.click();
      await waitForTranscript(page, ['you: What colour is it?', 'navi: Red.']);
      expect(await page.getByTestId('message-editor').count()).toBe(0);
      expect(await page.locator('.chat-message.is-user [data-testid="message-image"]').count()).toBe(1);
      await page.close();
    } finally {
      env.fake.setModelInfo('test-model', undefined);
      capabilities?.invalidate();
    }
  });

  it('copies a message to the clipboard and says so', async () => {
    const page = await env.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.navi.url });
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Here is **the plan**:\n\n1. Pack\n2. Go' });
    await sendMessage(page, 'Plan my trip');
    await waitForText(page.locator('[data-testid="assistant-message"][data-streaming="false"]'), 'Go');
    await waitForIdle(page);

    const answer = page.locator('.chat-message.is-assistant').last();
    await answer.hover();
    await answer.getByRole('button', { name: "Copy Navi's answer" }).click();
    await waitForText(answer.getByTestId('copy-state'), 'Copied');
    // The answer's own text (its Markdown), as Navi wrote it.
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      'Here is **the plan**:\n\n1. Pack\n2. Go',
    );

    const question = page.locator('.chat-message.is-user').last();
    await question.hover();
    await question.getByRole('button', { name: 'Copy your message' }).click();
    await waitForText(question.getByTestId('copy-state'), 'Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('Plan my trip');
    await page.close();
  });

  it('stops a run with Escape, disables the actions meanwhile, and shows the same meter after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Short answer.' });
    await sendMessage(page, 'Hello');
    await waitForTranscript(page, ['you: Hello', 'navi: Short answer.']);
    await waitForIdle(page);

    env.fake.enqueue({ text: 'A long story that goes on and on and on', chunkSize: 4, stallAfterChunks: 3 });
    await sendMessage(page, 'Tell me a long story');
    await waitForText(page.locator('[data-testid="assistant-message"][data-streaming="true"]'), 'A long');
    // While the run is active, edit and regenerate wait.
    expect(await page.getByTestId('edit-message').first().isDisabled()).toBe(true);
    expect(await page.getByTestId('regenerate').count()).toBe(0);
    await page.keyboard.press('Escape');
    await waitForText(page.getByTestId('notice'), 'Stopped');
    await waitForIdle(page);

    const meter = page.getByTestId('context-meter');
    await meter.waitFor();
    const afterStop = ((await meter.textContent()) ?? '').trim();
    expect(afterStop).toMatch(/^\S+ \/ 8\.2k$/);
    expect(afterStop).not.toMatch(/^0 \//);
    await page.reload();
    await waitForTranscript(page, [
      'you: Hello',
      'navi: Short answer.',
      'you: Tell me a long story',
      'navi: A long story',
    ]);
    await expect.poll(async () => ((await meter.textContent()) ?? '').trim()).toBe(afterStop);
    await page.close();
  });

  it('does not stop a run when Escape closes a dialog or a menu, and Escape in the chat does', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({ text: 'Waiting forever', chunkSize: 4, stallAfterChunks: 2 });
    await sendMessage(page, 'Go slowly');
    await waitForText(page.locator('[data-testid="assistant-message"][data-streaming="true"]'), 'Wait');
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });
    expect(await page.getByTestId('stop').isVisible()).toBe(true);
    // Nor when it closes the chat header's export menu.
    await page.getByTestId('export-menu').click();
    const exportMenu = page.getByRole('menu', { name: 'Export as' });
    await exportMenu.waitFor();
    await page.keyboard.press('Escape');
    await exportMenu.waitFor({ state: 'hidden' });
    // A stop would have turned the button into “Stopping…” at once, before the server answered.
    expect((await page.getByTestId('stop').textContent())?.trim()).toBe('Stop');
    await page.getByTestId('messages').click();
    await page.keyboard.press('Escape');
    await waitForText(page.getByTestId('notice'), 'Stopped');
    await waitForIdle(page);
    await page.close();
  });

  it('lists the shortcuts in a help dialog, and the shortcuts do what it says', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    await page.locator('body').click({ position: { x: 600, y: 300 } });
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const keys = await help.locator('[data-testid="shortcut"] .keys').allTextContents();
    expect(keys.map((k) => k.replace(/\s+/g, ''))).toEqual([
      'Ctrl+Shift+O',
      'Ctrl+K',
      'Esc',
      'Enter',
      '?orCtrl+/',
    ]);
    const text = (await help.getByTestId('shortcut').allTextContents()).join('\n');
    for (const words of ['new conversation', 'Search', 'Stop', 'shortcuts']) expect(text).toContain(words);
    await screenshot(page, 'laptop-shortcuts-help');
    await help.getByRole('button', { name: 'Close' }).last().click();
    await help.waitFor({ state: 'hidden' });

    // ? typed in the message box is text; Ctrl+/ opens the help from there too.
    const composer = page.getByTestId('composer');
    await composer.fill('');
    await composer.press('?');
    expect(await composer.inputValue()).toBe('?');
    expect(await help.isVisible()).toBe(false);
    await composer.press('Control+/');
    await help.waitFor();
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });

    // Ctrl+Shift+O starts a new conversation (the profile choice first).
    await page.keyboard.press('Control+Shift+O');
    await page.getByRole('dialog', { name: 'New conversation' }).waitFor();
    await page.keyboard.press('Escape');

    // Ctrl+K goes to the sidebar's search box.
    await page.getByRole('dialog', { name: 'New conversation' }).waitFor({ state: 'hidden' });
    const search = page.getByRole('searchbox', { name: 'Search chats' });
    expect(await search.evaluate((el) => document.activeElement === el)).toBe(false);
    await page.keyboard.press('Control+K');
    await expect.poll(() => search.evaluate((el) => document.activeElement === el)).toBe(true);
    expect(await search.getAttribute('id')).toBe('session-search');
    await page.close();
  });
});
