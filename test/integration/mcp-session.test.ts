/**
 * MCP tools inside real agent runs (docs/mcp.md#the-navi-ui-envelope): the navi-ui envelope ends up as
 * `metadata.ui_component` on the stored tool message with only `output` sent to the LLM, an
 * `Error:` output is a failure, and a server killed mid-session answers "down" and then comes
 * back by itself. The server is the MCP test fixture, started by Navi as a child process.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionDetail } from '../../src/protocol/rest.js';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

function lastToolMessage(request: RecordedRequest | undefined): string | undefined {
  const message = request?.body.messages?.filter((m) => m.role === 'tool').at(-1);
  return typeof message?.content === 'string' ? message.content : undefined;
}

/** Polls until `check` holds; `limitMs` bounds a wait for a restart, it is no timing claim. */
async function until(what: string, check: () => boolean, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('MCP tools in agent runs', () => {
  const dir = tempDir('navi-mcp-session-');
  const serversDir = join(dir, 'servers');
  // While this file exists the fixture exits at start-up, so a killed server stays down.
  const refuseFile = join(dir, 'refuse-start');
  let fake: FakeLlm;
  let navi: NaviHandle;

  beforeAll(async () => {
    mkdirSync(serversDir);
    writeFileSync(
      join(serversDir, 'navi-ui.json'),
      JSON.stringify({
        name: 'navi-ui',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src', 'mcp', 'fixtures', 'fixture-server.ts')],
        cwd: repoRoot,
        env: { FIXTURE_REFUSE_FILE: refuseFile },
      }),
    );
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_BASE_URL: fake.openaiUrl,
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: serversDir,
      },
    });
    await navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await navi?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function say(sessionId: string, content: string): Promise<{ tool_calls: unknown[] }> {
    const res = await fetch(`${navi.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { tool_calls: unknown[] };
  }

  function scriptCall(id: string, name: string, args: Record<string, unknown>): void {
    fake.enqueue({ toolCalls: [{ id, name, arguments: args }] }, { text: 'Done.' });
  }

  const chat = () => fake.requests.filter((r) => r.kind === 'chat');

  it('stores the navi-ui component on the tool message and sends only its output to the LLM', async () => {
    const id = await navi.createSession();
    const payload = { cards: [{ title: 'Alpha' }] };
    scriptCall('call-ui', 'mcp__navi_ui__render_component', { component_name: 'card_grid', payload });
    await say(id, 'Show me a card.');
    expect(lastToolMessage(chat().at(-1))).toBe("Component 'card_grid' rendered");

    scriptCall('call-bad', 'mcp__navi_ui__render_component', { component_name: 'nope' });
    await say(id, 'Show me something unknown.');
    expect(lastToolMessage(chat().at(-1))).toContain('Error: unknown component nope');

    const session = (await (await fetch(`${navi.url}/sessions/${id}`)).json()) as SessionDetail;
    const tools = session.messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(2);
    expect(tools[0]).toMatchObject({ success: true, ui_component: { component: 'card_grid', payload } });
    expect(tools[0]?.content).toBe("Component 'card_grid' rendered");
    expect(tools[1]).toMatchObject({ success: false });
    expect(tools[1]).not.toHaveProperty('ui_component');
  });

  it('answers "down" for a server killed mid-session, then uses it again once it is back', async () => {
    const mcp = navi.services.mcp;
    if (!mcp) throw new Error('Navi has no MCP manager');
    const id = await navi.createSession();
    const pid = mcp.server('navi-ui')?.pid as number;
    expect(pid).toBeTypeOf('number');
    writeFileSync(refuseFile, '');
    process.kill(pid, 'SIGKILL');
    await until('navi-ui down', () => mcp.server('navi-ui')?.state === 'down');
    expect(mcp.server('navi-ui')?.last_error).toMatch(/^process (killed by SIGKILL|exited with code 4)/);

    scriptCall('call-down', 'mcp__navi_ui__info', {});
    await say(id, 'Which process are you?');
    // Down, or between two failing restart attempts: either way the model is told why.
    expect(lastToolMessage(chat().at(-1))).toMatch(
      /^MCP server navi-ui is (down \(.+\); restarting in \d+s|\(re\)starting \(last error: .+\); try again shortly)$/,
    );

    rmSync(refuseFile);
    await until('navi-ui back', () => mcp.server('navi-ui')?.state === 'ready');
    const back = mcp.server('navi-ui');
    expect(back?.restarts).toBeGreaterThanOrEqual(1);
    scriptCall('call-back', 'mcp__navi_ui__info', {});
    await say(id, 'And now?');
    expect(lastToolMessage(chat().at(-1))).toBe(String(back?.pid));
  });
});
