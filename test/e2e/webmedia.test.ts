/**
 * What a person sees of images, wide tables, the sidebar and tool outcomes, in a real headless
 * Chromium against the real server and the fake LLM server: images reach the model as images
 * (the fake records what it received), shrunk when large, shown in the message and after a
 * reload; a text-only model is said before sending; tables scroll on a phone without breaking
 * words; the sidebar's time is never under its icons; a tool card names how its call ended.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { RecordedMessage } from '../fake-llm/types.js';
import { needsProgram } from '../support/requirements.js';
import {
  LAPTOP,
  openNewSession,
  pairPage,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const PHONE_SE = { width: 375, height: 667 };

const WIDE_TABLE = [
  'Here are the results:',
  '',
  '| Measurement | Internationalization | Responsibilities | Characteristically | Extraordinarily | Uncharacteristically |',
  '|---|---|---|---|---|---|',
  '| Throughput | Considerable | Unquestionable | Incomprehensible | Misunderstanding | Counterproductive |',
  '| Latency | Indistinguishable | Overwhelmingly | Disproportionate | Telecommunication | Institutionalization |',
  '',
  '```sh',
  'curl --silent --show-error --location https://example.invalid/a/very/long/path/that/does/not/fit/on/a/phone/screen',
  '```',
].join('\n');

/** The images the fake LLM received in the last user message of its last chat request. */
function lastUserImages(env: {
  fake: { requests: { kind: string; body: { messages?: RecordedMessage[] } }[] };
}) {
  const request = env.fake.requests.filter((r) => r.kind === 'chat').at(-1);
  const user = (request?.body.messages ?? []).filter((m) => m.role === 'user').at(-1);
  return { user, images: user?.images ?? [] };
}

async function attach(page: Page, name: string, mimeType: string, buffer: Buffer): Promise<void> {
  await page.getByTestId('file-input').setInputFiles({ name, mimeType, buffer });
}

/** Words of table cells that the layout split over more than one line. */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    for (const cell of document.querySelectorAll('.markdown .table-wrap :is(td, th)')) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (const match of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(match[0]);
        }
      }
    }
    return broken;
  });
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: images, tables, sidebar, outcomes',
  () => {
    const env = useWebEnv();

    it('on a phone, a wide table and a long code line scroll in their own box and no word breaks', async () => {
      const page = await env.newPage(PHONE_SE);
      await openNewSession(env, page);
      env.fake.enqueue({ text: WIDE_TABLE });
      await sendMessage(page, 'Show the results table');
      const answer = page.locator('[data-testid="assistant-message"][data-streaming="false"]');
      await waitForText(answer, 'Institutionalization');
      const wrap = answer.locator('.table-wrap');
      const box = await wrap.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(box.scroll).toBeGreaterThan(box.client);
      expect(box.client).toBeLessThanOrEqual(PHONE_SE.width);
      expect(await brokenWords(page)).toEqual([]);
      // The box scrolls, not the page.
      const page_ = await page.evaluate(() => ({
        doc: document.documentElement.scrollWidth,
        view: window.innerWidth,
        messages: (() => {
          const el = document.querySelector('[data-testid="messages"]');
          return el ? el.scrollWidth - el.clientWidth : -1;
        })(),
      }));
      expect(page_.doc).toBeLessThanOrEqual(page_.view);
      expect(page_.messages).toBe(0);
      await wrap.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
      expect(await wrap.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      const code = answer.locator('.code-block pre');
      const codeBox = await code.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(codeBox.scroll).toBeGreaterThan(codeBox.client);
      await screenshot(page, 'phone-wide-table');
      await page.close();
    });

    it('sends an attached image as an image the model receives, shows it in the message and after a reload', async () => {
      const page = await env.newPage();
      await openNewSession(env, page);
      const png = await sharp({
        create: { width: 320, height: 200, channels: 3, background: { r: 30, g: 120, b: 200 } },
      })
        .png()
        .toBuffer();
      await attach(page, 'chart.png', 'image/png', png);
      const preview = page.getByTestId('image-preview');
      await preview.locator('img').waitFor();
      // An image is not uploaded as a file.
      expect(await page.getByTestId('upload').count()).toBe(0);
      await screenshot(page, 'laptop-image-in-composer');
      env.fake.enqueue({ text: 'A blue rectangle.' });
      await sendMessage(page, 'What is in this picture?');
      await waitForText(page.getByTestId('assistant-message').last(), 'A blue rectangle.');
      expect(await preview.count()).toBe(0);

      const { user, images } = lastUserImages(env);
      expect(images).toHaveLength(1);
      expect(Buffer.from(images[0] ?? '', 'base64').equals(png)).toBe(true);
      expect(String(user?.content)).toBe('What is in this picture?');
      expect(String(user?.content)).not.toMatch(/session_files|chart\.png/);

      const thumb = page.locator('[data-testid="user-message"] [data-testid="message-image"] img');
      await thumb.waitFor();
      expect(await thumb.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(320);
      await page.getByTestId('message-image').click();
      const viewer = page.getByTestId('image-viewer');
      await viewer.locator('img').waitFor();
      expect(await viewer.evaluate((d) => (d as HTMLDialogElement).open)).toBe(true);
      await screenshot(page, 'laptop-image-viewer');
      await page.keyboard.press('Escape');
      await page.waitForFunction(
        () => !(document.querySelector('[data-testid="image-viewer"]') as HTMLDialogElement | null)?.open,
      );

      await page.reload();
      const again = page.locator('[data-testid="user-message"] [data-testid="message-image"] img');
      await again.waitFor();
      expect(await again.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(320);
      await page.close();
    });

    it('shrinks a large photo to 2048 pixels and turns a pasted GIF or WebP into PNG before sending', async () => {
      const page = await env.newPage();
      await openNewSession(env, page);
      const photo = await sharp({
        create: { width: 4000, height: 2000, channels: 3, background: { r: 200, g: 60, b: 20 } },
      })
        .jpeg()
        .toBuffer();
      await attach(page, 'photo.jpg', 'image/jpeg', photo);
      await page.locator('[data-testid="image-preview"][data-resized="true"]').waitFor();
      const gif = await sharp({
        create: { width: 40, height: 30, channels: 4, background: { r: 0, g: 200, b: 0, alpha: 1 } },
      })
        .gif()
        .toBuffer();
      const webp = await sharp({
        create: { width: 50, height: 20, channels: 3, background: { r: 9, g: 9, b: 9 } },
      })
        .webp()
        .toBuffer();
      await page.getByTestId('composer').focus();
      await page.evaluate(
        ([gifBase64, webpBase64]) => {
          const file = (base64: string, name: string, type: string) =>
            new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type });
          const data = new DataTransfer();
          data.items.add(file(gifBase64 ?? '', 'anim.gif', 'image/gif'));
          data.items.add(file(webpBase64 ?? '', 'shot.webp', 'image/webp'));
          const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
          document.querySelector('[data-testid="composer"]')?.dispatchEvent(event);
        },
        [gif.toString('base64'), webp.toString('base64')],
      );
      await page.getByTestId('image-preview').nth(2).waitFor();
      env.fake.enqueue({ text: 'Three pictures.' });
      await sendMessage(page, 'Compare these');
      await waitForText(page.getByTestId('assistant-message').last(), 'Three pictures.');
      const { images } = lastUserImages(env);
      expect(images).toHaveLength(3);
      const seen = await Promise.all(images.map((image) => sharp(Buffer.from(image, 'base64')).metadata()));
      expect(seen.map((m) => [m.format, m.width, m.height])).toEqual([
        ['jpeg', 2048, 1024],
        ['png', 40, 30],
        ['png', 50, 20],
      ]);
      expect(await page.locator('[data-testid="user-message"] [data-testid="message-image"]').count()).toBe(
        3,
      );
      await page.close();
    });

    it('says so before sending when the model reads text only, and attaches the images as files instead', async () => {
      const capabilities = env.navi.services.capabilities;
      env.fake.setModelInfo('test-model', {
        show: { details: { format: 'gguf' }, model_info: {}, capabilities: ['completion', 'tools'] },
      });
      capabilities?.invalidate();
      try {
        const page = await env.newPage();
        await openNewSession(env, page);
        const png = await sharp({
          create: { width: 60, height: 60, channels: 3, background: { r: 1, g: 2, b: 3 } },
        })
          .png()
          .toBuffer();
        await attach(page, 'diagram.png', 'image/png', png);
        const warning = page.getByTestId('images-unsupported');
        await waitForText(warning, 'test-model reads text only, so it cannot see images.');
        await page.getByTestId('composer').fill('What does the diagram say?');
        expect(await page.getByTestId('send').isDisabled()).toBe(true);
        await screenshot(page, 'laptop-images-text-only');
        await warning.getByTestId('images-as-files').click();
        await page.locator('[data-testid="upload"][data-state="done"]').waitFor();
        expect(await page.getByTestId('image-preview').count()).toBe(0);
        expect(await warning.count()).toBe(0);
        env.fake.enqueue({ text: 'I read the file.' });
        await page.getByTestId('composer').press('Enter');
        await waitForText(page.getByTestId('assistant-message').last(), 'I read the file.');
        const { user, images } = lastUserImages(env);
        expect(images).toEqual([]);
        expect(String(user?.content)).toContain('diagram.png');
        await waitForText(page.locator('[data-testid="user-message"] .user-files'), 'diagram.png');
        await page.close();
      } finally {
        env.fake.setModelInfo('test-model', undefined);
        capabilities?.invalidate();
      }
    });

    it('gives the message back with the server’s reason when it refuses the images (IMAGES_UNSUPPORTED)', async () => {
      const capabilities = env.navi.services.capabilities;
      try {
        const page = await env.newPage();
        await openNewSession(env, page);
        const png = await sharp({
          create: { width: 30, height: 30, channels: 3, background: { r: 5, g: 5, b: 5 } },
        })
          .png()
          .toBuffer();
        await attach(page, 'dot.png', 'image/png', png);
        await page.getByTestId('image-preview').waitFor();
        // The model is swapped for a text-only one after the composer looked: only the server knows.
        env.fake.setModelInfo('test-model', {
          show: { details: { format: 'gguf' }, model_info: {}, capabilities: ['completion'] },
        });
        capabilities?.invalidate();
        const chats = env.fake.requests.filter((r) => r.kind === 'chat').length;
        await sendMessage(page, 'Describe the dot');
        await waitForText(page.getByTestId('images-unsupported'), 'reads text only');
        await page.getByTestId('image-preview').waitFor();
        expect(await page.getByTestId('composer').inputValue()).toBe('Describe the dot');
        // Nothing was stored or sent to the model; the bubble went back into the composer.
        expect(await page.getByTestId('user-message').count()).toBe(0);
        expect(env.fake.requests.filter((r) => r.kind === 'chat').length).toBe(chats);
        await page.getByTestId('images-remove').click();
        expect(await page.getByTestId('image-preview').count()).toBe(0);
        await page.close();
      } finally {
        env.fake.setModelInfo('test-model', undefined);
        capabilities?.invalidate();
      }
    });

    it('keeps the sidebar’s time clear of the row’s icons, even beside a long profile name', async () => {
      // A profile name long enough to fill the row once the icons show (profiles load at start).
      writeFileSync(
        join(env.navi.services.settings.PROFILES_DIR, 'gardener.json'),
        JSON.stringify({
          id: 'gardener',
          name: 'Garden irrigation planner',
          system_prompt: 'You plan gardens.',
          enabled_tools: ['*'],
        }),
      );
      await env.restart();
      expect(env.navi.services.profiles.has('gardener')).toBe(true);
      for (const viewport of [LAPTOP, PHONE_SE]) {
        const page = await env.newPage(viewport);
        const id = await openNewSession(env, page, 'gardener');
        await env.navi.app.inject({
          method: 'PATCH',
          url: `/sessions/${id}`,
          payload: { title: 'A conversation with a really long title about the garden irrigation plan' },
        });
        await page.reload();
        if (viewport === PHONE_SE) {
          await page.getByRole('button', { name: 'Show conversations' }).first().click();
        }
        const item = page.locator(`.session-item[data-session-id="${id}"]`);
        await item.hover();
        const actions = item.locator('.session-actions');
        await actions.waitFor();
        const time = item.getByTestId('session-time');
        const [t, a, link] = await Promise.all([
          time.boundingBox(),
          actions.boundingBox(),
          item.locator('.session-link').boundingBox(),
        ]);
        if (!t || !a || !link) throw new Error('the time, the icons or the link is not laid out');
        const overlaps =
          t.x < a.x + a.width && a.x < t.x + t.width && t.y < a.y + a.height && a.y < t.y + t.height;
        expect(overlaps, `time ${JSON.stringify(t)} icons ${JSON.stringify(a)}`).toBe(false);
        expect(t.x + t.width).toBeLessThanOrEqual(link.x + link.width + 0.5);
        // Not cut off inside its own box either: the profile name gives way instead.
        expect(await time.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        const profile = item.locator('.meta-profile');
        expect(await profile.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
        expect((await time.textContent())?.trim()).toMatch(/^· \S/);
        await screenshot(page, `sidebar-time-${viewport.width}`);
        await page.close();
      }
    });

    it('names how a tool call ended: denied, refused by policy, live and after a reload', async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      await openNewSession(env, page);
      env.fake.enqueue(
        { toolCalls: [{ name: 'dangerous_op', arguments: { what: 'wipe the logs' } }] },
        { text: 'I left the logs alone.' },
      );
      await sendMessage(page, 'Wipe the logs');
      await waitForText(page.getByTestId('tool-confirm'), 'wipe the logs');
      await page.getByTestId('tool-confirm').getByTestId('deny').click();
      await waitForText(page.getByTestId('assistant-message').last(), 'I left the logs alone.');
      const denied = page.locator('[data-testid="tool-card"][data-tool="dangerous_op"]');
      await denied.and(page.locator('[data-outcome="denied"]')).waitFor();
      expect((await denied.getByTestId('tool-status').textContent())?.trim()).toBe('denied');

      env.fake.enqueue(
        { toolCalls: [{ name: 'no_such_tool', arguments: {} }] },
        { text: 'That tool is not mine to use.' },
      );
      await sendMessage(page, 'Use a tool you do not have');
      await waitForText(page.getByTestId('assistant-message').last(), 'That tool is not mine to use.');
      const refused = page.locator('[data-testid="tool-card"][data-tool="no_such_tool"]');
      await waitForText(refused.getByTestId('tool-status'), 'refused by policy');
      await waitForIdle(page);
      await screenshot(page, 'laptop-tool-outcomes');

      await page.reload();
      await waitForText(page.locator('[data-tool="dangerous_op"]').getByTestId('tool-status'), 'denied');
      await waitForText(
        page.locator('[data-tool="no_such_tool"]').getByTestId('tool-status'),
        'refused by policy',
      );
      expect(await page.locator('[data-tool="dangerous_op"]').getAttribute('data-outcome')).toBe('denied');
      await page.close();
    });
  },
);
