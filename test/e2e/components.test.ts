/**
 * UI components (form, card_grid), file upload and tool confirmations in a real headless
 * Chromium against the real server and the fake LLM.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

const formPayload = {
  form_id: 'trip-1',
  title: 'Trip details',
  description: 'Tell me about your trip.',
  submit_label: 'Plan my trip',
  fields: [
    { name: 'name', label: 'Your name', type: 'text', required: true, minLength: 2, pattern: '[A-Za-z ]+' },
    { name: 'email', label: 'Email', type: 'email', required: true },
    { name: 'people', label: 'Travellers', type: 'number', min: 1, max: 9 },
    { name: 'when', label: 'Departure', type: 'date' },
    {
      name: 'kind',
      label: 'Kind of trip',
      type: 'select',
      required: true,
      options: [
        { label: 'Beach', value: 'beach' },
        { label: 'City', value: 'city' },
      ],
    },
    {
      name: 'extras',
      label: 'Extras',
      type: 'multiselect',
      options: [
        { label: 'Rental car', value: 'car' },
        { label: 'Hotel', value: 'hotel' },
      ],
    },
    { name: 'notes', label: 'Notes', type: 'textarea', maxLength: 50 },
    { name: 'site', label: 'Website', type: 'url' },
    { name: 'agree', label: 'I agree to the terms', type: 'checkbox', required: true },
  ],
};

const gridPayload = {
  title: 'Hotels',
  cards: [
    {
      id: 'azur',
      title: 'Hotel Azur',
      subtitle: 'Nice · 4 stars',
      description: 'Sea view rooms.',
      tags: ['sea'],
      details: 'Breakfast included, 5 minutes from the beach.',
      fields: { price: '120 EUR' },
    },
    { id: 'verde', title: 'Casa Verde', subtitle: 'Lisbon', description: 'A quiet garden hotel.' },
  ],
};

function lastUserContent(env: WebEnv): string {
  const request = env.fake.requests.filter((r) => r.kind === 'chat').at(-1);
  const users = (request?.body.messages ?? []).filter((m) => m.role === 'user');
  return String(users.at(-1)?.content ?? '');
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: components, files, confirmations',
  () => {
    const env = useWebEnv();

    it('validates a form in the page, submits it, and keeps the summary after a reload', async () => {
      const page = await env.newPage();
      await openNewSession(env, page);
      env.fake.enqueue(
        {
          toolCalls: [
            { name: 'render_component', arguments: { component_name: 'form', payload: formPayload } },
          ],
        },
        { text: 'Please fill in the form.' },
      );
      await sendMessage(page, 'Help me plan a trip');
      const form = page.getByTestId('ui-form');
      await form.waitFor();
      await waitForIdle(page);
      await screenshot(page, 'laptop-light-form');

      // Invalid values are refused in the page: nothing reaches the server.
      const chatRequests = env.fake.requests.length;
      // A field shows its problem once it was left.
      await form.getByLabel('Your name').fill('A');
      await form.getByLabel('Your name').press('Tab');
      await waitForText(form.getByTestId('field-error'), 'at least 2 characters');
      await form.getByLabel('Notes').fill('x'.repeat(60));
      await form.getByLabel('Notes').press('Tab');
      await waitForText(form.getByTestId('field-error'), 'at most 50 characters');
      await form.getByLabel('Your name').fill('R2-D2');
      await form.getByLabel('Email').fill('not-an-email');
      await form.getByLabel('Travellers').fill('12');
      await form.getByRole('button', { name: 'Plan my trip' }).click();
      await waitForText(form.getByTestId('field-error'), 'expected format');
      await waitForText(form.getByTestId('field-error'), 'email address');
      await waitForText(form.getByTestId('field-error'), 'at most 9');
      await waitForText(form.getByTestId('field-error'), 'required');
      await waitForText(form.getByTestId('field-error'), 'tick this box');
      expect(await page.getByTestId('form-summary').count()).toBe(0);
      expect(await form.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');

      await form.getByLabel('Your name').fill('Ada Lovelace');
      await form.getByLabel('Email').fill('ada@example.com');
      await form.getByLabel('Travellers').fill('2');
      await form.getByLabel('Departure').fill('2027-05-01');
      await form.getByLabel('Kind of trip').selectOption('city');
      await form.getByLabel('Hotel').check();
      await form.getByLabel('Notes').fill('Window seat');
      await form.getByLabel('I agree to the terms').check();
      expect(await form.getByTestId('field-error').count()).toBe(0);
      expect(env.fake.requests.length).toBe(chatRequests);
      env.fake.enqueue({ text: 'Thanks, Ada: a city trip for two.' });
      await form.getByRole('button', { name: 'Plan my trip' }).click();

      const summary = page.getByTestId('form-summary');
      await waitForText(summary, 'ada@example.com');
      await waitForText(page.getByTestId('assistant-message').last(), 'a city trip for two');
      const sent = JSON.parse(lastUserContent(env)) as { form_id: string; values: Record<string, unknown> };
      expect(sent.form_id).toBe('trip-1');
      expect(sent.values).toMatchObject({
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        people: 2,
        when: '2027-05-01',
        kind: 'city',
        extras: ['hotel'],
        agree: true,
      });

      await page.reload();
      await waitForText(page.getByTestId('form-summary'), 'Ada Lovelace');
      await waitForText(page.getByTestId('form-summary'), 'Hotel');
      expect(await page.getByTestId('ui-form').count()).toBe(0);
      await screenshot(page, 'laptop-light-form-summary');
      await page.close();
    });

    it('shows a card grid whose cards open a details modal that Esc closes', async () => {
      const page = await env.newPage();
      await openNewSession(env, page);
      env.fake.enqueue(
        {
          toolCalls: [
            { name: 'render_component', arguments: { component_name: 'card_grid', payload: gridPayload } },
          ],
        },
        { text: 'Here are two hotels.' },
      );
      await sendMessage(page, 'Find hotels');
      const grid = page.getByTestId('card-grid');
      await waitForText(grid, 'Casa Verde');
      await waitForIdle(page);
      // By keyboard: a card is a button that Enter opens; Esc closes and gives the focus back.
      await grid.getByRole('button', { name: /Hotel Azur/ }).focus();
      await page.keyboard.press('Enter');
      const details = page.getByTestId('card-details');
      await waitForText(details, 'Breakfast included');
      await waitForText(details, '120 EUR');
      await screenshot(page, 'laptop-light-card-modal');
      await page.keyboard.press('Escape');
      await details.waitFor({ state: 'hidden' });
      expect(await page.evaluate(() => document.activeElement?.textContent ?? '')).toContain('Hotel Azur');
      await grid.getByRole('button', { name: /Casa Verde/ }).click();
      await waitForText(page.getByTestId('card-details'), 'A quiet garden hotel.');
      await page.getByRole('button', { name: 'Close', exact: true }).last().click();
      await page.getByTestId('card-details').waitFor({ state: 'hidden' });
      // Still there after a reload, from the tool message's metadata.
      await page.reload();
      await waitForText(page.getByTestId('card-grid'), 'Hotel Azur');
      await page.close();
    });

    it('uploads files picked with the button and dropped on the chat, and sends them', async () => {
      const page = await env.newPage();
      const id = await openNewSession(env, page);
      const chooser = page.waitForEvent('filechooser');
      await page.getByRole('button', { name: 'Attach files' }).click();
      await (await chooser).setFiles({
        name: 'notes.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('Remember the milk.\n'.repeat(2000)),
      });
      await page.locator('[data-testid="upload"][data-state="done"]').waitFor();

      const dropped = await page.evaluateHandle(() => {
        const data = new DataTransfer();
        data.items.add(new File(['Dropped on the chat.'], 'dropped.md', { type: 'text/markdown' }));
        return data;
      });
      const chat = page.getByRole('region', { name: 'Conversation' });
      await chat.dispatchEvent('dragover', { dataTransfer: dropped });
      await page.locator('.drop-overlay').waitFor();
      await screenshot(page, 'laptop-light-drop');
      await chat.dispatchEvent('drop', { dataTransfer: dropped });
      await page.locator('.drop-overlay').waitFor({ state: 'detached' });
      await page.locator('[data-testid="upload"][data-state="done"]').nth(1).waitFor();
      await screenshot(page, 'laptop-light-uploads');

      // Shift+Enter starts a new line; Enter sends.
      const box = page.getByTestId('composer');
      await box.fill('What is in');
      await box.press('Shift+Enter');
      await box.pressSequentially('these files?');
      expect(await box.inputValue()).toBe('What is in\nthese files?');
      env.fake.enqueue({ text: 'I read your notes.' });
      await box.press('Enter');
      await waitForText(page.getByTestId('user-message').last(), 'dropped.md');
      await waitForText(page.getByTestId('assistant-message').last(), 'I read your notes.');
      const content = lastUserContent(env);
      expect(content).toContain('What is in\nthese files?');
      expect(content).toContain('notes.txt');
      expect(content).toContain('dropped.md');
      const stored = await env.navi.services.files.list(id);
      expect(stored.map((f) => f.name).sort()).toEqual(['dropped.md', 'notes.txt']);
      expect(readFileSync(stored.find((f) => f.name === 'notes.txt')?.path ?? '', 'utf8')).toContain('milk');
      await page.close();
    });

    it('shows published content inline, also after a reload', async () => {
      const page = await env.newPage();
      const id = await openNewSession(env, page);
      const body = new FormData();
      body.append('file', new Blob(['# Trip report\n\nWe saw **whales**.']), 'report.md');
      const uploaded = await fetch(`${env.navi.url}/sessions/${id}/files`, { method: 'POST', body });
      expect(uploaded.status).toBe(201);
      const { name } = (await uploaded.json()) as { name: string };
      env.fake.enqueue(
        { toolCalls: [{ name: 'publish_note', arguments: { name } }] },
        { text: 'Your report is shown above.' },
      );
      await sendMessage(page, 'Show my trip report');
      const published = page.getByTestId('published');
      await waitForText(published.locator('h1'), 'Trip report');
      expect(await published.locator('strong').textContent()).toBe('whales');
      expect(await published.getByTestId('published-caption').textContent()).toBe('Our trip');
      await waitForIdle(page);
      await screenshot(page, 'laptop-light-published');
      await page.reload();
      await waitForText(page.getByTestId('published').locator('h1'), 'Trip report');
      await page.close();
    });

    it('sends a pasted image as base64 with the message', async () => {
      const page = await env.newPage();
      await openNewSession(env, page);
      // A 1×1 PNG, pasted as the clipboard's image file.
      const png =
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      await page.getByTestId('composer').focus();
      await page.evaluate((base64) => {
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
        const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
        document.querySelector('[data-testid="composer"]')?.dispatchEvent(event);
      }, png);
      await page.getByTestId('image-preview').waitFor();
      env.fake.enqueue({ text: 'A tiny dot.' });
      await sendMessage(page, 'What is this?');
      await waitForText(page.getByTestId('assistant-message').last(), 'A tiny dot.');
      const request = env.fake.requests.filter((r) => r.kind === 'chat').at(-1);
      const user = (request?.body.messages ?? []).filter((m) => m.role === 'user').at(-1);
      expect(user?.images?.[0]).toBe(png);
      expect(await page.locator('[data-testid="user-message"] img').count()).toBe(1);
      await page.close();
    });

    it('asks before a tool that needs approval, and honours approve and deny', async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      expect(new URL(page.url()).hash).toBe('');
      await openNewSession(env, page);
      env.fake.enqueue(
        { toolCalls: [{ name: 'dangerous_op', arguments: { what: 'format the disk' } }] },
        { text: 'Done as you approved.' },
      );
      await sendMessage(page, 'Format the disk');
      const prompt = page.getByTestId('tool-confirm');
      await waitForText(prompt, 'format the disk');
      await screenshot(page, 'laptop-light-confirm');
      await prompt.getByTestId('approve').click();
      await page.locator('[data-testid="tool-card"][data-tool="dangerous_op"][data-status="done"]').waitFor();
      await waitForText(page.getByTestId('assistant-message').last(), 'Done as you approved.');

      env.fake.enqueue(
        { toolCalls: [{ name: 'dangerous_op', arguments: { what: 'delete the backups' } }] },
        { text: 'I did not delete them.' },
      );
      await sendMessage(page, 'Delete the backups');
      await waitForText(page.getByTestId('tool-confirm'), 'delete the backups');
      await page.getByTestId('tool-confirm').getByTestId('deny').click();
      await waitForText(page.getByTestId('assistant-message').last(), 'I did not delete them.');
      const denied = page.locator('[data-testid="tool-card"][data-tool="dangerous_op"]').last();
      expect(await denied.getAttribute('data-status')).toBe('failed');
      expect(await page.getByTestId('tool-confirm').count()).toBe(0);
      await page.close();
    });

    it('an unpaired browser is told how to pair instead of approving; once paired it can', async () => {
      const page = await env.newPage();
      const id = await openNewSession(env, page);
      env.fake.enqueue(
        { toolCalls: [{ name: 'dangerous_op', arguments: { what: 'reboot the router' } }] },
        { text: 'Rebooted.' },
      );
      await sendMessage(page, 'Reboot the router');
      const prompt = page.getByTestId('tool-confirm');
      await waitForText(prompt, 'reboot the router');
      await waitForText(prompt.getByTestId('confirm-needs-pairing'), 'navi pair');
      expect(await prompt.getByTestId('approve').count()).toBe(0);
      await screenshot(page, 'laptop-light-confirm-unpaired');

      // A wrong code is reported, and the question stays open.
      await page.goto(`${env.navi.url}/#pair=0000-0000-0000`);
      await waitForText(page.getByTestId('pairing-problem'), 'not valid');
      await pairPage(env, page);
      await page.goto(`${env.navi.url}/#/sessions/${id}`);
      const paired = page.getByTestId('tool-confirm');
      await waitForText(paired, 'reboot the router');
      await paired.getByTestId('approve').click();
      await waitForText(page.getByTestId('assistant-message').last(), 'Rebooted.');
      const card = page.locator('[data-testid="tool-card"][data-tool="dangerous_op"]').last();
      expect(await card.getAttribute('data-status')).toBe('done');
      await page.close();
    });

    it('works on a phone-sized screen, in dark mode too', async () => {
      const page = await env.newPage(PHONE);
      await openNewSession(env, page);
      env.fake.enqueue(
        {
          toolCalls: [
            { name: 'render_component', arguments: { component_name: 'form', payload: formPayload } },
          ],
        },
        { text: 'Please fill in the **form** below.' },
      );
      await sendMessage(page, 'Plan a trip on my phone');
      await page.getByTestId('ui-form').waitFor();
      await waitForIdle(page);
      await screenshot(page, 'phone-light-form');
      await page.emulateMedia({ colorScheme: 'dark' });
      await screenshot(page, 'phone-dark-form');
      // Nothing may be wider than the screen, before or after the form is sent.
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(await overflow()).toBeLessThanOrEqual(0);
      const form = page.getByTestId('ui-form');
      await form.getByLabel('Your name').fill('Grace Hopper');
      await form.getByLabel('Email').fill('grace.hopper.with.a.rather.long.address@example.com');
      await form.getByLabel('Kind of trip').selectOption('beach');
      await form.getByLabel('I agree to the terms').check();
      env.fake.enqueue({ text: 'A beach trip it is.' });
      await form.getByRole('button', { name: 'Plan my trip' }).click();
      await waitForText(page.getByTestId('assistant-message').last(), 'A beach trip it is.');
      await page.getByTestId('form-summary').scrollIntoViewIfNeeded();
      await screenshot(page, 'phone-dark-form-summary');
      expect(await overflow()).toBeLessThanOrEqual(0);
      await page.close();
    });
  },
);
