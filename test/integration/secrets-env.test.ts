/**
 * Navi's secrets never reach the programs its tools start: terminal and code_exec print their
 * whole environment, with the sandbox and without it, and none of the secrets planted in Navi's
 * own environment is there. The values planted here differ from the ones in the settings, so
 * the executor's masking (which knows only the settings' values) cannot hide a leak: what is
 * checked is the environment itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { needsProgram } from '../support/requirements.js';
import { EventClient } from '../support/ws-client.js';

const PLANTED: Record<string, string> = {
  OPENAI_API_KEY: 'sk-planted-in-env-0001',
  NAVI_API_TOKEN: 'planted-navi-token-0002',
  GITHUB_TOKEN: 'ghp_planted_in_env_0003',
};
const SETTINGS_TOKEN = 'settings-navi-token-0004';

type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

const runnable = needsProgram('python3', 'environment of code_exec');
const sandboxable = needsProgram('bwrap', 'environment inside the sandbox');

describe.skipIf(!runnable)('environment of terminal and code_exec', () => {
  let fake: FakeLlm;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    fake = await startFakeLlm();
    // Navi runs in this test's process: plant the secrets where the tools would inherit them.
    for (const [name, value] of Object.entries(PLANTED)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await fake?.close();
  });

  const modes = sandboxable ? (['required', 'off'] as const) : (['off'] as const);
  for (const mode of modes) {
    it(`keeps them out of both with NAVI_SANDBOX=${mode}`, async () => {
      const navi: NaviHandle = await startNavi({
        settings: {
          NAVI_SANDBOX: mode,
          NAVI_API_TOKEN: SETTINGS_TOKEN,
          OPENAI_API_KEY: 'sk-settings-key-0005',
          OLLAMA_HOST: fake.ollamaUrl,
          OLLAMA_DEFAULT_MODEL: 'test-model',
          PROFILES_DIR: profilesDir([plainProfile]),
          DEFAULT_PROFILE: 'plain',
        },
      });
      try {
        const events = await runBoth(navi, fake);
        const calls = events.filter((e): e is ToolCallEvent => e.type === 'tool_call');
        const terminal = calls.find((c) => c.tool === 'terminal');
        const python = calls.find((c) => c.tool === 'code_exec');
        // Both ran and printed an environment: PATH is always passed on.
        expect(terminal).toMatchObject({ success: true, metadata: { sandboxed: mode === 'required' } });
        expect(python).toMatchObject({ success: true, metadata: { sandboxed: mode === 'required' } });
        const asked = events.some((e) => e.type === 'tool_confirm_request' && e.tool === 'terminal');
        expect(asked).toBe(mode === 'off');
        expect(terminal?.result).toMatch(/^PATH=/m);
        expect(python?.result).toContain("'PATH':");
        for (const output of [terminal?.result ?? '', python?.result ?? '']) {
          for (const [name, value] of Object.entries(PLANTED)) {
            expect(output).not.toContain(name);
            expect(output).not.toContain(value);
          }
          expect(output).not.toContain(SETTINGS_TOKEN);
        }
      } finally {
        await navi.close();
      }
    });
  }
});

/** One turn calling terminal `env` and code_exec printing os.environ, approving whatever is asked. */
async function runBoth(navi: NaviHandle, fake: FakeLlm): Promise<ServerEvent[]> {
  const authorization = `Bearer ${SETTINGS_TOKEN}`;
  const res = await fetch(`${navi.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: '{}',
  });
  expect(res.status).toBe(201);
  const { session_id: id } = (await res.json()) as { session_id: string };
  // Without the sandbox both tools need the person's approval: a paired client gives it.
  const cookie = await navi.pair();
  fake.enqueue(
    {
      toolCalls: [
        { name: 'terminal', arguments: { command: 'env' } },
        { name: 'code_exec', arguments: { code: 'import os\nprint(os.environ)' } },
      ],
    },
    { text: 'Done.' },
  );
  const client = await EventClient.connect(navi.wsUrl(id), { headers: { authorization, cookie } });
  try {
    client.socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as ServerEvent;
      if (event.type === 'tool_confirm_request')
        client.send({ type: 'tool_confirm', call_id: event.call_id, approved: true });
    });
    client.send({ type: 'message', content: 'Show me your environment.' });
    return await client.waitForRunEnd(0, 60_000);
  } finally {
    await client.close();
  }
}
