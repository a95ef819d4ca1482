/**
 * The settings' insight pages in a real headless Chromium against the real server: the Memory
 * page shows the summary and the facts seeded through the store, edits one (and shows the
 * server's sentence when the new key is another fact's), finds facts by search and category, and
 * forgets one after a confirmation; the Tools page shows a broken tool file's error with its file
 * after "Reload tools", and what each profile allows and asks about; the MCP page shows each
 * server's state and tools, restarts one and approves a server Navi wrote.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import {
  MCP_FIXTURE,
  mcpServersDir,
  PHONE,
  pairPage,
  screenshot,
  useWebEnv,
  waitForText,
} from './web-harness.js';

const mcpDir = mcpServersDir('navi-e2e-mcp-');
writeFileSync(join(mcpDir, 'broken.json'), '{"name": "broken", "command": ');

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: memory, tools and MCP pages',
  () => {
    const env = useWebEnv({ settings: { MCP_SERVERS_DIR: mcpDir } });

    it('shows what Navi remembers, edits a fact, reports a clash, searches and forgets', async () => {
      const store = env.navi.services.memory?.store;
      if (!store) throw new Error('memory is not enabled');
      await store.upsert({ category: 'food', key: 'favourite_drink', value: 'green tea' });
      await store.upsert({ category: 'work', key: 'employer', value: 'Acme Rockets' });
      await store.upsert({ category: 'work', key: 'role', value: 'engineer' });
      await store.upsert({ category: 'home', key: 'city', value: 'Lisbon' });
      await store.setSummary('The person drinks green tea and builds rockets in Lisbon.');

      const page = await env.newPage();
      await page.goto(`${env.navi.url}/#/settings`);
      await page.getByTestId('open-memory').click();
      await page.waitForURL(/#\/memory$/);
      await waitForText(page.getByTestId('memory-summary'), 'builds rockets in Lisbon');
      const fact = (key: string) => page.locator(`[data-testid="fact"][data-key="${key}"]`);
      await fact('favourite_drink').waitFor();
      expect(await page.getByTestId('fact').count()).toBe(4);
      expect(await page.getByTestId('memory-range').textContent()).toBe('1–4 of 4');
      await screenshot(page, 'laptop-memory-page');

      // Edit a value.
      await fact('favourite_drink').getByTestId('fact-edit').click();
      await fact('favourite_drink').getByTestId('fact-value').fill('black coffee');
      await fact('favourite_drink').getByTestId('fact-save').click();
      await waitForText(fact('favourite_drink').getByTestId('fact-shown-value'), 'black coffee');
      expect((await store.getByKey('food', 'favourite_drink'))?.value).toBe('black coffee');

      // An edit that changes nothing is not sent.
      await fact('city').getByTestId('fact-edit').click();
      await fact('city').getByTestId('fact-save').click();
      await waitForText(fact('city').getByTestId('fact-problem'), 'Nothing was changed');
      await fact('city').getByRole('button', { name: 'Cancel' }).click();

      // A key another fact of the category has: the server's sentence, and what to do.
      await fact('role').getByTestId('fact-edit').click();
      await fact('role').getByTestId('fact-key').fill('employer');
      await fact('role').getByTestId('fact-save').click();
      const clash = fact('role').getByTestId('fact-problem');
      await waitForText(clash, 'Another fact already uses that category and key: work/employer');
      expect(await clash.textContent()).toContain('Choose another key, or forget that fact first.');
      expect((await store.getByKey('work', 'role'))?.value).toBe('engineer');
      await screenshot(page, 'laptop-memory-conflict');
      await fact('role').getByRole('button', { name: 'Cancel' }).click();

      // By category, then by search.
      await page.getByTestId('memory-category').selectOption('work');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="fact"]').length === 2);
      await page.getByTestId('memory-search').fill('rockets');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="fact"]').length === 1);
      await fact('employer').waitFor();
      await page.getByTestId('memory-search').fill('');
      await page.getByTestId('memory-category').selectOption('');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="fact"]').length === 4);

      // Forget, after saying so; cancelling keeps the fact.
      await fact('city').getByTestId('fact-forget').click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect(await store.getByKey('home', 'city')).toBeDefined();
      await fact('city').getByTestId('fact-forget').click();
      await page.getByTestId('confirm-forget').click();
      await fact('city').waitFor({ state: 'detached' });
      expect(await store.getByKey('home', 'city')).toBeUndefined();
      await waitForText(page.getByTestId('memory-range'), '1–3 of 3');

      // The page survives a reload at its own address, and reads on a phone.
      await page.setViewportSize(PHONE);
      await page.reload();
      await fact('employer').waitFor();
      await screenshot(page, 'phone-memory-page');
      await page.close();
    });

    it("shows a broken tool file's error with its file, and each profile's policy", async () => {
      const toolsDir = env.navi.services.settings.TOOLS_DIR;
      mkdirSync(toolsDir, { recursive: true });
      writeFileSync(
        join(toolsDir, 'broken_tool.ts'),
        "export const name = 'broken_tool';\nexport const description = 'Unclosed.';\nexport const parameters = { type: 'object' ;\n",
      );

      const page = await env.newPage();
      await pairPage(env, page);
      await page.goto(`${env.navi.url}/#/settings`);
      await page.getByTestId('open-tools').click();
      await page.waitForURL(/#\/tools$/);
      const row = (name: string) => page.locator(`[data-testid="tool-row"][data-tool="${name}"]`);
      await row('dangerous_op').waitFor();

      await page.getByTestId('tools-reload').click();
      const error = page.getByTestId('tool-error').filter({ hasText: 'broken_tool.ts' });
      await error.waitFor();
      expect(await error.textContent()).toContain('Tool file');
      expect((await error.locator('pre').textContent())?.length).toBeGreaterThan(10);
      await screenshot(page, 'laptop-tools-page');

      // The tester profile asks before dangerous_op; the planner profile does not.
      await page.getByTestId('tools-profile').selectOption('tester');
      await page.locator('[data-tool="dangerous_op"][data-confirm="always"]').waitFor();
      expect(await row('dangerous_op').getAttribute('data-allowed')).toBe('true');
      await waitForText(row('dangerous_op').getByTestId('tool-policy'), 'Asks you before every call');
      await page.getByTestId('tools-profile').selectOption('planner');
      await page.locator('[data-tool="dangerous_op"][data-confirm="never"]').waitFor();

      // MCP tools say their server; the filters narrow the list.
      await page.getByTestId('tools-source').selectOption('mcp');
      await page.getByTestId('tools-search').fill('process id');
      await row('mcp__fixture__info').waitFor();
      expect(await row('mcp__fixture__info').textContent()).toContain('MCP server fixture');
      expect(await page.getByTestId('tool-row').count()).toBe(1);
      await page.close();
    });

    it("shows each MCP server's state, restarts one and approves the one Navi wrote", async () => {
      const page = await env.newPage();
      await pairPage(env, page);
      await page.goto(`${env.navi.url}/#/settings`);
      await page.getByTestId('open-mcp').click();
      await page.waitForURL(/#\/mcp$/);
      const server = (name: string) => page.locator(`[data-testid="mcp-server"][data-server="${name}"]`);

      await server('fixture').and(page.locator('[data-state="ready"]')).waitFor();
      expect(await server('fixture').getByTestId('mcp-state').textContent()).toBe('Running');
      const tools = Number(
        await server('fixture')
          .getByTestId('mcp-tool-count')
          .textContent()
          .then((t) => t?.trim().split(/\s/)[0]),
      );
      expect(tools).toBeGreaterThan(0);
      expect(await server('helper').getAttribute('data-state')).toBe('awaiting_approval');
      expect(await server('helper').getByTestId('mcp-restart').count()).toBe(0);
      await waitForText(page.getByTestId('mcp-config-error'), 'broken.json');
      await screenshot(page, 'laptop-mcp-page');

      // Restart: a new process.
      const before = env.navi.services.mcp?.server('fixture')?.pid;
      await server('fixture').getByTestId('mcp-restart').click();
      await page.waitForFunction((pid) => {
        const el = document.querySelector('[data-testid="mcp-server"][data-server="fixture"]');
        return el?.getAttribute('data-state') === 'ready' && !el.textContent?.includes(String(pid));
      }, before);
      expect(env.navi.services.mcp?.server('fixture')?.pid).not.toBe(before);

      // Approve: the exact command is shown first.
      await server('helper').getByTestId('mcp-approve').click();
      await waitForText(page.getByRole('dialog'), 'fixture-server.ts');
      await page.getByTestId('mcp-approve-confirm').click();
      await server('helper').and(page.locator('[data-state="ready"]')).waitFor();
      expect(env.navi.services.mcp?.server('helper')?.state).toBe('ready');
      await page.close();
    });

    it('tells a browser that is not paired how to approve a server', async () => {
      writeFileSync(
        join(mcpDir, 'other.json'),
        JSON.stringify({ name: 'other', ...MCP_FIXTURE, enabled: false, created_by: 'agent' }),
      );
      await env.navi.services.mcp?.reload();
      const page = await env.newPage();
      await page.goto(`${env.navi.url}/#/mcp`);
      const other = page.locator('[data-testid="mcp-server"][data-server="other"]');
      await other.waitFor();
      await waitForText(other, 'navi pair');
      expect(await other.getByTestId('mcp-approve').isDisabled()).toBe(true);
      expect(env.navi.services.mcp?.server('other')?.state).toBe('awaiting_approval');
      await page.close();
    });
  },
);
