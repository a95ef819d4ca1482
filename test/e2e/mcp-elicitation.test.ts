/**
 * An MCP server asking the person during a tool call, in a real headless Chromium
 * (docs/mcp.md#elicitation, #sampling): its form drawn inside the call's card by the form
 * component, answered (defaults applied), declined and cancelled; its request to use Navi's model
 * approved (the fake LLM's answer reaches the server, max tokens passed on) and denied. The server
 * is src/mcp/fixtures/asking-server.ts, a real stdio child of Navi.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { chatRequests } from '../support/rest.js';
import {
  MCP_FIXTURE,
  openNewSession,
  pairPage,
  screenshot,
  sendMessage,
  useWebEnv,
  type WebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

function serversDir(): string {
  const dir = join(tempDir('navi-e2e-asking-'), 'servers');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'asking.json'),
    JSON.stringify({
      name: 'asking',
      ...MCP_FIXTURE,
      args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/asking-server.ts')],
    }),
  );
  return dir;
}

const booking = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2 },
    guests: { type: 'integer', title: 'Guests', minimum: 1, maximum: 12, default: 2 },
    area: {
      type: 'string',
      title: 'Area',
      oneOf: [
        { const: 'in', title: 'Inside' },
        { const: 'out', title: 'Terrace' },
      ],
    },
  },
  required: ['name', 'guests'],
};

function lastToolResult(env: WebEnv): string {
  const tools = (chatRequests(env.fake).at(-1)?.body.messages ?? []).filter((m) => m.role === 'tool');
  return String(tools.at(-1)?.content ?? '');
}

async function askForm(env: WebEnv, page: Page, message: string): Promise<void> {
  env.fake.enqueue(
    { toolCalls: [{ name: 'mcp__asking__ask', arguments: { message, schema: booking } }] },
    { text: 'Thanks, done.' },
  );
  await sendMessage(page, 'Book a table');
  await page.getByTestId('elicitation').and(page.locator('[data-state="open"]')).waitFor();
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: an MCP server asks the person',
  () => {
    const env = useWebEnv({ settings: { MCP_SERVERS_DIR: serversDir() } });

    it('draws the server form in the call card, refuses values that do not fit, and sends the answer with defaults', async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      await openNewSession(env, page);
      await askForm(env, page, 'For how many people?');
      const card = page.getByTestId('tool-card').filter({ has: page.getByTestId('elicitation') });
      expect(await card.getAttribute('data-tool')).toBe('mcp__asking__ask');
      const form = card.getByTestId('elicitation');
      await waitForText(form, 'asking');
      await waitForText(form.getByTestId('elicitation-message'), 'For how many people?');
      // The first field has the keyboard: the run waits on the person.
      await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'name', undefined, {
        timeout: 5000,
      });
      expect(await form.getByLabel('Guests').inputValue()).toBe('2');
      await screenshot(page, 'laptop-light-elicitation');

      // The browser checks what it can; the server's check names the field it refused.
      await form.getByLabel('Your name').fill('A');
      await form.getByRole('button', { name: 'Send' }).click();
      await waitForText(form.getByTestId('field-error'), 'at least 2 characters');

      // A whole number is what the server asked for: Navi's check refuses 2.5 and the form opens again.
      await form.getByLabel('Your name').fill('Ada');
      await form.getByLabel('Guests').fill('2.5');
      await form.getByRole('button', { name: 'Send' }).click();
      await waitForText(page.getByTestId('error').last(), 'Guests: must be integer');
      await page.getByTestId('elicitation').and(page.locator('[data-state="open"]')).waitFor();
      await form.getByLabel('Guests').fill('');
      await form.getByLabel('Area').selectOption('out');
      await form.getByRole('button', { name: 'Send' }).click();
      await waitForText(card.getByTestId('elicitation-resolved'), "You answered asking's form.");
      await waitForIdle(page);
      expect(JSON.parse(lastToolResult(env))).toEqual({
        action: 'accept',
        content: { name: 'Ada', guests: 2, area: 'out' },
      });
    });

    it('sends Decline and Cancel to the server, each as a short line in the card', async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      await openNewSession(env, page);
      for (const [button, line, action] of [
        ['elicitation-decline', 'Declined.', 'decline'],
        ['elicitation-cancel', 'Cancelled.', 'cancel'],
      ] as const) {
        await askForm(env, page, `Please ${action}`);
        const form = page.getByTestId('elicitation').and(page.locator('[data-state="open"]'));
        await form.getByTestId(button).click();
        await waitForText(page.getByTestId('elicitation-resolved').last(), line);
        await waitForIdle(page);
        expect(lastToolResult(env)).toBe(JSON.stringify({ action }));
      }
    });

    it("shows what a server asks of Navi's model, and answers approve and deny", async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      await openNewSession(env, page);
      env.fake.enqueue(
        {
          toolCalls: [
            {
              name: 'mcp__asking__sample',
              arguments: { prompt: 'Summarise: tea is good.', max_tokens: 300, system: 'Be brief.' },
            },
          ],
        },
        { text: 'Tea: good.' },
        { text: 'The server has its summary.' },
      );
      await sendMessage(page, 'Summarise through the server');
      const ask = page.getByTestId('sampling-confirm').and(page.locator('[data-state="pending"]'));
      await ask.waitFor();
      await waitForText(ask, 'at most 300 tokens');
      // The fake LLM (ollama here) listens on this machine: the card says the prompt stays on it.
      const backend = ask.getByTestId('sampling-backend');
      await waitForText(backend, 'on this machine');
      expect(await backend.getAttribute('data-location')).toBe('local');
      await waitForText(ask.getByTestId('sampling-system'), 'Be brief.');
      await waitForText(ask.getByTestId('sampling-messages'), 'Summarise: tea is good.');
      await screenshot(page, 'laptop-light-sampling');
      await ask.getByTestId('sampling-approve').click();
      await waitForText(page.getByTestId('assistant-message').last(), 'The server has its summary.');
      const chats = chatRequests(env.fake);
      expect(chats.at(-2)?.body.options?.num_predict).toBe(300);
      expect(JSON.parse(lastToolResult(env))).toMatchObject({
        content: { type: 'text', text: 'Tea: good.' },
      });
      await waitForText(page.getByTestId('sampling-answered'), 'Approved.');

      env.fake.enqueue(
        { toolCalls: [{ name: 'mcp__asking__sample', arguments: { prompt: 'Again', max_tokens: 5 } }] },
        { text: 'Understood.' },
      );
      await sendMessage(page, 'Once more');
      const again = page.getByTestId('sampling-confirm').and(page.locator('[data-state="pending"]'));
      await again.getByTestId('sampling-deny').click();
      await waitForText(page.getByTestId('assistant-message').last(), 'Understood.');
      expect(lastToolResult(env)).toMatch(/Navi refused to sample: the person did not allow it$/);
    });
  },
);
