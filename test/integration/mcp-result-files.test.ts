/**
 * Files and pictures an MCP server returns, through Navi, from a user-configured server that
 * returns more than it should: the model is shown at most four real pictures in one message
 * after the call, never the SVG posing as a PNG; at most eight files are saved, under safe
 * names; and no image bytes reach the tool_call event or the stored message.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { TINY_PNG } from '../fixtures/pictures-mcp-server.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;
const root = resolve(import.meta.dirname, '../..');

describe('files an MCP server returns', () => {
  const dir = tempDir('mcp-files-');
  let app: NaviWithLlm;

  beforeAll(async () => {
    mkdirSync(join(dir, 'mcp'), { recursive: true });
    writeFileSync(
      join(dir, 'mcp', 'pictures.json'),
      JSON.stringify({
        name: 'pictures',
        command: process.execPath,
        args: ['--import', 'tsx', join(root, 'test/fixtures/pictures-mcp-server.ts')],
        cwd: root,
      }),
    );
    app = await startNaviWithLlm({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: join(dir, 'mcp'),
        SESSION_FILES_DIR: join(dir, 'files'),
      },
    });
    await app.navi.services.mcp?.ready();
  });
  afterAll(() => app?.close());

  it('shows the model four real pictures, saves eight files, and keeps image bytes out of events and storage', async () => {
    const sessionId = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'call-p', name: 'mcp__pictures__pictures', arguments: { views: 5, junk: 10 } }] },
      { text: 'Seen.' },
    );
    const client = await EventClient.connect(app.navi.wsUrl(sessionId));
    client.send({ type: 'message', content: 'look' });
    const events = await client.waitForRunEnd();
    await client.close();

    // The request after the call: the tool's text, then one user message with four pictures.
    const messages = chatRequests(app.fake).at(-1)?.body.messages ?? [];
    const tool = messages.find((m) => m.role === 'tool');
    expect(String(tool?.content)).toMatch(/^\[Saved "view-1\.png" as the session file "view-1\.png"/);
    expect(String(tool?.content)).toContain(
      '[image (image/png) not shown to the model: it is not a PNG, JPEG, GIF or WebP picture]',
    );
    expect(String(tool?.content)).toContain(
      '[image (image/png) not shown to the model: at most 4 images are]',
    );
    const shown = JSON.stringify(messages.at(-1)).split(TINY_PNG).length - 1;
    expect(messages.at(-1)?.role).toBe('user');
    expect(shown).toBe(4);

    // Eight files of the sixteen, none named with the path it asked for.
    const call = events.find((e): e is ToolCallEvent => e.type === 'tool_call');
    const shared = call?.metadata?.shared_files as { name: string }[];
    expect(shared.map((f) => f.name)).toEqual([
      'view-1.png',
      'view-2.png',
      'view-3.png',
      'view-4.png',
      'view-5.png',
      'fake.png',
      'junk-0.bin',
      'junk-1.bin',
    ]);
    expect(readdirSync(join(dir, 'files', sessionId)).sort()).toEqual(shared.map((f) => f.name).sort());
    expect(String(tool?.content)).toContain(
      '[8 more file(s) of the result were not saved: at most 8 are kept from one call]',
    );

    expect(JSON.stringify(call)).not.toContain(TINY_PNG);
    const stored = (await getSession(app.navi, sessionId)).messages;
    expect(JSON.stringify(stored)).not.toContain(TINY_PNG);
    expect(stored.find((m) => m.role === 'tool')?.tool_metadata).toMatchObject({ shared_files: shared });
  });
});
