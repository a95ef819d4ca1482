/**
 * navi-web through Navi: the shipped server starts as its own process from
 * mcp_servers.shipped/, its three tools are offered as mcp__navi_web__*, and what each returns
 * reaches the LLM's next request — against local search engines and pages, never the internet.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/index.js';
import { type FakePages, startFakePages } from '../support/fake-pages.js';
import { type FakeSearchEngines, startFakeSearchEngines } from '../support/fake-search-engines.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { needsProgram } from '../support/requirements.js';

const hasChromium = needsProgram('chromium', 'navi-web web_view through Navi');

function lastToolMessage(request: RecordedRequest | undefined): string {
  const message = request?.body.messages?.filter((m) => m.role === 'tool').at(-1);
  return typeof message?.content === 'string' ? message.content : '';
}

describe('navi-web, shipped with Navi', () => {
  const dir = tempDir('navi-web-');
  let engines: FakeSearchEngines;
  let pages: FakePages;
  let app: NaviWithLlm;

  beforeAll(async () => {
    engines = await startFakeSearchEngines();
    pages = await startFakePages();
    app = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: join(dir, 'mcp'),
        SESSION_FILES_DIR: join(dir, 'files'),
        MCP_SHIPPED_SERVERS: 'true',
        ...engines.env(),
        BRAVE_API_KEY: engines.braveKey,
        // The test's pages are on loopback: this address only, as a user would allow one host.
        HTTP_ALLOW_PRIVATE: '127.0.0.1',
      },
    });
    await app.navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await app?.close();
    await pages?.close();
    await engines?.close();
  });

  async function callTool(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ sessionId: string; seen: string }> {
    const { fake, navi } = app;
    const created = await fetch(`${navi.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { session_id: sessionId } = (await created.json()) as { session_id: string };
    fake.reset();
    fake.enqueue({ toolCalls: [{ id: 'c1', name, arguments: args }] }, { text: 'Done.' });
    const res = await fetch(`${navi.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'go' }),
    });
    expect(res.status).toBe(200);
    const chats = fake.requests.filter((r) => r.kind === 'chat');
    expect(chats).toHaveLength(2);
    return { sessionId, seen: lastToolMessage(chats[1]) };
  }

  it('starts as a shipped server and offers its three tools in group web', () => {
    const status = app.navi.services.mcp?.server('navi-web');
    expect(status).toMatchObject({ state: 'ready', shipped: true, transport: 'stdio' });
    expect(status?.tools.sort()).toEqual([
      'mcp__navi_web__http_request',
      'mcp__navi_web__web_search',
      'mcp__navi_web__web_view',
    ]);
    expect(app.navi.services.tools.get('mcp__navi_web__web_search')?.tool.group).toBe('web');
    // The one key it needs reaches it, and is never shown in its launch line.
    expect(status?.command).toContain('BRAVE_API_KEY=[secret]');
    expect(status?.command).not.toContain(engines.braveKey);
  });

  it('web_search: the results reach the next request, marked as untrusted', async () => {
    const { seen } = await callTool('mcp__navi_web__web_search', { query: 'rust async runtime' });
    expect(seen).toContain('Tokio - An asynchronous Rust runtime');
    expect(seen).toContain('https://tokio.rs/');
    expect(seen).toContain('untrusted');
    expect(engines.requestsTo('searxng')).toHaveLength(1);
  });

  it('web_search: a failing provider is named and the next one answers', async () => {
    engines.setMode('searxng', '429');
    const { seen } = await callTool('mcp__navi_web__web_search', { query: 'rust async runtime' });
    engines.reset();
    expect(seen).toMatch(/searxng/i);
    expect(seen).toMatch(/429|rate/i);
    expect(seen).toMatch(/duckduckgo/i);
  });

  it('http_request: status and body reach the next request', async () => {
    const { seen } = await callTool('mcp__navi_web__http_request', {
      method: 'GET',
      url: `http://127.0.0.1:${pages.port}/plain`,
    });
    expect(seen).toContain('200');
    expect(seen).toContain('The browser is still working for the next call.');
  });

  it('http_request: an address the policy does not admit is refused, and the model is told why', async () => {
    const { seen } = await callTool('mcp__navi_web__http_request', {
      url: 'http://169.254.169.254/latest/meta-data/',
    });
    expect(seen).toContain('169.254.169.254');
    expect(seen).toContain('HTTP_ALLOW_PRIVATE');
  });

  it.skipIf(!hasChromium)(
    'web_view: the readable page reaches the next request; a screenshot becomes a session file',
    async () => {
      const { sessionId, seen } = await callTool('mcp__navi_web__web_view', {
        url: `http://127.0.0.1:${pages.port}/article`,
        screenshot: true,
      });
      expect(seen).toContain('How Lighthouses Kept Their Lamps Burning');
      expect(seen).toContain('untrusted');
      const files = readdirSync(join(dir, 'files', sessionId));
      expect(files.some((f) => /^web_view-.*\.png$/.test(f))).toBe(true);
      expect(seen).toContain('session file');
      expect(pages.canaryHits).toEqual([]);
    },
  );
});
