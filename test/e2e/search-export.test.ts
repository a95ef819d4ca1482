/**
 * Search across chats, export and import in a real headless Chromium against the real server:
 * typing in the sidebar's search box finds a message of another chat and opens that chat
 * scrolled to it; Markdown and JSON exports download; a JSON export imported through the
 * sidebar's file picker opens as a new chat with the same messages.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { SessionDetail, SessionExport, SessionMessage } from '../../src/protocol/rest.js';
import type { BufferedMessage } from '../../src/store/types.js';
import { tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { openNewSession, screenshot, useWebEnv, waitForText } from './web-harness.js';

/** A long chat of `pairs` questions and answers; `special` replaces the text of message `at`. */
function history(pairs: number, special: { at: number; text: string }): BufferedMessage[] {
  const out: BufferedMessage[] = [];
  for (let i = 0; i < pairs * 2; i++) {
    const user = i % 2 === 0;
    const message: SessionMessage = {
      id: `msg-${i}`,
      role: user ? 'user' : 'assistant',
      content:
        i === special.at
          ? special.text
          : `${user ? 'Question' : 'Answer'} ${i}: ${'filler words to make the chat long. '.repeat(6)}`,
      created_at: new Date(Date.UTC(2026, 1, 1, 9, i)).toISOString(),
    };
    out.push({ message, display: true, context: true });
  }
  return out;
}

/** Whether the element's middle is inside the chat's scrolling area. */
async function inView(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const target = document.querySelector(sel);
    const scroller = document.querySelector('[data-testid="messages"]');
    if (!target || !scroller) return false;
    const t = target.getBoundingClientRect();
    const s = scroller.getBoundingClientRect();
    const middle = t.top + Math.min(t.height, s.height) / 2;
    return middle > s.top && middle < s.bottom;
  }, selector);
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: search, export and import', () => {
  const env = useWebEnv();

  it('finds a message of another chat as you type and opens that chat scrolled to it', async () => {
    const { sessions } = env.navi.services;
    const target = await env.navi.createSession();
    await sessions.update(target, { title: 'Travel notes' });
    await sessions.append(
      target,
      history(20, { at: 4, text: 'The ferry to Zanzibar leaves at <b>noon</b> from the old harbour.' }),
    );
    const page = await env.newPage();
    // Another chat is open: the hit is in a different one.
    const other = await openNewSession(env, page);

    const box = page.locator('#session-search');
    await box.click();
    await box.pressSequentially('zanzi');
    const hit = page.getByTestId('search-hit').first();
    await waitForText(hit, 'Travel notes');
    // The matched word is marked; the message's markup stays text.
    expect(await hit.locator('mark').allTextContents()).toEqual(['Zanzibar']);
    expect(await hit.textContent()).toContain('<b>noon</b>');
    expect(await hit.locator('b').count()).toBe(0);
    // The list of chats gives way to the results while the box holds text.
    expect(await page.locator('.session-list').isVisible()).toBe(false);
    await screenshot(page, 'laptop-light-search-results');

    await hit.click();
    await page.waitForURL((url) => url.hash === `#/sessions/${target}?m=msg-4`);
    const selector = '[data-message-id="msg-4"][data-jump-target]';
    await page.locator(selector).waitFor();
    expect(await inView(page, selector)).toBe(true);
    // The chat did not stay at its end, where it opens otherwise.
    expect(await inView(page, '[data-message-id="msg-39"]')).toBe(false);
    expect(page.url()).not.toContain(other);

    // Escape empties the box and the list of chats comes back.
    await box.click();
    await box.press('Escape');
    expect(await box.inputValue()).toBe('');
    await page.locator('.session-list').waitFor();

    // A link to a message that is not there says so.
    await page.goto(`${env.navi.url}/#/sessions/${target}?m=no-such-message`);
    await page.reload();
    await waitForText(page.getByRole('alert'), 'not in this conversation');
    await page.close();
  });

  it('says when nothing matches, and finds a chat by its title', async () => {
    const { sessions } = env.navi.services;
    const id = await env.navi.createSession();
    await sessions.update(id, { title: 'Quarterly budget review' });
    const page = await env.newPage();
    await page.goto(env.navi.url);
    const box = page.locator('#session-search');
    await box.fill('xylophonist');
    await waitForText(page.getByTestId('search-results'), 'No chat mentions “xylophonist”.');
    await box.fill('quarterly budg');
    const hit = page.getByTestId('search-hit').first();
    await waitForText(hit, 'Title:');
    expect(await hit.locator('mark').allTextContents()).toEqual(['Quarterly', 'budget']);
    // Enter in the box opens the first result.
    await box.press('Enter');
    await page.waitForURL((url) => url.hash === `#/sessions/${id}`);
    await page.close();
  });

  it('downloads Markdown and JSON exports, and imports the JSON as a new chat with the same messages', async () => {
    const { sessions } = env.navi.services;
    const source = await env.navi.createSession();
    await sessions.update(source, { title: 'Garden plan' });
    await sessions.append(source, history(3, { at: 1, text: 'Plant the **tulips** in October.' }));
    const page = await env.newPage();
    await page.goto(`${env.navi.url}/#/sessions/${source}`);
    await waitForText(page.getByTestId('chat-title'), 'Garden plan');

    await page.getByTestId('export-menu').click();
    await screenshot(page, 'laptop-light-export-menu');
    const markdownDownload = page.waitForEvent('download');
    await page.getByTestId('export-markdown').click();
    const markdown = await markdownDownload;
    expect(markdown.suggestedFilename()).toBe('Garden plan.md');
    const dir = tempDir('navi-e2e-export-');
    const mdPath = join(dir, 'export.md');
    await markdown.saveAs(mdPath);
    const md = readFileSync(mdPath, 'utf8');
    expect(md.startsWith('# Garden plan\n')).toBe(true);
    expect(md).toContain('Plant the **tulips** in October.');

    await page.getByTestId('export-menu').click();
    const jsonDownload = page.waitForEvent('download');
    await page.getByTestId('export-json').click();
    const json = await jsonDownload;
    expect(json.suggestedFilename()).toBe('Garden plan.json');
    const jsonPath = join(dir, 'Garden plan.json');
    await json.saveAs(jsonPath);
    const exported = JSON.parse(readFileSync(jsonPath, 'utf8')) as SessionExport;
    expect(exported.navi_export).toBe(1);

    await page.getByTestId('import-file').setInputFiles(jsonPath);
    await page.waitForURL((url) => url.hash.startsWith('#/sessions/') && !url.hash.includes(source));
    const imported = decodeURIComponent(page.url().split('#/sessions/')[1] ?? '');
    await waitForText(page.getByTestId('chat-title'), 'Garden plan');
    await waitForText(page.locator('[data-message-id="msg-1"]'), 'Plant the tulips in October.');
    const read = async (id: string) =>
      (await (await fetch(`${env.navi.url}/sessions/${id}`)).json()) as SessionDetail;
    expect((await read(imported)).messages).toEqual((await read(source)).messages);
    // Listed in the sidebar, first (it is the chat most recently active).
    await waitForText(page.locator('.session-item').first(), 'Garden plan');
    expect(await page.locator('.session-item').first().getAttribute('data-session-id')).toBe(imported);

    // A file that is not an export is refused with the reason.
    const notJson = join(dir, 'notes.json');
    await markdown.saveAs(notJson);
    await page.getByTestId('import-file').setInputFiles(notJson);
    await waitForText(page.getByRole('alert'), 'notes.json is not a JSON file');
    const wrong = join(dir, 'wrong.json');
    await json.saveAs(wrong);
    const body = JSON.parse(readFileSync(wrong, 'utf8')) as Record<string, unknown>;
    writeFileSync(wrong, JSON.stringify({ ...body, navi_export: 9 }));
    await page.getByTestId('import-file').setInputFiles(wrong);
    await waitForText(page.getByRole('alert'), 'wrong.json was not imported');
    await waitForText(page.getByRole('alert'), 'this Navi reads version 1');
    await page.close();
  });
});
