/**
 * OAuth of an MCP server from the MCP servers page, in a real headless Chromium against a real
 * Navi and the OAuth test server (docs/mcp.md#oauth): Connect opens the authorisation page in a
 * new tab, Approve there lands on Navi's callback page, the card shows the server running and
 * authorised, the agent's call of the server's tool carries the token (and a refreshed one once
 * the first expired), and Revoke brings Connect back; Deny says access was denied.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHttpServerConfig } from '../support/mcp-oauth-flow.js';
import { tempDir } from '../support/navi.js';
import { type OAuthMcpServer, startOAuthMcpServer, WHOAMI_TEXT } from '../support/oauth-mcp-server.js';
import { needsProgram } from '../support/requirements.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const serversDir = join(tempDir('navi-e2e-oauth-'), 'servers');
const TOOL = 'mcp__oauthy__whoami';

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: MCP OAuth', () => {
  let fixture: OAuthMcpServer;
  // Registered before the environment's own beforeAll, which starts Navi on this folder.
  beforeAll(async () => {
    fixture = await startOAuthMcpServer();
    writeHttpServerConfig(serversDir, 'oauthy', fixture.url);
  });
  const env = useWebEnv({ settings: { MCP_SERVERS_DIR: serversDir } });
  afterAll(async () => {
    await fixture?.close();
  });

  const card = (page: Page) => page.locator('[data-testid="mcp-server"][data-server="oauthy"]');

  async function openMcpPage(page: Page): Promise<void> {
    await page.goto(`${env.navi.url}/#/mcp`);
    await card(page).waitFor();
  }

  /** Presses Connect and resolves to the new tab once the authorisation page shows in it. */
  async function connect(page: Page): Promise<Page> {
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      card(page).getByTestId('mcp-connect').click(),
    ]);
    await popup.getByRole('button', { name: 'Approve' }).waitFor();
    return popup;
  }

  /** Has the agent call the server's tool in a new session; resolves to the tool card's result. */
  async function callTool(page: Page): Promise<string> {
    await openNewSession(env, page);
    env.fake.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] }, { text: 'The server knows you.' });
    await sendMessage(page, 'Who am I on the OAuth server?');
    const tool = page.locator(`[data-testid="tool-card"][data-tool="${TOOL}"]`);
    await tool.and(page.locator('[data-status="done"]')).waitFor();
    await waitForIdle(page);
    await tool.locator('.tool-head').click();
    return (await tool.getByTestId('tool-result').textContent()) ?? '';
  }

  it('connects with Connect and Approve, calls the tool with the token, refreshes it, and revokes', async () => {
    const page = await env.newPage();
    await openMcpPage(page);
    expect(await card(page).getAttribute('data-state')).toBe('needs_auth');
    expect(await card(page).getByTestId('mcp-state').textContent()).toBe('Needs authorisation');
    await screenshot(page, 'laptop-mcp-oauth-connect');

    const popup = await connect(page);
    expect(new URL(popup.url()).origin).toBe(fixture.issuer);
    await page.getByTestId('mcp-auth-waiting').waitFor();
    await popup.getByRole('button', { name: 'Approve' }).click();
    await waitForText(popup.getByTestId('oauth-title'), 'Connected');
    expect(await popup.getByTestId('oauth-message').textContent()).toBe(
      'Navi is connected to oauthy. You can close this tab.',
    );
    expect(popup.url().startsWith(`${env.navi.url}/agents/mcp/oauth/callback?`)).toBe(true);
    await popup.close();

    await card(page).and(page.locator('[data-state="ready"]')).waitFor();
    await waitForText(card(page).getByTestId('mcp-auth-summary'), 'Authorised');
    expect(await card(page).getByTestId('mcp-state').textContent()).toBe('Running');
    expect(await card(page).getByTestId('mcp-connect').count()).toBe(0);
    await screenshot(page, 'laptop-mcp-oauth-authorised');

    // The agent's call reaches the server with the token (the server checked it before answering).
    expect(await callTool(page)).toContain(WHOAMI_TEXT);
    expect(fixture.events.toolCalls.map((c) => c.tool)).toEqual(['whoami']);

    // Once the access token is no longer valid, the next call refreshes it and goes through.
    fixture.expireAccessTokens();
    expect(await callTool(page)).toContain(WHOAMI_TEXT);
    expect(fixture.events.toolCalls).toHaveLength(2);
    expect(
      fixture.events.grants.filter((g) => g.grant_type === 'refresh_token' && g.ok).length,
    ).toBeGreaterThan(0);

    // Revoke asks first, then Connect is back and the authorisation server heard of it.
    await openMcpPage(page);
    await card(page).getByTestId('mcp-revoke').click();
    await page.getByTestId('mcp-revoke-confirm').click();
    await card(page).getByTestId('mcp-connect').waitFor();
    expect(fixture.events.revocations.length).toBeGreaterThan(0);
    expect(await card(page).getByTestId('mcp-revoke').count()).toBe(0);
  });

  it('says access was denied after Deny, and keeps Connect', async () => {
    const page = await env.newPage();
    await openMcpPage(page);
    const popup = await connect(page);
    await popup.getByRole('button', { name: 'Deny' }).click();
    await waitForText(popup.getByTestId('oauth-title'), 'Access was denied');
    expect(await popup.getByTestId('oauth-message').textContent()).toContain('The person denied the request');
    await popup.getByRole('link', { name: "Back to Navi's MCP servers page" }).waitFor();
    await screenshot(popup, 'laptop-mcp-oauth-denied');
    await popup.close();

    await card(page).getByTestId('mcp-auth-problem').waitFor();
    expect(await card(page).getByTestId('mcp-connect').isVisible()).toBe(true);
    expect(await card(page).getAttribute('data-state')).toBe('needs_auth');
  });
});
