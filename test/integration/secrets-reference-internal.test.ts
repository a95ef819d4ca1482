/**
 * Navi's own records in the vault (the OAuth tokens of MCP servers, tagged MCP_OAUTH_TAG) cannot
 * be used by reference in a tool's arguments: on a real vault, a tool call naming one is refused
 * exactly as for an unknown secret, nothing runs, and the record's token appears nowhere.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { MCP_OAUTH_TAG } from '../../src/protocol/vault.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const TOKEN = 'at-5d1e0c9b7a-navi-own-token';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe("a reference to one of Navi's own vault records", () => {
  const dir = tempDir('navi-secret-ref-internal-');
  let app: NaviWithLlm;
  let oauthId: string;

  beforeAll(async () => {
    app = await startNaviWithLlm({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([{ ...plainProfile, autonomy: 'autonomous' }]),
        DEFAULT_PROFILE: 'plain',
      },
    });
    oauthId = app.navi.services.vault.create(
      {
        name: 'MCP OAuth: docs',
        type: 'api_token',
        tags: [MCP_OAUTH_TAG],
        fields: [
          { name: 'record', value: JSON.stringify({ tokens: { access_token: TOKEN } }), secret: true },
        ],
      },
      { actor: 'navi' },
    ).id;
  });

  afterAll(async () => {
    await app?.close();
  });

  async function run(sessionId: string, content: string): Promise<ServerEvent[]> {
    const client = await EventClient.connect(app.navi.wsUrl(sessionId));
    const res = await fetch(`${app.navi.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    expect(res.status).toBe(200);
    await client.waitFor((e) => e.type === 'stream_end');
    client.socket.close();
    return client.events;
  }

  it('is refused as an unknown secret is, and the tool does not run', async () => {
    const { fake, navi } = app;
    const sessionId = await navi.createSession();
    const leak = join(dir, 'leak.txt');
    fake.reset();
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 't1',
            name: 'terminal',
            arguments: { command: `echo {{secret:${oauthId}.record}} > ${leak}` },
          },
          { id: 't2', name: 'terminal', arguments: { command: `echo {{secret:${UNKNOWN_ID}.record}}` } },
        ],
      },
      { text: 'ok' },
    );
    const events = await run(sessionId, 'use the docs token');
    const tools = fake.requests.at(-1)?.body.messages?.filter((m) => m.role === 'tool') ?? [];
    expect(tools).toHaveLength(2);
    const [own, unknown] = tools.map((t) => String(t.content));
    expect(unknown).toContain(
      `was not run: {{secret:${UNKNOWN_ID}.record}} cannot be used: no secret with id`,
    );
    // The same answer, word for word, but for the id.
    expect(own!.replaceAll(oauthId, UNKNOWN_ID)).toBe(unknown);

    expect(() => readFileSync(leak)).toThrow();
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    for (const request of fake.requests) expect(JSON.stringify(request.body)).not.toContain(TOKEN);
    // Refused before the vault was asked: no use of the record is in its audit log.
    const uses = navi.services.vault.auditLog({ secret_id: oauthId }).filter((e) => e.action === 'use');
    expect(uses).toEqual([]);
  });
});
