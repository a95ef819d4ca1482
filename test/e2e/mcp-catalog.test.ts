/**
 * The MCP page in a real headless Chromium against the real server: a server's resources and
 * prompts are folded away under their counts, and open to show each resource's address, name
 * and type and each prompt's arguments; a server that offers neither shows no such lists.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { MCP_FIXTURE, PHONE, screenshot, useWebEnv, waitForText } from './web-harness.js';

const catalogDir = join(tempDir('navi-e2e-catalog-'), 'servers');
mkdirSync(catalogDir, { recursive: true });
const catalogServer = join(repoRoot, 'src/mcp/fixtures/catalog-server.ts');
writeFileSync(
  join(catalogDir, 'catalog.json'),
  JSON.stringify({ name: 'catalog', ...MCP_FIXTURE, args: ['--import', 'tsx', catalogServer] }),
);
writeFileSync(join(catalogDir, 'fixture.json'), JSON.stringify({ name: 'fixture', ...MCP_FIXTURE }));

describe.skipIf(!needsProgram('chromium', 'web client e2e'))(
  'web client: resources and prompts on the MCP page',
  () => {
    const env = useWebEnv({ settings: { MCP_SERVERS_DIR: catalogDir } });

    it('shows the counts, and the lists when opened', async () => {
      const page = await env.newPage();
      await page.goto(`${env.navi.url}/#/mcp`);
      const server = (name: string) => page.locator(`[data-testid="mcp-server"][data-server="${name}"]`);
      await server('catalog').and(page.locator('[data-state="ready"]')).waitFor();
      const catalog = server('catalog');

      // Folded by default: the counts only.
      expect(await catalog.getByTestId('mcp-resource-count').textContent()).toBe('8');
      expect(await catalog.getByTestId('mcp-prompt-count').textContent()).toBe('2');
      expect(await catalog.getByTestId('mcp-resource').count()).toBe(0);
      expect(await catalog.getByTestId('mcp-prompt').count()).toBe(0);
      expect(await catalog.getByTestId('mcp-resources-toggle').getAttribute('aria-expanded')).toBe('false');
      // A server with tools only has no such lists.
      await server('fixture').and(page.locator('[data-state="ready"]')).waitFor();
      expect(await server('fixture').getByTestId('mcp-catalog').count()).toBe(0);

      await catalog.getByTestId('mcp-resources-toggle').click();
      expect(await catalog.getByTestId('mcp-resource').count()).toBe(8);
      const picture = catalog.locator('[data-testid="mcp-resource"][data-uri="note://files/pixel.png"]');
      await waitForText(picture, 'pixel.png');
      expect(await picture.textContent()).toContain('image/png');
      expect(await picture.textContent()).toContain('A tiny picture.');
      await waitForText(catalog.locator('[data-uri="note://files/big.txt"]'), 'A large text');

      await catalog.getByTestId('mcp-prompts-toggle').click();
      const summarise = catalog.locator('[data-testid="mcp-prompt"][data-prompt="summarise"]');
      await waitForText(summarise, 'Summarise a text');
      expect(await summarise.getByTestId('mcp-prompt-argument').allTextContents()).toEqual([
        'text',
        'style (optional)',
      ]);
      expect(await catalog.locator('[data-prompt="greet"]').getByTestId('mcp-prompt-argument').count()).toBe(
        0,
      );
      await screenshot(page, 'laptop-mcp-catalog');

      // Folds again, and reads on a phone.
      await catalog.getByTestId('mcp-resources-toggle').click();
      expect(await catalog.getByTestId('mcp-resource').count()).toBe(0);
      await page.setViewportSize(PHONE);
      await screenshot(page, 'phone-mcp-catalog');
      await page.close();
    });
  },
);
