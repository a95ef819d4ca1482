/**
 * share_file and content_publish inside a running Navi: the LLM shares a local file, publishes
 * it, the user downloads it by the link, and the publication is still on the tool message after
 * the server restarts on the same database.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

interface StoredMessage {
  role: string;
  name?: string;
  content: string | null;
  published?: Record<string, unknown>;
}

describe('share_file and content_publish in a running Navi', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  const dir = tempDir('navi-share-int-');
  const work = join(dir, 'work');
  const settings = () => ({
    DEFAULT_LLM_BACKEND: 'ollama',
    OLLAMA_HOST: fake.ollamaUrl,
    PROFILES_DIR: profilesDir([plainProfile]),
    DEFAULT_PROFILE: 'plain',
    FS_ALLOWED_PATHS: work,
  });

  beforeAll(async () => {
    mkdirSync(work);
    writeFileSync(join(work, 'report.md'), '# Quarterly report\n');
    fake = await startFakeLlm();
    navi = await startNavi({ dir, settings: settings() });
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  async function published(sessionId: string): Promise<StoredMessage | undefined> {
    const res = await fetch(`${navi.url}/sessions/${sessionId}`);
    const body = (await res.json()) as { messages: StoredMessage[] };
    return body.messages.find((m) => m.role === 'tool' && m.name === 'content_publish');
  }

  it('shares, publishes, serves the file and keeps the publication across a restart', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ name: 'share_file', arguments: { path: join(work, 'report.md') } }] },
      { toolCalls: [{ name: 'content_publish', arguments: { name: 'report.md', title: 'Report' } }] },
      { text: 'Here it is.' },
    );
    const res = await fetch(`${navi.url}/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'show me the report' }),
    });
    const reply = (await res.json()) as {
      content: string;
      tool_calls: { tool: string; success: boolean; result: string }[];
    };
    expect(reply.content).toBe('Here it is.');
    expect(reply.tool_calls.map((c) => [c.tool, c.success])).toEqual([
      ['share_file', true],
      ['content_publish', true],
    ]);
    expect(reply.tool_calls[0]?.result).toContain(`Download link: /sessions/${id}/files/report.md`);

    const download = await fetch(`${navi.url}/sessions/${id}/files/report.md`);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('# Quarterly report\n');

    const expected = {
      name: 'report.md',
      url: `/sessions/${id}/files/report.md`,
      kind: 'markdown',
      title: 'Report',
    };
    expect((await published(id))?.published).toMatchObject(expected);

    await navi.close();
    navi = await startNavi({ dir, settings: settings() });
    expect((await published(id))?.published).toMatchObject(expected);
  });

  it('refuses to share a file outside FS_ALLOWED_PATHS, naming the allowed folder', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { toolCalls: [{ name: 'share_file', arguments: { path: '/etc/passwd' } }] },
      { text: 'No.' },
    );
    const res = await fetch(`${navi.url}/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'share /etc/passwd' }),
    });
    const reply = (await res.json()) as { tool_calls: { success: boolean; result: string }[] };
    expect(reply.tool_calls[0]).toMatchObject({ success: false });
    expect(reply.tool_calls[0]?.result).toContain(`which is outside the allowed folders (${work})`);
  });
});
