/**
 * navi-3d through Navi: the shipped server starts as its own process, its three tools are
 * offered as mcp__navi_3d__* in group fs, Navi sends it the session's id, and the STL and
 * pictures it returns become files of that session, which the next call can name.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { parseStl } from '../../src/servers/navi-3d/stl.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { needsProgram } from '../support/requirements.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

describe('navi-3d, shipped with Navi', () => {
  const dir = tempDir('navi-3d-');
  let app: NaviWithLlm;

  beforeAll(async () => {
    mkdirSync(join(dir, 'mcp'), { recursive: true });
    app = await startNaviWithLlm({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: join(dir, 'mcp'),
        MCP_SHIPPED_SERVERS: 'true',
      },
    });
    await app.navi.services.mcp?.ready();
  });
  afterEach(() => app.fake.reset());
  afterAll(() => app?.close());

  it('is offered as three tools of group fs', () => {
    const status = app.navi.services.mcp?.status().find((s) => s.name === 'navi-3d');
    expect(status).toMatchObject({ state: 'ready', shipped: true, transport: 'stdio' });
    expect(status?.tools.sort()).toEqual([
      'mcp__navi_3d__compile_scad',
      'mcp__navi_3d__lint_scad',
      'mcp__navi_3d__render_stl',
    ]);
    expect(app.navi.services.tools.get('mcp__navi_3d__compile_scad')?.tool.group).toBe('fs');
  });

  it.skipIf(
    !(needsProgram('openscad', 'navi-3d through Navi') && needsProgram('Xvfb', 'navi-3d through Navi')),
  )('compile_scad saves the STL as a session file, and render_stl pictures it by that name', async () => {
    const sessionId = await app.navi.createSession();
    app.fake.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'mcp__navi_3d__compile_scad', arguments: { code: 'cube(10);', name: 'box' } },
        ],
      },
      {
        toolCalls: [
          { id: 'c2', name: 'mcp__navi_3d__render_stl', arguments: { path: 'box.stl', views: ['top'] } },
        ],
      },
      { text: 'Here is your box.' },
    );
    const client = await EventClient.connect(app.navi.wsUrl(sessionId));
    client.send({ type: 'message', content: 'make a box' });
    const events = await client.waitForRunEnd();
    await client.close();
    const calls = events.filter((e): e is ToolCallEvent => e.type === 'tool_call');
    expect(calls.map((c) => c.success)).toEqual([true, true]);

    const folder = join(dir, 'session_files', sessionId);
    expect(calls[0]!.metadata).toMatchObject({
      shared_files: [{ name: 'box.stl', url: `/sessions/${sessionId}/files/box.stl` }],
    });
    expect(parseStl(readFileSync(join(folder, 'box.stl'))).triangles).toBe(12);
    expect(calls[1]!.metadata).toMatchObject({ shared_files: [{ name: 'box-top.png' }] });
    expect(existsSync(join(folder, 'box-top.png'))).toBe(true);

    // The model read the facts and where the file went.
    const sent = chatRequests(app.fake)[1]?.body.messages?.find((m) => m.role === 'tool');
    expect(String(sent?.content)).toContain('12 triangles');
    expect(String(sent?.content)).toContain('box.stl');
  });
});
