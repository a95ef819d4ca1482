/**
 * The real navi-ui server behind the web client: a form and a table the model asks for through
 * `mcp__navi_ui__render_component` are drawn in a real headless Chromium, the form's answer goes
 * over the WebSocket to the next LLM call, and both are still there after a reload.
 */
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  type WebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const TOOL = 'mcp__navi_ui__render_component';

const form = {
  form_id: 'booking',
  title: 'Book a table',
  fields: [
    { name: 'guests', label: 'Guests', type: 'number', required: true, min: 1, max: 12 },
    { name: 'day', label: 'Day', type: 'date', required: true },
    {
      name: 'area',
      label: 'Area',
      type: 'select',
      options: [
        { label: 'Terrace', value: 'terrace' },
        { label: 'Inside', value: 'inside' },
      ],
    },
  ],
  submit_label: 'Book',
};

// Rows as arrays, as small models often send them: navi-ui turns them into objects.
const table = {
  title: 'Restaurants',
  columns: [
    { key: 'name', label: 'Name' },
    { key: 'rating', label: 'Rating', type: 'number' },
  ],
  rows: [
    ['Tasca', 4.6],
    ['Bica', 4.1],
    ['Alfama Grill', 4.8],
  ],
};

function lastUserContent(env: WebEnv): string {
  const request = env.fake.requests.filter((r) => r.kind === 'chat').at(-1);
  const users = (request?.body.messages ?? []).filter((m) => m.role === 'user');
  return String(users.at(-1)?.content ?? '');
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: navi-ui components', () => {
  const env = useWebEnv({ settings: { MCP_SHIPPED_SERVERS: 'true' } });

  it('draws a form and a table from navi-ui, sends the answer to the model, keeps both after a reload', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue(
      {
        toolCalls: [
          { name: TOOL, arguments: { component_name: 'table', payload: table } },
          { name: TOOL, arguments: { component_name: 'form', payload: form } },
        ],
      },
      { text: 'Pick one and fill in the form.' },
    );
    await sendMessage(page, 'Find me a restaurant');
    const shownTable = page.getByTestId('ui-table');
    await waitForText(shownTable, 'Alfama Grill');
    const booking = page.getByTestId('ui-form');
    await booking.waitFor();
    await waitForIdle(page);
    // What the model read of the table: one sentence, not the rows.
    const toolResults = (
      env.fake.requests.filter((r) => r.kind === 'chat').at(-1)?.body.messages ?? []
    ).filter((m) => m.role === 'tool');
    expect(String(toolResults[0]?.content)).toMatch(
      /^Component 'table' rendered for session .+: the user now sees a table of 3 row\(s\)/,
    );

    await booking.getByLabel('Guests').fill('4');
    await booking.getByLabel('Day').fill('2026-12-24');
    await booking.getByLabel('Area').selectOption('terrace');
    env.fake.enqueue({ text: 'Booked for four on the terrace.' });
    await booking.getByRole('button', { name: 'Book' }).click();
    await waitForText(page.getByTestId('form-summary'), 'Terrace');
    await waitForText(page.getByTestId('assistant-message').last(), 'Booked for four');
    expect(JSON.parse(lastUserContent(env))).toEqual({
      form_id: 'booking',
      values: { guests: 4, day: '2026-12-24', area: 'terrace' },
    });
    await screenshot(page, 'laptop-light-navi-ui');

    await page.reload();
    await waitForText(page.getByTestId('ui-table'), 'Alfama Grill');
    expect(await page.getByTestId('ui-table').getByTestId('table-row').count()).toBe(3);
    await waitForText(page.getByTestId('form-summary'), 'Terrace');
    expect(await page.getByTestId('ui-form').count()).toBe(0);
    await page.close();
  });

  it('shows the answer another tab gave when a form it still showed open is refused', async () => {
    const first = await env.newPage();
    const id = await openNewSession(env, first);
    env.fake.enqueue(
      { toolCalls: [{ name: TOOL, arguments: { component_name: 'form', payload: form } }] },
      { text: 'Fill in the form.' },
    );
    await sendMessage(first, 'Book me a table');
    await first.getByTestId('ui-form').waitFor();
    await waitForIdle(first);
    // A second tab on the same session shows the form open as well.
    const second = await env.newPage();
    await second.goto(`${env.navi.url}/#/sessions/${id}`);
    const stale = second.getByTestId('ui-form');
    await stale.waitFor();

    const booking = first.getByTestId('ui-form');
    await booking.getByLabel('Guests').fill('2');
    await booking.getByLabel('Day').fill('2026-12-31');
    await booking.getByLabel('Area').selectOption('inside');
    env.fake.enqueue({ text: 'Booked for two inside.' });
    await booking.getByRole('button', { name: 'Book' }).click();
    await waitForText(first.getByTestId('assistant-message').last(), 'Booked for two');
    await waitForText(second.getByTestId('assistant-message').last(), 'Booked for two');
    await waitForIdle(second);
    const chats = () => env.fake.requests.filter((r) => r.kind === 'chat').length;
    const before = chats();

    // The second tab answers too; the server keeps the first answer and says so.
    await stale.getByLabel('Guests').fill('7');
    await stale.getByLabel('Day').fill('2027-01-05');
    await stale.getByLabel('Area').selectOption('terrace');
    await stale.getByRole('button', { name: 'Book' }).click();
    await waitForText(second.getByRole('alert'), 'already submitted');
    // It ends up showing what was kept, not the values it sent.
    const summary = second.getByTestId('form-summary');
    await waitForText(summary, 'Inside');
    const shown = await summary.textContent();
    expect(shown).toContain('2026-12-31');
    expect(shown).not.toContain('Terrace');
    expect(shown).not.toContain('2027-01-05');
    expect(chats()).toBe(before);
    await second.close();
    await first.close();
  });
});
